// Endpoints beyond the core set that clients commonly use around VM creation: the token
// preflight (/access/permissions) and pools.
import { dieError, permError } from '../schema/pve-error.ts';
import { ALL_USERS } from '../access/permissions.ts';
import { guestsSorted } from '../cluster/cluster-state.ts';
import type { HandlerContext, Route } from './handler-context.ts';
import { aclPaths, USERS } from '../access/acl.ts';
import { findToken, hasPrivilege, type Identity, privilegesOf } from '../access/tokens.ts';
import { vmResource } from './views.ts';

const TREE_PATHS = [
  '/',
  '/access',
  '/access/groups',
  '/nodes',
  '/pool',
  '/sdn',
  '/storage',
  '/vms',
];

/** A token's privileges on `path` as the API shows them: each with its propagate flag, 1 or 0. */
function shownPrivileges(identity: Identity, path: string): Record<string, number> {
  const held = [...privilegesOf(identity, path)].sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(held.map(([priv, propagates]) => [priv, propagates ? 1 : 0]));
}

/** A token, or a user as itself (its own ACLs and groups'), by id; undefined if none such. */
function subjectOf(userid: string): Identity | undefined {
  const token = findToken(userid);
  if (token) return token;
  return USERS.includes(userid)
    ? { tokenId: userid, user: userid, tokenName: '', privsep: false }
    : undefined;
}

/**
 * GET /access/permissions: on `path` (an unknown id holds nothing there), or on every path that
 * matters (get_effective_permissions: the tree's top, every ACL path, every pool member's),
 * leaving out those where the token holds nothing.
 */
function permissions({ state, identity, params }: HandlerContext): unknown {
  const userid = params.userid === undefined ? undefined : String(params.userid);
  const found = userid === undefined || userid === identity.tokenId ? identity : subjectOf(userid);
  // Other users' permissions need Sys.Audit on /access; unknown ids simply have none.
  if (found !== identity && !hasPrivilege(identity, '/access', 'Sys.Audit')) {
    throw permError('/access, Sys.Audit');
  }
  if (!found) return params.path === undefined ? {} : { [String(params.path)]: {} };
  const target = { ...found, poolOf: identity.poolOf };
  if (params.path !== undefined) {
    const path = String(params.path);
    return { [path]: shownPrivileges(target, path) };
  }
  const members = [...state.guests.values()].flatMap((g) => (g.pool ? [`/vms/${g.vmid}`] : []));
  const paths = [...new Set([...TREE_PATHS, ...aclPaths(), ...members])];
  const shown = paths.map((path) => [path, shownPrivileges(target, path)] as const);
  return Object.fromEntries(shown.filter(([, privs]) => Object.keys(privs).length > 0));
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
