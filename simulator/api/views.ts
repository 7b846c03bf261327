// Response shapes for guests, nodes, storages and pools, following pve-manager's
// extract_*_stats (cluster/resources, /nodes) and qemu-server/pve-container vmstatus (node lists).
// Flags are 0/1 integers and optional keys are left out, as PVE does.
import { uptimeSeconds, type Guest, type NodeState, type StorageDef } from '../cluster/cluster-state.ts';

type Entry = Record<string, unknown>;

function optionalGuestKeys(guest: Guest): Entry {
  return {
    ...(guest.tags !== undefined ? { tags: guest.tags } : {}),
    ...(guest.lock !== undefined ? { lock: guest.lock } : {}),
  };
}

/** A qemu/lxc item of /cluster/resources; guests of an offline node have no stats. */
export function vmResource(guest: Guest, nodeOnline: boolean, showPool: boolean, now: number): Entry {
  const base: Entry = {
    id: `${guest.type}/${guest.vmid}`,
    vmid: guest.vmid,
    node: guest.node,
    type: guest.type,
    status: 'unknown',
  };
  const stats: Entry = nodeOnline
    ? {
        name: guest.name,
        status: guest.status,
        uptime: uptimeSeconds(guest.bootedAt, now),
        template: guest.template ? 1 : 0,
        maxcpu: guest.cpus,
        cpu: guest.cpu,
        maxmem: guest.maxmem,
        mem: guest.mem,
        memhost: guest.mem,
        maxdisk: guest.maxdisk,
        disk: guest.disk,
        netin: guest.netin,
        netout: guest.netout,
        diskread: guest.diskread,
        diskwrite: guest.diskwrite,
      }
    : {};
  const pool = showPool && guest.pool ? { pool: guest.pool } : {};
  return { ...base, ...stats, ...optionalGuestKeys(guest), ...pool };
}

/** extract_node_stats: stats only for online nodes and only with Sys.Audit. */
export function nodeEntry(node: NodeState, canAudit: boolean, now: number): Entry {
  const entry: Entry = { id: `node/${node.name}`, node: node.name, type: 'node', status: 'offline' };
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
  // Node-local storages differ a little per node; shared ones report the same figures everywhere.
  const skew = storage.shared ? 0 : (node.maxcpu % 7) * 1_073_741_824;
  return { ...entry, status: 'available', maxdisk: storage.maxdisk, disk: storage.disk + skew };
}

/** A guest of GET /nodes/{node}/qemu (`cpus`, not `maxcpu`; `template` only when set). */
export function qemuListEntry(guest: Guest, now: number): Entry {
  const running = guest.status === 'running';
  return {
    vmid: guest.vmid,
    status: guest.status,
    name: guest.name,
    cpus: guest.cpus,
    maxmem: guest.maxmem,
    mem: guest.mem,
    memhost: guest.mem,
    maxdisk: guest.maxdisk,
    disk: 0,
    netin: guest.netin,
    netout: guest.netout,
    diskread: guest.diskread,
    diskwrite: guest.diskwrite,
    uptime: uptimeSeconds(guest.bootedAt, now),
    cpu: guest.cpu,
    ...(running && guest.pid !== undefined ? { pid: guest.pid, ...pressures(guest) } : {}),
    ...(guest.template ? { template: 1 } : {}),
    ...optionalGuestKeys(guest),
  };
}

/** A container of GET /nodes/{node}/lxc (adds type, disk, swap figures). */
export function lxcListEntry(guest: Guest, now: number): Entry {
  const running = guest.status === 'running';
  return {
    type: 'lxc',
    vmid: guest.vmid,
    status: guest.status,
    name: guest.name,
    cpus: guest.cpus,
    maxmem: guest.maxmem,
    mem: guest.mem,
    swap: 0,
    maxswap: guest.maxswap ?? 0,
    maxdisk: guest.maxdisk,
    disk: guest.disk,
    netin: guest.netin,
    netout: guest.netout,
    diskread: guest.diskread,
    diskwrite: guest.diskwrite,
    uptime: uptimeSeconds(guest.bootedAt, now),
    cpu: guest.cpu,
    ...(running && guest.pid !== undefined ? { pid: guest.pid, ...pressures(guest) } : {}),
    ...(guest.template ? { template: 1 } : {}),
    ...optionalGuestKeys(guest),
  };
}

function pressures(guest: Guest): Entry {
  const some = Math.round(guest.cpu * 1000) / 100;
  return {
    pressurecpusome: some,
    pressurecpufull: some / 2,
    pressureiosome: 0,
    pressureiofull: 0,
    pressurememorysome: 0,
    pressurememoryfull: 0,
  };
}
