// POST /nodes/{node}/qemu, following qemu-server API2/Qemu.pm create_vm step by step: quorum,
// pool, permissions (VM.PowerMgmt for start=1, then VM.Allocate), drive checks, the cluster-wide
// vmid check, then a qmcreate task whose UPID is returned. With `archive` it restores a backup
// instead (restore-vm.ts, a qmrestore task).
import { dieError, paramError, permError } from '../schema/pve-error.ts';
import { findNode } from '../cluster/cluster-state.ts';
import { checkDrives } from './create-vm-drives.ts';
import { spawnCreateTask } from './create-vm-task.ts';
import { isValidDriveName } from '../schema/formats.ts';
import { ALL_USERS } from '../access/permissions.ts';
import { printNet } from './net-config.ts';
import type { HandlerContext, Route } from './handler-context.ts';
import { QEMU_CREATE_SCHEMA } from '../schema/qemu-create-schema.ts';
import { hasPrivilege } from '../access/tokens.ts';
import { asStrings, extract } from './guest-helpers.ts';
import { checkRestoreArchive, spawnRestoreTask, type RestoreArchive } from './restore-vm.ts';

const perlTrue = (value: string | undefined) =>
  value !== undefined && value !== '' && value !== '0';

function createVm(ctx: HandlerContext): unknown {
  const { state, identity, now } = ctx;
  const params = asStrings(ctx.params);
  const node = findNode(state, extract(params, 'node') ?? '');
  if (!node) throw dieError('node vanished'); // the router only calls us for known, online nodes
  const vmid = Number(extract(params, 'vmid'));
  const archive = extract(params, 'archive');
  const pool = extract(params, 'pool');
  const start = perlTrue(extract(params, 'start'));
  const haManaged = perlTrue(extract(params, 'ha-managed'));
  const storage = extract(params, 'storage');
  const force = perlTrue(extract(params, 'force'));
  const unique = perlTrue(extract(params, 'unique'));
  const liveRestore = perlTrue(extract(params, 'live-restore'));
  // Options the simulator accepts but does not act on.
  for (const key of ['bwlimit', 'import-working-storage']) extract(params, key);

  const online = state.nodes.filter((n) => n.online).length;
  if (online * 2 <= state.nodes.length) throw dieError('cluster not ready - no quorum?');
  if (pool !== undefined && !state.pools.has(pool))
    throw permError(`pool '${pool}' does not exist`);
  const storagePath = `/storage/${storage}`;
  if (storage !== undefined && !hasPrivilege(identity, storagePath, 'Datastore.AllocateSpace')) {
    throw permError(`${storagePath}, Datastore.AllocateSpace`);
  }
  if (haManaged && !hasPrivilege(identity, '/', 'Sys.Console')) throw permError('/, Sys.Console');
  const onVmOrPool = (privilege: string) =>
    hasPrivilege(identity, `/vms/${vmid}`, privilege) ||
    (pool !== undefined && hasPrivilege(identity, `/pool/${pool}`, privilege));
  if (start && !onVmOrPool('VM.PowerMgmt')) throw permError(`/vms/${vmid}, VM.PowerMgmt`);
  // create_vm checks VM.Allocate with noerr and then calls raise_perm_exc() without a path;
  // restoring over an existing VM (force=1, config on this node) needs only VM.Backup.
  const existingHere = state.guests.get(vmid);
  const mayRestoreOver =
    archive !== undefined &&
    force &&
    existingHere?.type === 'qemu' &&
    existingHere.node === node.name &&
    hasPrivilege(identity, `/vms/${vmid}`, 'VM.Backup');
  if (!onVmOrPool('VM.Allocate') && !mayRestoreOver) throw permError();

  let restoreArchive: RestoreArchive | undefined;
  if (archive !== undefined) {
    const conflicting = Object.keys(params).sort().find(isValidDriveName);
    if (conflicting) throw paramError({ [conflicting]: "option conflicts with option 'archive'" });
    if (archive === '-') throw dieError('pipe requires cli environment');
    restoreArchive = checkRestoreArchive(ctx, vmid, archive);
  }

  let drives: ReturnType<typeof checkDrives> = [];
  if (Object.keys(params).length > 0) {
    const cdrom = extract(params, 'cdrom');
    if (cdrom) params.ide2 = /media=/.test(cdrom) ? cdrom : `${cdrom},media=cdrom`;
    drives = checkDrives(state, identity, params, storage);
    if (ctx.strictBridges) checkBridges(params, node.bridges);
    // add_random_macs: NICs without a MAC get one before the config is written
    for (const key of Object.keys(params).filter((k) => /^net\d+$/.test(k)))
      params[key] = printNet(params[key] ?? '');
  }

  if (restoreArchive !== undefined) {
    return spawnRestoreTask(ctx, {
      vmid,
      node,
      archive: restoreArchive,
      params,
      force,
      unique,
      start: start || liveRestore,
      haManaged,
      ...(storage !== undefined ? { storage } : {}),
      ...(pool !== undefined ? { pool } : {}),
      ...(liveRestore ? { live: true } : {}),
    });
  }
  const existing = state.guests.get(vmid);
  if (existing) {
    const kind = existing.type === 'qemu' ? 'VM' : 'CT';
    const reason = `${kind} ${vmid} already exists on node '${existing.node}'`;
    throw dieError(`unable to create VM ${vmid} - ${reason}`);
  }
  const forcedExitStatus = ctx.takeTaskExitStatus();
  return spawnCreateTask(state, {
    vmid,
    node,
    user: identity.tokenId,
    params,
    drives,
    start,
    haManaged,
    now,
    durationMs: ctx.taskDurationMs,
    ...(pool !== undefined ? { pool } : {}),
    ...(forcedExitStatus !== undefined ? { forcedExitStatus } : {}),
  });
}

/** Opt-in (config strictBridges): real PVE only notices a missing bridge when the VM starts. */
function checkBridges(params: Record<string, string>, bridges: readonly string[]): void {
  for (const [key, value] of Object.entries(params)) {
    const bridge = /^net\d+$/.test(key) ? /(?:^|,)bridge=([^,]+)/.exec(value)?.[1] : undefined;
    if (bridge !== undefined && !bridges.includes(bridge)) {
      throw dieError(`bridge '${bridge}' does not exist`);
    }
  }
}

export const CREATE_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/nodes/{node}/qemu',
    permissions: ALL_USERS,
    schema: QEMU_CREATE_SCHEMA,
    handle: createVm,
  },
];
