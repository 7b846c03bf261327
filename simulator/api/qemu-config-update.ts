// PUT (synchronous) and POST (asynchronous, a qmconfig task) /nodes/{node}/qemu/{vmid}/config,
// following qemu-server's update_vm_api: delete/revert list checks, drive and permission checks,
// then under the config lock the digest and lock checks (answered at once), and the update
// itself: changes go to [PENDING] and are applied now (stopped VM) or hotplugged (running VM).
import { perm } from '../access/permissions.ts';
import type { Guest } from '../cluster/cluster-state.ts';
import { configDigest } from '../cluster/config-file.ts';
import { isQemuDriveKey, parseProps } from '../cluster/guest-config.ts';
import { applyStaged, revertPending, stageDelete, stageValue } from '../cluster/pending.ts';
import { spawnTask, TaskLog, WorkerDie } from '../cluster/tasks.ts';
import { removeVolume } from '../cluster/volumes.ts';
import { splitList } from '../schema/formats.ts';
import { dieError, paramError } from '../schema/pve-error.ts';
import {
  QEMU_UPDATE_ASYNC_SCHEMA,
  QEMU_UPDATE_SCHEMA,
  qemuOptionExists,
} from '../schema/qemu-config-schema.ts';
import { checkDrives } from './create-vm-drives.ts';
import { createDisks, encryptPassword, uniqueTags } from './create-vm-task.ts';
import {
  asStrings,
  checkProtection,
  extract,
  loadGuest,
  lockError,
  refuseRootOnly,
  requestNode,
} from './guest-helpers.ts';
import type { HandlerContext, Route } from './handler-context.ts';
import { printNet } from './net-config.ts';
import { checkVmOptionPerms } from './qemu-option-perms.ts';

interface Update {
  readonly params: Record<string, string>;
  readonly deletes: string[];
  readonly reverts: string[];
  readonly force: boolean;
  readonly summary: string;
}

/** Everything update_vm_api checks before it takes the config lock. */
function prepare(ctx: HandlerContext): Update {
  const params = asStrings(ctx.params);
  for (const key of ['node', 'vmid', 'digest', 'background_delay', 'import-working-storage'])
    extract(params, key);
  const summary = Object.keys(params)
    .sort()
    .map((key) => `-${key} ${key === 'cipassword' ? '<hidden>' : params[key]}`)
    .join(' ');
  refuseRootOnly(ctx, 'skiplock');
  extract(params, 'skiplock');
  const deleteStr = extract(params, 'delete');
  const revertStr = extract(params, 'revert');
  const force = extract(params, 'force') === '1';
  if (!deleteStr && !revertStr && Object.keys(params).length === 0)
    throw dieError('no options specified');
  if (params.cdrom !== undefined)
    params.ide2 = /media=/.test(params.cdrom)
      ? params.cdrom
      : `${extract(params, 'cdrom')},media=cdrom`;
  delete params.cdrom;
  const reverts = splitList(revertStr ?? '');
  for (const key of reverts) {
    if (!qemuOptionExists(key)) throw paramError({ revert: `unknown option '${key}'` });
    if (params[key] !== undefined)
      throw paramError({ delete: `you can't use '-${key}' and -revert ${key}' at the same time` });
  }
  const deletes = splitList(deleteStr ?? '').map((key) => (key === 'cdrom' ? 'ide2' : key));
  for (const key of deletes) {
    if (params[key] !== undefined)
      throw paramError({ delete: `you can't use '-${key}' and -delete ${key}' at the same time` });
    if (reverts.includes(key))
      throw paramError({
        revert: `you can't use '-delete ${key}' and -revert ${key}' at the same time`,
      });
    if (!qemuOptionExists(key)) throw paramError({ delete: `unknown option '${key}'` });
  }
  checkDrives(ctx.state, ctx.identity, params, undefined);
  for (const key of Object.keys(params).filter((k) => /^net\d+$/.test(k)))
    params[key] = printNet(params[key] ?? '');
  checkVmOptionPerms(ctx.identity, Number(ctx.params.vmid), deletes);
  checkVmOptionPerms(ctx.identity, Number(ctx.params.vmid), Object.keys(params));
  return { params, deletes, reverts, force, summary };
}

