// Endpoints beyond the core set that clients commonly use around VM creation: the token
// preflight (/access/permissions) and pools.
import { dieError, permError } from '../schema/pve-error.ts';
import { ALL_USERS } from '../access/permissions.ts';
import { guestsSorted } from '../cluster/cluster-state.ts';
import type { HandlerContext, Route } from './handler-context.ts';
import { findToken, hasPrivilege, type Identity } from '../access/tokens.ts';
import { vmResource } from './views.ts';

/** PVE 9 privilege names (pve-access-control $privgroups plus Permissions.Modify). */
const ALL_PRIVILEGES = [
  'Datastore.Allocate',
  'Datastore.AllocateSpace',
  'Datastore.AllocateTemplate',
  'Datastore.Audit',
  'Group.Allocate',
  'Mapping.Audit',
  'Mapping.Modify',
  'Mapping.Use',
  'Permissions.Modify',
  'Pool.Allocate',
  'Pool.Audit',
  'Realm.Allocate',
  'Realm.AllocateUser',
  'SDN.Allocate',
  'SDN.Audit',
  'SDN.Use',
  'Sys.AccessNetwork',
  'Sys.Audit',
  'Sys.Console',
  'Sys.Incoming',
  'Sys.Modify',
  'Sys.PowerMgmt',
  'Sys.Syslog',
  'User.Modify',
  'VM.Allocate',
  'VM.Audit',
  'VM.Backup',
  'VM.Clone',
  'VM.Config.CDROM',
  'VM.Config.CPU',
  'VM.Config.Cloudinit',
  'VM.Config.Disk',
  'VM.Config.HWType',
  'VM.Config.Memory',
  'VM.Config.Network',
  'VM.Config.Options',
  'VM.Console',
  'VM.GuestAgent.Audit',
  'VM.GuestAgent.FileRead',
  'VM.GuestAgent.FileSystemMgmt',
  'VM.GuestAgent.FileWrite',
  'VM.GuestAgent.Unrestricted',
  'VM.Migrate',
  'VM.PowerMgmt',
  'VM.Replicate',
  'VM.Snapshot',
  'VM.Snapshot.Rollback',
];
const TREE_PATHS = [
  '/',
  '/access',
  '/access/groups',
  '/mapping',
  '/nodes',
  '/pool',
  '/sdn',
  '/storage',
  '/vms',
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
  if (poolid !== undefined && !state.pools.has(poolid))
    throw dieError(`pool '${poolid}' does not exist`);
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
              .map((guest) => vmResource(state, guest, true, now)),
          }),
    }));
}

export const EXTRA_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/access/permissions',
    permissions: ALL_USERS,
    schema: {
      path: { type: 'string', optional: true },
      userid: {
        type: 'string',
        optional: true,
        pattern:
          '(?:^(?:[^\\s:/]+)\\@(?:[A-Za-z][A-Za-z0-9\\.\\-_]+)(?:!(?:[A-Za-z][A-Za-z0-9\\.\\-_]+))?$)',
      },
    },
    handle: permissions,
  },
  {
    method: 'GET',
    path: '/pools',
    permissions: ALL_USERS,
    schema: {
      poolid: { type: 'string', optional: true, format: 'pve-poolid' },
      type: {
        type: 'string',
        optional: true,
        enum: ['qemu', 'lxc', 'storage'],
        requires: 'poolid',
      },
    },
    handle: pools,
  },
];
