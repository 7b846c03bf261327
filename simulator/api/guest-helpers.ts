// Steps the guest handlers share, each a line of qemu-server/pve-container: load_config on the
// node the request went to, check_lock, check_protection, the "Only root may use this option."
// refusals, extract_param-style reading of validated values, and forking a worker task.
import { findNode, type Guest, type GuestType, type NodeState } from '../cluster/cluster-state.ts';
import { configPath } from '../cluster/config-file.ts';
import { spawnTask, type TaskLog, type Work, type WorkPlan } from '../cluster/tasks.ts';
import { dieError, paramError } from '../schema/pve-error.ts';
import type { Params } from '../schema/schema-types.ts';
import { perm } from '../access/permissions.ts';
import { GUEST_PARAMS, type HandlerContext, type Route } from './handler-context.ts';
import type { KeySchema } from '../schema/schema-types.ts';

/** Validated values as the strings Perl code sees (JSON true/false → 1/0). */
export function asStrings(params: Params): Record<string, string> {
  const res: Record<string, string> = Object.create(null);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    res[key] = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
  }
  return res;
}

/** Remove and return a parameter, like extract_param. */
export function extract(params: Record<string, string>, key: string): string | undefined {
  const value = params[key];
  delete params[key];
  return value;
}

/** 'VM' or 'CT', as guest_type() names them in messages. */
export const guestKind = (type: GuestType) => (type === 'qemu' ? 'VM' : 'CT');

/** Perl truthiness of a validated parameter (JSON booleans included). */
export function flag(ctx: HandlerContext, key: string): boolean {
  const value = ctx.params[key];
  return (
    value !== undefined &&
    value !== null &&
    value !== false &&
    value !== '' &&
    value !== '0' &&
    value !== 0
  );
}

export function str(ctx: HandlerContext, key: string): string | undefined {
  const value = ctx.params[key];
  return value === undefined || value === null ? undefined : String(value);
}

export function requestNode(ctx: HandlerContext): NodeState {
  const node = findNode(ctx.state, String(ctx.params.node));
  if (!node) throw dieError('node vanished'); // the router only calls us for known, online nodes
  return node;
}

/** load_config: the guest's config must exist on this node (500 otherwise, never 404). */
export function loadGuest(
  ctx: HandlerContext,
  type: GuestType,
  vmid = Number(ctx.params.vmid),
): Guest {
  const guest = ctx.state.guests.get(vmid);
  const node = String(ctx.params.node);
  if (!guest || guest.type !== type || guest.node !== node) {
    throw dieError(`Configuration file '${configPath(type, node, vmid)}' does not exist`);
  }
  return guest;
}

/** The text check_lock dies with, or undefined when the guest is not locked. */
export function lockError(guest: Guest): string | undefined {
  const lock = guest.config.lock;
  return lock ? `${guestKind(guest.type)} is locked (${lock})` : undefined;
}

export function checkLock(guest: Guest): void {
  const error = lockError(guest);
  if (error !== undefined) throw dieError(error);
}

/** check_protection: "<what> - protection mode enabled". */
export function checkProtection(guest: Guest, what: string): void {
  if (guest.config.protection === '1') throw dieError(`${what} - protection mode enabled`);
}

/** Options only root@pam may set; an API token (even root's) is never root@pam. */
export function refuseRootOnly(ctx: HandlerContext, ...keys: string[]): void {
  for (const key of keys) {
    if (flag(ctx, key)) throw paramError({ [key]: 'Only root may use this option.' });
  }
}

export function isRunning(guest: Guest): boolean {
  return guest.status === 'running';
}

/** fork_worker for a guest: a task of `type` with the vmid as id, serialized on that guest. */
export function startGuestTask(
  ctx: HandlerContext,
  type: string,
  vmid: number,
  work: Work,
  node?: NodeState,
): string {
  const forced = ctx.takeTaskExitStatus();
  return spawnTask(ctx.state, {
    node: node ?? requestNode(ctx),
    type,
    id: String(vmid),
    user: ctx.identity.tokenId,
    now: ctx.now,
    durationMs: ctx.taskDurationMs,
    vmid,
    work,
    ...(forced !== undefined ? { forcedExitStatus: forced } : {}),
  });
}

/**
 * A worker body on one guest. PVE workers reload the config once they hold its lock, so the
 * guest is looked up again when the task begins (it may have changed, moved or gone).
 */
export function onGuest(
  ctx: HandlerContext,
  type: GuestType,
  vmid: number,
  body: (guest: Guest, log: TaskLog, startedAt: number) => WorkPlan,
): Work {
  const node = String(ctx.params.node);
  return (log, startedAt) => {
    const guest = ctx.state.guests.get(vmid);
    if (!guest || guest.type !== type || guest.node !== node) {
      throw new Error(`Configuration file '${configPath(type, node, vmid)}' does not exist`);
    }
    return body(guest, log, startedAt);
  };
}

/** check_cfs_quorum: writes need a quorate cluster. */
export function checkQuorum(ctx: HandlerContext): void {
  const online = ctx.state.nodes.filter((n) => n.online).length;
  if (online * 2 <= ctx.state.nodes.length) throw dieError('cluster not ready - no quorum?');
}

/** POST /nodes/{node}/<type>/{vmid}/status/<action>: VM.PowerMgmt, the guest's params plus `extra`. */
export function powerRoute(
  type: GuestType,
  action: string,
  handle: Route['handle'],
  extra: Readonly<Record<string, KeySchema>> = {},
): Route {
  return {
    method: 'POST',
    path: `/nodes/{node}/${type}/{vmid}/status/${action}`,
    permissions: perm('/vms/{vmid}', ['VM.PowerMgmt']),
    schema: { ...GUEST_PARAMS, ...extra },
    handle,
  };
}
