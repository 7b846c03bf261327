// GET /cluster/replication (pve-manager API2/ReplicationConfig.pm index): every replication.cfg
// job, with its id, guest and jobnum, for which the caller has VM.Audit on the guest.
import { ALL_USERS } from '../access/permissions.ts';
import { hasPrivilege } from '../access/tokens.ts';
import type { HandlerContext, Route } from './handler-context.ts';

function index({ state, identity }: HandlerContext): unknown {
  return [...state.replication]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .filter(([, job]) => hasPrivilege(identity, `/vms/${job.guest}`, 'VM.Audit'))
    .map(([id, job]) => ({ ...job, id }));
}

export const REPLICATION_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/cluster/replication',
    permissions: ALL_USERS,
    schema: {},
    handle: index,
  },
];