/** The update itself (the worker): pending section first, then apply or hotplug. */
function applyUpdate(ctx: HandlerContext, guest: Guest, update: Update, log: TaskLog): void {
  log.info(`update VM ${guest.vmid}: ${update.summary}`);
  for (const key of update.reverts) revertPending(guest, key);
  const current = { ...guest.config, ...guest.pending };
  for (const key of update.deletes) {
    const value = current[key];
    if (value === undefined) {
      log.warn(`cannot delete '${key}' - not set in current configuration!`);
      continue;
    }
    if (/^unused\d+$/.test(key)) {
      checkProtection(guest, `can't remove unused disk '${value}'`);
      removeVolume(ctx.state, guest.node, value);
      delete guest.config[key];
    } else if (key === 'tags') {
      delete guest.config.tags;
    } else {
      if (isQemuDriveKey(key)) checkProtection(guest, `can't remove drive '${key}'`);
      stageDelete(guest, key, update.force);
    }
  }
  const plans = checkDrives(ctx.state, ctx.identity, update.params, undefined);
  const node = requestNode(ctx);
  const disks = createDisks(
    ctx.state,
    { vmid: guest.vmid, node, drives: plans, now: ctx.now },
    log,
    [],
  );
  for (const [key, raw] of Object.entries(update.params)) {
    let value = disks[key] ?? raw;
    if (key === 'tags') value = uniqueTags(value);
    if (key === 'cipassword') {
      // set directly, never pending; crypted unless the guest is Windows
      guest.config.cipassword = /^win/.test(current.ostype ?? '') ? value : encryptPassword(value);
      continue;
    }
    if (key === 'boot') {
      const devices = (parseProps(value, 'legacy').order ?? '').split(';').filter(Boolean);
      for (const dev of devices) {
        if (
          (current[dev] === undefined && update.params[dev] === undefined) ||
          update.deletes.includes(dev)
        ) {
          throw new WorkerDie(`invalid bootorder: device '${dev}' does not exist'`);
        }
      }
    }
    stageValue(guest, key, value);
  }
  applyStaged(guest, (volid) => removeVolume(ctx.state, guest.node, volid));
}

/** Under the config lock: digest, lock and balloon checks raise at once (500). */
function lockedChecks(ctx: HandlerContext, guest: Guest, update: Update): void {
  const digest = ctx.params.digest === undefined ? undefined : String(ctx.params.digest);
  if (digest && digest !== configDigest(guest))
    throw dieError('checksum mismatch (file change by other user?)');
  const locked = lockError(guest);
  const resumesFromDisk = update.deletes.includes('vmstate') && guest.config.lock === 'suspended';
  if (locked && !resumesFromDisk) throw dieError(locked);
  if (update.params.memory !== undefined || update.params.balloon !== undefined) {
    const memory = update.params.memory ?? guest.pending.memory ?? guest.config.memory ?? '512';
    const maxmem = Number(/(\d+)/.exec(memory)?.[1] ?? 512);
    const balloon = Number(
      update.params.balloon ?? guest.pending.balloon ?? guest.config.balloon ?? 0,
    );
    if (balloon && balloon > maxmem)
      throw dieError('balloon value too large (must be smaller than assigned memory)');
  }
}

function updateSync(ctx: HandlerContext): unknown {
  const update = prepare(ctx);
  const guest = loadGuest(ctx, 'qemu');
  lockedChecks(ctx, guest, update);
  try {
    applyUpdate(ctx, guest, update, new TaskLog());
  } catch (err) {
    if (err instanceof WorkerDie) throw dieError(err.message);
    throw err;
  }
  return null;
}

function updateAsync(ctx: HandlerContext): unknown {
  const update = prepare(ctx);
  const guest = loadGuest(ctx, 'qemu');
  lockedChecks(ctx, guest, update);
  const delay =
    ctx.params.background_delay === undefined ? undefined : Number(ctx.params.background_delay);
  // background_delay: wait up to that long; a task done by then answers null (or its error)
  const waits = delay !== undefined && ctx.taskDurationMs <= delay * 1000;
  const forced = ctx.takeTaskExitStatus();
  const upid = spawnTask(ctx.state, {
    node: requestNode(ctx),
    type: 'qmconfig',
    id: String(guest.vmid),
    user: ctx.identity.tokenId,
    now: ctx.now,
    durationMs: waits ? 0 : ctx.taskDurationMs,
    vmid: guest.vmid,
    ...(forced !== undefined ? { forcedExitStatus: forced } : {}),
    work: (log) => ({ commit: () => applyUpdate(ctx, guest, update, log) }),
  });
  const task = ctx.state.tasks.get(upid);
  // a task still waiting for the guest's lock when the delay is over: the UPID, as PVE answers
  if (!waits || !task?.begun) return upid;
  task.finished = true;
  task.finish();
  const status = task.exitStatus;
  if (status === 'OK' || status.startsWith('WARNINGS')) return null;
  throw dieError(`failed to update VM ${guest.vmid}: ${status}`);
}

const CONFIG_PERMS = perm(
  '/vms/{vmid}',
  [
    'VM.Config.Disk',
    'VM.Config.CDROM',
    'VM.Config.CPU',
    'VM.Config.Memory',
    'VM.Config.Network',
    'VM.Config.HWType',
    'VM.Config.Options',
    'VM.Config.Cloudinit',
  ],
  true,
);

export const QEMU_CONFIG_UPDATE_ROUTES: readonly Route[] = [
  {
    method: 'PUT',
    path: '/nodes/{node}/qemu/{vmid}/config',
    permissions: CONFIG_PERMS,
    schema: QEMU_UPDATE_SCHEMA,
    handle: updateSync,
  },
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/config',
    permissions: CONFIG_PERMS,
    schema: QEMU_UPDATE_ASYNC_SCHEMA,
    handle: updateAsync,
  },
];
