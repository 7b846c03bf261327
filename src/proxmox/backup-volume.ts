// A backup's volume id, as pve-storage names them, parsed and checked before anything is sent:
// vzdump files on a directory-like storage (`local:backup/vzdump-qemu-100-2026_11_30-02_00_07.vma.zst`)
// and snapshots on a Proxmox Backup Server storage (`pbs:backup/vm/100/2026-11-30T02:00:07Z`).
// Anything else (a disk image, an ISO, a path with "..", a backup of another kind) is refused.

import { STORAGE_ID_RE } from './formats';

export interface BackupVolume {
  volid: string;
  storage: string;
  /** What it restores into. */
  kind: 'qemu' | 'lxc';
  /** The guest it was made of. */
  vmid: number;
  /** `vzdump`: a file on the storage; `pbs`: a Proxmox Backup Server snapshot. */
  format: 'vzdump' | 'pbs';
  /** When it was made (ISO, UTC), from its name. */
  at: string;
}

const VZDUMP_RE =
  /^backup\/vzdump-(qemu|lxc)-(\d{3,9})-(\d{4})_(\d\d)_(\d\d)-(\d\d)_(\d\d)_(\d\d)\.(?:vma|tar)(?:\.(?:zst|gz|lzo))?$/;
const PBS_RE = /^backup\/(vm|ct)\/(\d{3,9})\/(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/;

/** The parsed backup, or why the value is not one. */
export function parseBackupVolume(volid: string): BackupVolume | string {
  const colon = volid.indexOf(':');
  const storage = colon > 0 ? volid.slice(0, colon) : '';
  if (!STORAGE_ID_RE.test(storage))
    return 'must be a backup volume id, STORAGE:backup/... (as pve_list_backups lists them)';
  const name = volid.slice(colon + 1);
  const file = VZDUMP_RE.exec(name);
  if (file) {
    const [, kind, id, y, mo, d, h, mi, s] = file;
    return {
      volid,
      storage,
      kind: kind as 'qemu' | 'lxc',
      vmid: Number(id),
      format: 'vzdump',
      at: `${y}-${mo}-${d}T${h}:${mi}:${s}Z`,
    };
  }
  const pbs = PBS_RE.exec(name);
  if (pbs) {
    const [, kind, id, at] = pbs;
    return {
      volid,
      storage,
      kind: kind === 'vm' ? 'qemu' : 'lxc',
      vmid: Number(id),
      format: 'pbs',
      at: at ?? '',
    };
  }
  return `${JSON.stringify(volid.slice(0, 120))} is not a backup: expected STORAGE:backup/vzdump-<qemu|lxc>-<vmid>-<date>.<vma|tar>[.zst|.gz|.lzo] or STORAGE:backup/<vm|ct>/<vmid>/<time> (Proxmox Backup Server)`;
}
