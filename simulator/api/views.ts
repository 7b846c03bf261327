// Response shapes for guests, nodes and storages, following qemu-server/pve-container vmstatus
// (node lists and status/current) and pve-manager's extract_*_stats (cluster/resources, /nodes).
// Flags are 0/1 integers and optional keys are left out, as PVE does.
import {
  findNode,
  uptimeSeconds,
  type ClusterState,
  type Guest,
  type NodeState,
  type StorageDef,
} from '../cluster/cluster-state.ts';
import { guestFacts, type GuestFacts } from '../cluster/guest-config.ts';

type Entry = Record<string, unknown>;

export function factsOf(state: ClusterState, guest: Guest): GuestFacts {
  return guestFacts(guest, findNode(state, guest.node)?.maxcpu ?? 1);
}

function optionalGuestKeys(facts: GuestFacts): Entry {
  return {
    ...(facts.tags !== undefined ? { tags: facts.tags } : {}),
    ...(facts.lock !== undefined ? { lock: facts.lock } : {}),
  };
}

/** cgroup pressure averages (qemu has cpu 'full' too; containers do not report it). */
function pressures(guest: Guest): Entry {
  const some = Math.round(guest.cpu * 1000) / 100;
  return {
    pressurecpusome: some,
    ...(guest.type === 'qemu' ? { pressurecpufull: some / 2 } : {}),
    pressureiosome: 0,
    pressureiofull: 0,
    pressurememorysome: 0,
    pressurememoryfull: 0,
  };
}

/** The I/O counters every guest view carries. */
function counters(guest: Guest): Entry {
  const { disk, netin, netout, diskread, diskwrite } = guest;
  return { disk, netin, netout, diskread, diskwrite };
}

/** One guest of vmstatus: GET /nodes/{node}/{qemu,lxc} items and the base of status/current. */
export function vmstatus(state: ClusterState, guest: Guest, now: number): Entry {
  const facts = factsOf(state, guest);
  const running = guest.status === 'running';
  const common: Entry = {
    vmid: guest.vmid,
    status: guest.status,
    name: facts.name,
    cpus: facts.cpus,
    maxmem: facts.maxmem,
    mem: guest.mem,
    maxdisk: facts.maxdisk,
    ...counters(guest),
    uptime: uptimeSeconds(guest.bootedAt, now),
    cpu: guest.cpu,
    ...(running && guest.pid !== undefined ? { pid: guest.pid, ...pressures(guest) } : {}),
    ...(facts.template ? { template: 1 } : {}),
    ...optionalGuestKeys(facts),
  };
  if (guest.type === 'lxc') return { type: 'lxc', ...common, swap: 0, maxswap: facts.maxswap };
  return {
    ...common,
    memhost: guest.mem,
    ...(Object.keys(guest.config).some((key) => /^serial\d+$/.test(key)) ? { serial: 1 } : {}),
  };
}

/** A guest's status as /cluster/resources lists it (pvestatd's update_qemu_status). */
function listedStatus(guest: Guest): string {
  return guest.type === 'qemu' && guest.status === 'running' ? guest.qmpstatus : guest.status;
}

/** A qemu/lxc item of /cluster/resources; guests of an offline node have no stats. */
export function vmResource(
  state: ClusterState,
  guest: Guest,
  showPool: boolean,
  now: number,
): Entry {
  const facts = factsOf(state, guest);
  const base: Entry = {
    id: `${guest.type}/${guest.vmid}`,
    vmid: guest.vmid,
    node: guest.node,
    type: guest.type,
    status: 'unknown',
  };
  const stats: Entry = findNode(state, guest.node)?.online
    ? {
        name: facts.name,
        // pvestatd's: QEMU's own state for a running VM (`paused`, `prelaunch`...), as
        // update_qemu_status writes `qmpstatus || status`.
        status: listedStatus(guest),
        uptime: uptimeSeconds(guest.bootedAt, now),
        template: facts.template ? 1 : 0,
        maxcpu: facts.cpus,
        cpu: guest.cpu,
        maxmem: facts.maxmem,
        mem: guest.mem,
        memhost: guest.mem,
        maxdisk: facts.maxdisk,
        ...counters(guest),
      }
    : {};
  const pool = showPool && guest.pool ? { pool: guest.pool } : {};
  return { ...base, ...stats, ...optionalGuestKeys(facts), ...pool };
}

/** extract_node_stats: stats only for online nodes and only with Sys.Audit. */
export function nodeEntry(node: NodeState, canAudit: boolean, now: number): Entry {
  const entry: Entry = {
    id: `node/${node.name}`,
    node: node.name,
    type: 'node',
    status: 'offline',
  };
  if (!node.online) return entry;
  return {
    ...entry,
    status: 'online',
    level: '',
    ...(canAudit
      ? {
          uptime: uptimeSeconds(node.bootedAt, now),
          cpu: node.cpu,
          mem: node.mem,
          disk: node.disk,
          maxcpu: node.maxcpu,
          maxmem: node.maxmem,
          maxdisk: node.maxdisk,
        }
      : {}),
  };
}

/** Used bytes of a storage as `node` sees it: node-local storages differ a little per node. */
export function storageUsage(
  storage: StorageDef,
  node: NodeState,
): { total: number; used: number } {
  const skew = storage.shared ? 0 : (node.maxcpu % 7) * 1_073_741_824;
  return { total: storage.maxdisk, used: storage.disk + skew };
}

export function storageResource(storage: StorageDef, node: NodeState): Entry {
  const entry: Entry = {
    id: `storage/${node.name}/${storage.id}`,
    storage: storage.id,
    node: node.name,
    type: 'storage',
    plugintype: storage.type,
    status: 'unknown',
    shared: storage.shared ? 1 : 0,
    content: storage.content.join(','),
  };
  if (!node.online) return entry;
  const usage = storageUsage(storage, node);
  return { ...entry, status: 'available', maxdisk: usage.total, disk: usage.used };
}
