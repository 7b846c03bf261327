// What storage operations print into a task log, per storage type, as the LVM, RBD and file tools
// behind pve-storage do. Text only: the volume store itself changes in volumes.ts.
import type { StorageDef } from './cluster-state.ts';
import { formatSize } from './guest-config.ts';
import { parseVolumeId } from './volumes.ts';

const lvName = (volid: string) => parseVolumeId(volid)?.volname ?? volid;

export function allocLines(storage: StorageDef, volid: string, bytes: number): string[] {
  if (storage.type === 'lvmthin') return [`  Logical volume "${lvName(volid)}" created.`];
  if (storage.type === 'dir') {
    return [
      `Formatting '${storage.path}/${lvName(volid)}', fmt=raw size=${bytes} preallocation=off`,
    ];
  }
  return [];
}

export function freeLines(storage: StorageDef, volid: string): string[] {
  if (storage.type === 'lvmthin')
    return [`  Logical volume "${lvName(volid)}" successfully removed.`];
  if (storage.type === 'rbd')
    return ['Removing image: 1% complete...', 'Removing image: 100% complete...done.'];
  return [];
}

export function snapshotLines(
  storage: StorageDef,
  key: string,
  volid: string,
  snapname: string,
): string[] {
  const head = `snapshotting '${key.startsWith('drive-') || key === 'rootfs' || /^mp/.test(key) ? key : `drive-${key}`}' (${volid})`;
  if (storage.type === 'lvmthin')
    return [head, `  Logical volume "snap_${lvName(volid)}_${snapname}" created.`];
  return [head];
}

export function deleteSnapshotLines(
  storage: StorageDef,
  volid: string,
  snapname: string,
): string[] {
  if (storage.type === 'lvmthin')
    return [`  Logical volume "snap_${lvName(volid)}_${snapname}" successfully removed.`];
  if (storage.type === 'rbd') return ['Removing snap: 100% complete...done.'];
  return [];
}

export function rollbackLines(storage: StorageDef, volid: string): string[] {
  if (storage.type === 'lvmthin') {
    return [
      `  Logical volume "${lvName(volid)}" successfully removed.`,
      `  Logical volume "${lvName(volid)}" created.`,
    ];
  }
  if (storage.type === 'rbd') return ['Rolling back to snapshot: 100% complete...done.'];
  return [];
}

export function resizeLines(
  storage: StorageDef,
  volid: string,
  from: number,
  to: number,
): string[] {
  if (storage.type !== 'lvmthin') return [];
  const extents = (bytes: number) => Math.ceil(bytes / (4 * 1024 ** 2));
  const human = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  const lv = `pve/${lvName(volid)}`;
  return [
    `  Size of logical volume ${lv} changed from ${human(from)} (${extents(from)} extents) to ${human(to)} (${extents(to)} extents).`,
    `  Logical volume ${lv} successfully resized.`,
  ];
}

/** A copy's progress lines (qemu-img convert / drive-mirror style). */
export function copyLines(bytes: number): string[] {
  const size = formatSize(bytes).replace(/^(\d+)([KMGT])$/, '$1.0 $2iB');
  return [`transferred 0.0 B of ${size} (0.00%)`, `transferred ${size} of ${size} (100.00%)`];
}
