// Proxmox task ids (pve-common PVE/UPID.pm):
// UPID:<node>:<pid 8 hex>:<pstart 8-9 hex>:<starttime 8 hex>:<type>:<id>:<user>:

const UPID_RE =
  /^UPID:([a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s]+):([^:\s]*):([^:\s]+):$/;

export interface Upid {
  node: string;
  pid: number;
  startTime: number;
  type: string;
  id: string;
  user: string;
}

export function parseUpid(text: string): Upid | null {
  const m = UPID_RE.exec(text);
  if (!m) return null;
  return {
    node: m[1]!,
    pid: parseInt(m[2]!, 16),
    startTime: parseInt(m[4]!, 16),
    type: m[5]!,
    id: m[6]!,
    user: m[7]!,
  };
}

/**
 * The guest a task is of, when its id names one: guest tasks (qmstart, vzdump, qmigrate...) carry
 * the vmid as their id; others a storage, a service or nothing, and Ceph's tasks an OSD's number
 * (cephdestroyosd), a disk or a pool: no guest's, whatever its digits.
 */
export function guestOfUpid(text: string): { vmid: number } | null {
  const task = parseUpid(text);
  if (!task || task.type.startsWith('ceph')) return null;
  return /^[1-9]\d{2,8}$/.test(task.id) ? { vmid: Number(task.id) } : null;
}

/** A finished task succeeded iff its exit status is OK or only warnings. */
export function taskSucceeded(exitstatus: string | undefined): boolean {
  return exitstatus === 'OK' || /^WARNINGS: \d+$/.test(exitstatus ?? '');
}
