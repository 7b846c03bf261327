// Endpoints beyond the core set that clients commonly use around VM creation: the token
// preflight (/access/permissions), pools, a node's storages and one VM's current status.
import { dieError, permError } from '../schema/pve-error.ts';
import { findNode, guestsSorted, uptimeSeconds } from '../cluster/cluster-state.ts';
import { NODE_PARAM, type HandlerContext, type Route } from './handler-context.ts';
import { findToken, hasPrivilege, type Identity } from '../access/tokens.ts';
import { vmResource } from './views.ts';

/** PVE 9 privilege names (pve-access-control $privgroups plus Permissions.Modify). */
const ALL_PRIVILEGES = [
  'Datastore.Allocate', 'Datastore.AllocateSpace', 'Datastore.AllocateTemplate', 'Datastore.Audit',
  'Group.Allocate', 'Mapping.Audit', 'Mapping.Modify', 'Mapping.Use', 'Permissions.Modify',
  'Pool.Allocate', 'Pool.Audit', 'Realm.Allocate', 'Realm.AllocateUser', 'SDN.Allocate', 'SDN.Audit',
  'SDN.Use', 'Sys.AccessNetwork', 'Sys.Audit', 'Sys.Console', 'Sys.Incoming', 'Sys.Modify',
  'Sys.PowerMgmt', 'Sys.Syslog', 'User.Modify', 'VM.Allocate', 'VM.Audit', 'VM.Backup', 'VM.Clone',
  'VM.Config.CDROM', 'VM.Config.CPU', 'VM.Config.Cloudinit', 'VM.Config.Disk', 'VM.Config.HWType',
  'VM.Config.Memory', 'VM.Config.Network', 'VM.Config.Options', 'VM.Console', 'VM.GuestAgent.Audit',
  'VM.GuestAgent.FileRead', 'VM.GuestAgent.FileSystemMgmt', 'VM.GuestAgent.FileWrite',
  'VM.GuestAgent.Unrestricted', 'VM.Migrate', 'VM.PowerMgmt', 'VM.Replicate', 'VM.Snapshot',
  'VM.Snapshot.Rollback',
];
const TREE_PATHS = [
  '/', '/access', '/access/groups', '/mapping', '/nodes', '/pool', '/sdn', '/storage', '/vms',
];

function privilegesOf(identity: Identity): Record<string, number> {
  const names = ALL_PRIVILEGES.filter((priv) => hasPrivilege(identity, '/', priv));
  return Object.fromEntries(names.map((priv) => [priv, 1])); // 1 = propagated from the ACL on '/'
}

function permissions({ identity, params }: HandlerContext): unknown {
  const userid = params.userid === undefined ? undefined : String(params.userid);
  const target = userid === undefined || userid === identity.tokenId ? identity : findToken(userid);
  // Other users' permissions need Sys.Audit on /access; unknown ids simply have none.
  if (target !== identity && !hasPrivilege(identity, '/access', 'Sys.Audit')) {
    throw permError('/access, Sys.Audit');
  }
  const privs = target ? privilegesOf(target) : {};
  const paths = params.path === undefined ? TREE_PATHS : [String(params.path)];
  return Object.fromEntries(paths.map((path) => [path, privs]));
}

function pools({ state, identity, params, now }: HandlerContext): unknown {
  const poolid = params.poolid === undefined ? undefined : String(params.poolid);
  if (poolid !== undefined && !state.pools.has(poolid)) throw dieError(`pool '${poolid}' does not exist`);
  return [...state.pools.entries()]
    .filter(([id]) => poolid === undefined || id === poolid)
    .filter(([id]) => hasPrivilege(identity, `/pool/${id}`, 'Pool.Audit'))
    .map(([id, pool]) => ({
      poolid: id,
      comment: pool.comment,
      ...(poolid === undefined
        ? {}
        : {
            members: guestsSorted(state)
              .filter((guest) => guest.pool === id)
              .map((guest) => vmResource(guest, findNode(state, guest.node)?.online ?? false, true, now)),
          }),
    }));
}

function nodeStorages({ state, identity, params }: HandlerContext): unknown {
  const wanted = params.content === undefined ? [] : String(params.content).split(/[,;\s]+/).filter(Boolean);
  return state.storages
    .filter((storage) => params.storage === undefined || storage.id === params.storage)
    .filter((storage) => wanted.every((content) => storage.content.includes(content)))
    .filter(
      (storage) =>
        hasPrivilege(identity, `/storage/${storage.id}`, 'Datastore.Audit') ||
        hasPrivilege(identity, `/storage/${storage.id}`, 'Datastore.AllocateSpace'),
    )
    .map((storage) => ({
      storage: storage.id,
      type: storage.type,
      content: storage.content.join(','),
      shared: storage.shared ? 1 : 0,
      active: 1,
      enabled: 1,
      total: storage.maxdisk,
      used: storage.disk,
      avail: storage.maxdisk - storage.disk,
      used_fraction: storage.disk / storage.maxdisk,
    }));
}

function vmStatus({ state, params, now }: HandlerContext): unknown {
  const vmid = Number(params.vmid);
  const guest = state.guests.get(vmid);
  if (!guest || guest.type !== 'qemu' || guest.node !== params.node) {
    throw dieError(`Configuration file 'nodes/${String(params.node)}/qemu-server/${vmid}.conf' does not exist`);
  }
  const running = guest.status === 'running';
  return {
    vmid,
    name: guest.name,
    status: guest.status,
    qmpstatus: guest.status,
    cpus: guest.cpus,
    cpu: guest.cpu,
    maxmem: guest.maxmem,
    mem: guest.mem,
    maxdisk: guest.maxdisk,
    disk: 0,
    netin: guest.netin,
    netout: guest.netout,
    diskread: guest.diskread,
    diskwrite: guest.diskwrite,
    uptime: uptimeSeconds(guest.bootedAt, now),
    ha: { managed: 0 },
    ...(running && guest.pid !== undefined ? { pid: guest.pid } : {}),
    ...(guest.template ? { template: 1 } : {}),
    ...(guest.lock !== undefined ? { lock: guest.lock } : {}),
    ...(guest.tags !== undefined ? { tags: guest.tags } : {}),
  };
}

export const EXTRA_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/access/permissions',
    schema: {
      path: { type: 'string', optional: true },
      userid: {
        type: 'string',
        optional: true,
        pattern: '^[^\\s:/]+@[A-Za-z][A-Za-z0-9.\\-_]+(?:![A-Za-z][A-Za-z0-9.\\-_]+)?$',
      },
    },
    handle: permissions,
  },
  {
    method: 'GET',
    path: '/pools',
    schema: {
      poolid: { type: 'string', optional: true, format: 'pve-poolid' },
      type: { type: 'string', optional: true, enum: ['qemu', 'lxc', 'storage'], requires: 'poolid' },
    },
    handle: pools,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/storage',
    schema: {
      node: NODE_PARAM,
      content: { type: 'string', optional: true },
      enabled: { type: 'boolean', optional: true },
      format: { type: 'boolean', optional: true },
      storage: { type: 'string', optional: true, format: 'pve-storage-id' },
      target: { type: 'string', optional: true, format: 'pve-node' },
    },
    handle: nodeStorages,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/status/current',
    schema: {
      node: NODE_PARAM,
      vmid: { type: 'integer', format: 'pve-vmid', minimum: 100, maximum: 999999999 },
    },
    handle: vmStatus,
  },
];
