// The control API under /_sim (or /t/<tenant>/_sim): no auth, JSON in and out, not logged.
// Tests use it to read the request log, reset the tenant, queue faults and take nodes offline.
//
//   GET    /requests                 {requests: LoggedRequest[]} (see http/request-log.ts)
//   DELETE /requests                 clear the log
//   POST   /reset                    reseed cluster; clear log and faults; default config;
//                                    {seed: 'full'|'small'} seeds that cluster, now and on later
//                                    resets (cluster/seed.ts)
//   POST   /faults                   queue a fault (FaultSpec in control/faults.ts) → {id, fault}
//   GET    /faults, DELETE /faults   list or drop queued faults
//   GET    /config, POST /config     {authFailDelayMs?, taskDurationMs?, strictBridges?}
//   POST   /nodes/<node>/offline     requests under /nodes/<node>/ answer 595; guests 'unknown'
//   POST   /nodes/<node>/online
// One guest (tasks still running are settled first, so the answer is what the API would see):
//   GET    /guests/<vmid>            {vmid, type, node, status, qmpstatus, agentRunning, lock, pool,
//                                     checkpointed, config, pending: {values, delete},
//                                     snapshots: {<name>: config}, digest}
//   POST   /guests/<vmid>/lock       {lock: 'backup'|'snapshot'|...} set the config lock
//   DELETE /guests/<vmid>/lock       clear it
//   POST   /guests/<vmid>/agent      {running: boolean} whether the QEMU guest agent answers (VMs)
//   POST   /guests/<vmid>/qmpstatus  {qmpstatus: 'running'|'paused'|'prelaunch'|'suspended'}
//                                    (a running VM's QMP status, e.g. paused by the guest)
//   each answers the guest as GET does.
// Errors: 400 {error} for bad input, 404 {error} for unknown endpoints, nodes or guests.
import { findNode } from '../cluster/cluster-state.ts';
import { SEEDS, type SeedName } from '../cluster/seed.ts';
import { settleTasks } from '../cluster/tasks.ts';
import { handleGuestControl, type ControlReply } from './control-guests.ts';
import { parseFaultSpec } from './faults.ts';
import type { Tenant, TenantConfig } from '../tenant.ts';

export type { ControlReply };

const ok = (body: unknown): ControlReply => ({ status: 200, body });
const fail = (status: number, error: string): ControlReply => ({ status, body: { error } });

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  if (body.length === 0) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** The seed a reset names: undefined for none, null for one that does not exist. */
function seedOf(input: unknown): SeedName | undefined | null {
  if (typeof input !== 'object' || input === null || !('seed' in input)) return undefined;
  const seed = (input as { seed: unknown }).seed;
  return (SEEDS as readonly unknown[]).includes(seed) ? (seed as SeedName) : null;
}

function updateConfig(tenant: Tenant, input: unknown): ControlReply {
  if (typeof input !== 'object' || input === null) return fail(400, 'config must be a JSON object');
  const next: TenantConfig = { ...tenant.config };
  for (const [key, value] of Object.entries(input)) {
    if (key === 'authFailDelayMs' || key === 'taskDurationMs') {
      if (typeof value !== 'number' || !(value >= 0))
        return fail(400, `'${key}' must be a number >= 0`);
      next[key] = value;
    } else if (key === 'strictBridges') {
      if (typeof value !== 'boolean') return fail(400, "'strictBridges' must be a boolean");
      next.strictBridges = value;
    } else {
      return fail(400, `unknown config key '${key}'`);
    }
  }
  tenant.config = next;
  return ok({ config: next });
}

export function handleControl(
  tenant: Tenant,
  method: string,
  subPath: string,
  body: Buffer,
  now: number,
): ControlReply {
  const route = `${method} ${subPath.replace(/\/+$/, '')}`;
  const json = parseJson(body);
  if (!json.ok) return fail(400, 'body is not valid JSON');
  switch (route) {
    case 'GET /requests':
      return ok({ requests: tenant.log.list() });
    case 'DELETE /requests':
      tenant.log.clear();
      return ok({ ok: true });
    case 'POST /reset': {
      const seed = seedOf(json.value);
      if (seed === null) return fail(400, `'seed' must be one of ${SEEDS.join(', ')}`);
      tenant.reset(now, seed);
      return ok({ ok: true });
    }
    case 'GET /faults':
      return ok({ faults: tenant.faults.list() });
    case 'DELETE /faults':
      tenant.faults.clear();
      return ok({ ok: true });
    case 'POST /faults': {
      const parsed = parseFaultSpec(json.value);
      if (!parsed.ok) return fail(400, parsed.error);
      return ok({ id: tenant.faults.add(parsed.spec), fault: parsed.spec });
    }
    case 'GET /config':
      return ok({ config: tenant.config });
    case 'POST /config':
      return updateConfig(tenant, json.value);
  }
  const guestRoute = /^(GET|POST|DELETE) \/guests\/(\d+)(\/[a-z]+)?$/.exec(route);
  if (guestRoute) {
    settleTasks(tenant.state, now);
    return handleGuestControl(
      tenant,
      guestRoute[1] ?? '',
      Number(guestRoute[2]),
      guestRoute[3] ?? '',
      json.value,
    );
  }
  const nodeRoute = /^POST \/nodes\/([^/]+)\/(offline|online)$/.exec(route);
  if (nodeRoute) {
    const node = findNode(tenant.state, nodeRoute[1] ?? '');
    if (!node) return fail(404, `no such node '${nodeRoute[1]}'`);
    node.online = nodeRoute[2] === 'online';
    return ok({ node: node.name, status: node.online ? 'online' : 'offline' });
  }
  return fail(404, `no control endpoint '${route}'`);
}
