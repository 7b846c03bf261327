// GET /cluster/ha/resources and /cluster/ha/resources/{sid} (pve-ha-manager API2/HA/Resources.pm):
// each resource's resources.cfg section as set, plus its sid and the file's digest.
import { perm } from '../access/permissions.ts';
import type { ClusterState } from '../cluster/cluster-state.ts';
import { haDigest, parseSid } from '../cluster/ha.ts';
import { dieError } from '../schema/pve-error.ts';
import type { HandlerContext, Route } from './handler-context.ts';
import { str } from './guest-helpers.ts';

/** api_copy_config: the section's options as configured, with sid and digest. */
function copyConfig(state: ClusterState, sid: string): Record<string, unknown> {
  const resource = state.haResources.get(sid);
  if (!resource) throw dieError(`no such resource '${sid}'`);
  return { ...resource, sid, digest: haDigest(state) };
}

function index(ctx: HandlerContext): unknown {
  const type = str(ctx, 'type');
  return [...ctx.state.haResources]
    .filter(([, resource]) => type === undefined || resource.type === type)
    .map(([sid]) => copyConfig(ctx.state, sid));
}

function read(ctx: HandlerContext): unknown {
  return copyConfig(ctx.state, parseSid(ctx.state, String(ctx.params.sid)));
}

const SYS_AUDIT = perm('/', ['Sys.Audit']);

export const HA_RESOURCE_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/cluster/ha/resources',
    permissions: SYS_AUDIT,
    schema: { type: { type: 'string', optional: true, enum: ['ct', 'vm'] } },
    handle: index,
  },
  {
    method: 'GET',
    path: '/cluster/ha/resources/{sid}',
    permissions: SYS_AUDIT,
    schema: { sid: { type: 'string', format: 'pve-ha-resource-or-vm-id' } },
    handle: read,
  },
];
