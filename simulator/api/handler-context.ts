// What an API handler gets: the tenant's cluster, the caller, validated parameters and the
// clock. Handlers return `data` or throw ApiError; they never touch HTTP.
import type { ClusterState } from '../cluster/cluster-state.ts';
import type { KeySchema, Params } from '../schema/schema-types.ts';
import type { Identity } from '../access/tokens.ts';

export interface HandlerContext {
  readonly state: ClusterState;
  readonly identity: Identity;
  readonly params: Params;
  readonly now: number;
  /** How long a create task stays 'running' (tenant config). */
  readonly taskDurationMs: number;
  /** Tenant config: refuse unknown bridges at create time (real PVE only fails at start). */
  readonly strictBridges: boolean;
  /** Consumes a queued `taskExitStatus` fault matching this request, if any. */
  readonly takeTaskExitStatus: () => string | undefined;
}

export interface Route {
  readonly method: 'GET' | 'POST';
  /** Path below /api2/json with `{param}` segments, e.g. '/nodes/{node}/qemu'. */
  readonly path: string;
  readonly schema: Readonly<Record<string, KeySchema>>;
  readonly handle: (ctx: HandlerContext) => unknown;
}

/** Common parameter schemas. */
export const NODE_PARAM: KeySchema = { type: 'string', format: 'pve-node' };
