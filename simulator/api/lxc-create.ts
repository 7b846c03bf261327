// POST /nodes/{node}/lxc (pve-container create_vm; with restore=1 see restore-ct.ts): unprivileged
// by default (a privileged container needs Sys.Modify on /), the vmid unused cluster-wide, VM.Allocate on the
// vmid or pool, the template readable as 'vztmpl' content, the rootfs storage able to hold
// container directories; then a locked placeholder and a vzcreate task (see lxc-create-task.ts).
import { ALL_USERS, check } from '../access/permissions.ts';
import { hasPrivilege } from '../access/tokens.ts';
import { parseVolname, parseVolumeId, storageConfig } from '../cluster/volumes.ts';
import { LXC_CREATE_SCHEMA } from '../schema/lxc-schema.ts';
import { dieError, paramError, permError } from '../schema/pve-error.ts';
import { asStrings, checkQuorum, extract, requestNode } from './guest-helpers.ts';
import type { HandlerContext, Route } from './handler-context.ts';
import { spawnLxcCreateTask } from './lxc-create-task.ts';
import { restoreCt } from './restore-ct.ts';

/** PVE::Cluster::check_vmid_unused: any guest anywhere in the cluster. */
export function checkVmidUnused(ctx: HandlerContext, vmid: number): void {
  const existing = ctx.state.guests.get(vmid);
  if (existing) {
    throw dieError(
      `${existing.type === 'qemu' ? 'VM' : 'CT'} ${vmid} already exists on node '${existing.node}'`,
    );
  }
}

/** check_volume_access for the template, expecting content type 'vztmpl'. */
function checkTemplateAccess(ctx: HandlerContext, ostemplate: string): void {
  const parsed = parseVolumeId(ostemplate);
  if (!parsed)
    throw dieError(
      'Only root can pass arbitrary filesystem paths. at /usr/share/perl5/PVE/Storage.pm line 652.',
    );
  const { vtype } = parseVolname(ctx.state, ostemplate);
  if (vtype !== 'vztmpl')
    throw dieError(`unable to use volume ${ostemplate} - content type needs to be 'vztmpl'`);
  const path = `/storage/${parsed.storeid}`;
  if (hasPrivilege(ctx.identity, path, 'Datastore.Allocate')) return;
  const readable = ['Datastore.AllocateSpace', 'Datastore.Audit'].some((p) =>
    hasPrivilege(ctx.identity, path, p),
  );
  if (!readable) throw permError(`${path}, Datastore.AllocateSpace|Datastore.Audit`);
}

/** check_and_activate_storage: the storage exists, holds rootdir content, the caller may use it. */
export function checkRootdirStorage(ctx: HandlerContext, storeid: string): void {
  const storage = storageConfig(ctx.state, storeid);
  if (!storage.content.includes('rootdir')) {
    throw paramError({ storage: `storage '${storeid}' does not support container directories` });
  }
  check(ctx.identity, `/storage/${storeid}`, ['Datastore.AllocateSpace']);
}

function createCt(ctx: HandlerContext): unknown {
  checkQuorum(ctx);
  const node = requestNode(ctx);
  const params = asStrings(ctx.params);
  for (const key of ['node', 'ignore-unpack-errors', 'bwlimit']) extract(params, key);
  const restore = extract(params, 'restore') === '1';
  const force = extract(params, 'force') === '1';
  const unique = extract(params, 'unique') === '1';
  if (restore) return restoreCt(ctx, node, params, { force, unique });
  const vmid = Number(extract(params, 'vmid'));
  const start = extract(params, 'start') === '1';
  const haManaged = extract(params, 'ha-managed') === '1';
  const unprivileged = (extract(params, 'unprivileged') ?? '1') !== '0';
  if (!unprivileged) check(ctx.identity, '/', ['Sys.Modify']);
  if (haManaged) check(ctx.identity, '/', ['Sys.Console']);
  checkVmidUnused(ctx, vmid);
  const password = extract(params, 'password');
  const sshKeys = extract(params, 'ssh-public-keys');
  if (sshKeys !== undefined && !/^(ssh-|ecdsa-|sk-)\S+ \S+/.test(sshKeys.trim())) {
    throw dieError(`unable to parse ssh key: ${sshKeys.split('\n')[0]}`);
  }
  const pool = extract(params, 'pool');
  if (pool !== undefined && !ctx.state.pools.has(pool))
    throw permError(`pool '${pool}' does not exist`);
  const mayAllocate =
    hasPrivilege(ctx.identity, `/vms/${vmid}`, 'VM.Allocate') ||
    (pool !== undefined && hasPrivilege(ctx.identity, `/pool/${pool}`, 'VM.Allocate'));
  if (!mayAllocate) throw permError();
  const ostemplate = extract(params, 'ostemplate') ?? '';
  const storage = extract(params, 'storage') ?? 'local';
  if (ostemplate === '-') throw dieError('pipe requires cli environment');
  checkTemplateAccess(ctx, ostemplate);
  const mounts = Object.keys(params).filter((key) => key === 'rootfs' || /^mp\d+$/.test(key));
  for (const key of mounts) {
    // a bare size allocates on the default storage
    if (/^\d+(\.\d+)?$/.test(params[key] ?? '')) params[key] = `${storage}:${params[key]}`;
    const volume = (params[key] ?? '').split(',')[0] ?? '';
    if (volume.startsWith('/')) throw dieError('Only root can pass arbitrary filesystem paths.');
    checkRootdirStorage(ctx, volume.split(':')[0] ?? '');
  }
  for (const key of Object.keys(params).filter((k) => /^unused\d+$/.test(k))) delete params[key];
  if (mounts.length > 0 && params.rootfs === undefined) {
    throw dieError("mount points configured, but 'rootfs' not set - aborting");
  }
  if (params.rootfs === undefined) checkRootdirStorage(ctx, storage);
  return spawnLxcCreateTask(ctx, {
    vmid,
    node,
    params,
    ostemplate,
    storage,
    unprivileged,
    start,
    haManaged,
    ...(pool !== undefined ? { pool } : {}),
    ...(password !== undefined ? { password } : {}),
  });
}

export const LXC_CREATE_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/nodes/{node}/lxc',
    permissions: ALL_USERS,
    schema: LXC_CREATE_SCHEMA,
    handle: createCt,
  },
];
