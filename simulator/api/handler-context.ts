// What an API handler gets: the tenant's cluster, the caller, validated parameters and the
// clock. Handlers return `data` or throw ApiError; they never touch HTTP.
import type { PermCheck } from '../access/permissions.ts';
import type { Identity } from '../access/tokens.ts';
import type { ClusterState } from '../cluster/cluster-state.ts';
import type { KeySchema, Params, PropSchema } from '../schema/schema-types.ts';

export interface HandlerContext {
  readonly state: ClusterState;
  readonly identity: Identity;
  readonly params: Params;
  readonly now: number;
  /** How long a worker task stays 'running' (tenant config). */
  readonly taskDurationMs: number;
  /** Tenant config: refuse unknown bridges at create time (real PVE only fails at start). */
  readonly strictBridges: boolean;
  /** Consumes a queued `taskExitStatus` fault matching this request, if any. */
  readonly takeTaskExitStatus: () => string | undefined;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Route {
  readonly method: HttpMethod;
  /** Path below /api2/json with `{param}` segments, e.g. '/nodes/{node}/qemu'. */
  readonly path: string;
  /** The method's `permissions`, checked before proxying and before parameter validation. */
  readonly permissions: PermCheck;
  readonly schema: Readonly<Record<string, KeySchema>>;
  readonly handle: (ctx: HandlerContext) => unknown;
}

/** Common parameter schemas (pve-common standard options). */
export const NODE_PARAM: PropSchema = { type: 'string', format: 'pve-node' };
export const VMID_PARAM: PropSchema = {
  type: 'integer',
  format: 'pve-vmid',
  minimum: 100,
  maximum: 999999999,
};
export const SNAPNAME_PARAM: PropSchema = { type: 'string', format: 'pve-configid', maxLength: 40 };
export const SKIPLOCK_PARAM: PropSchema = { type: 'boolean', optional: true };
export const DIGEST_PARAM: PropSchema = { type: 'string', optional: true, maxLength: 40 };
export const GUEST_PARAMS = { node: NODE_PARAM, vmid: VMID_PARAM } as const;

/** The schema made optional (most API parameters are). */
export const optional = (schema: PropSchema): PropSchema => ({ ...schema, optional: true });
