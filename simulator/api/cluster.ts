// GET /version, /nodes, /cluster/resources, /cluster/nextid (pve-manager API2/Cluster.pm,
// API2/Nodes.pm), with the per-entry privilege filtering PVE applies and the HA states.
import { dieError, paramError } from '../schema/pve-error.ts';
import { guestsSorted, nextFreeVmid, type ClusterState } from '../cluster/cluster-state.ts';
import { ALL_USERS } from '../access/permissions.ts';
import { VMID_PARAM, type HandlerContext, type Route } from './handler-context.ts';
import { hasPrivilege, type Identity } from '../access/tokens.ts';
import { guestHaState, nodeHaState } from '../cluster/ha.ts';
import { factsOf, nodeEntry, storageResource, vmResource } from './views.ts';

function version(): unknown {
  return { version: '9.1.3', release: '9.1', repoid: 'e5010dcea566a205' };
}

function listNodes({ state, identity, now }: HandlerContext): unknown {
  return state.nodes.map((node) => ({
    ...nodeEntry(node, hasPrivilege(identity, `/nodes/${node.name}`, 'Sys.Audit'), now),
    ssl_fingerprint: node.sslFingerprint,
  }));
}

/** Pool entries, with the running members' usage summed in as Cluster.pm does. */
function poolResources(
  state: ClusterState,
  identity: Identity,
  now: number,
): Record<string, unknown>[] {
  if (!hasPrivilege(identity, '/pool', 'Pool.Audit')) return [];
  return [...state.pools.keys()].sort().map((pool) => {
    const entry: Record<string, number | string> = { id: `/pool/${pool}`, pool, type: 'pool' };
    for (const guest of guestsSorted(state)) {
      const uptime = Number(vmResource(state, guest, true, now).uptime ?? 0);
      if (guest.pool !== pool || !uptime) continue;
      const facts = factsOf(state, guest);
      const maxcpu = Number(entry.maxcpu ?? 0);
      const cpu = Number(entry.cpu ?? 0);
      entry.uptime = Math.max(Number(entry.uptime ?? 0), uptime);
      entry.mem = Number(entry.mem ?? 0) + guest.mem;
      entry.maxmem = Number(entry.maxmem ?? 0) + facts.maxmem;
      entry.cpu = (cpu * maxcpu + guest.cpu * facts.cpus) / (maxcpu + facts.cpus);
      entry.maxcpu = maxcpu + facts.cpus;
    }
    return entry;
  });
}

function clusterResources({ state, identity, params, now }: HandlerContext): unknown {
  const type = params.type === undefined || params.type === null ? undefined : String(params.type);
  const wants = (kind: string) => type === undefined || type === kind;
  const res: unknown[] = [];
  if (type === undefined) res.push(...poolResources(state, identity, now));
  if (wants('vm')) {
    const showPool = hasPrivilege(identity, '/pool', 'Pool.Audit');
    for (const guest of guestsSorted(state)) {
      if (!hasPrivilege(identity, `/vms/${guest.vmid}`, 'VM.Audit')) continue;
      const hastate = guestHaState(state, guest);
      res.push({
        ...vmResource(state, guest, showPool, now),
        ...(hastate !== undefined ? { hastate } : {}),
      });
    }
  }
  if (wants('node')) {
    for (const node of state.nodes) {
      const entry = nodeEntry(
        node,
        hasPrivilege(identity, `/nodes/${node.name}`, 'Sys.Audit'),
        now,
      );
      const hastate = nodeHaState(state, node);
      res.push({
        ...entry,
        ...(node.online ? { 'cgroup-mode': 2 } : {}),
        ...(hastate !== undefined ? { hastate } : {}),
      });
    }
  }
  if (wants('storage')) {
    for (const storage of state.storages) {
      if (!hasPrivilege(identity, `/storage/${storage.id}`, 'Datastore.Audit')) continue;
      for (const node of state.nodes) res.push(storageResource(storage, node));
    }
  }
  // No SDN zones are configured, so type=sdn (and the sdn part of the full list) is empty.
  return res;
}

function nextId({ state, params }: HandlerContext): unknown {
  const requested = params.vmid;
  if (requested !== undefined && requested !== null && requested !== '' && requested !== 0) {
    const vmid = String(requested);
    if (state.guests.has(Number(vmid))) throw paramError({ vmid: `VM ${vmid} already exists` });
    return vmid;
  }
  const free = nextFreeVmid(state);
  if (free === undefined) throw dieError('unable to get any free VMID in range [100, 1000000]');
  // Cluster.pm's id has been used as a hash key, so Perl's JSON encoder prints it as a string.
  return String(free);
}

export const CLUSTER_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/version', permissions: ALL_USERS, schema: {}, handle: version },
  { method: 'GET', path: '/nodes', permissions: ALL_USERS, schema: {}, handle: listNodes },
  {
    method: 'GET',
    path: '/cluster/resources',
    permissions: ALL_USERS,
    schema: { type: { type: 'string', optional: true, enum: ['vm', 'storage', 'node', 'sdn'] } },
    handle: clusterResources,
  },
  {
    method: 'GET',
    path: '/cluster/nextid',
    permissions: ALL_USERS,
    schema: { vmid: { ...VMID_PARAM, optional: true } },
    handle: nextId,
  },
];
