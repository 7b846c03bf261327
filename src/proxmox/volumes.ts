// Storage volumes as guest options name them: `STORAGE:SIZE_GiB` allocates a new one,
// `STORAGE:VOLNAME` is an existing one. Absolute host paths are refused outright: only root may
// use them in PVE, and they would hand host files and block devices to an agent.

import { STORAGE_ID_RE, quote } from './formats';
import type { FieldValue } from './option-rules';

export const NEW_DISK_RE = /^([A-Za-z][A-Za-z0-9\-_.]*[A-Za-z0-9]):(\d+(?:\.\d+)?)$/;
const VOLUME_RE = /^([A-Za-z][A-Za-z0-9\-_.]*[A-Za-z0-9]):([A-Za-z0-9][A-Za-z0-9._+\-/]{0,254})$/;
export const MAX_DISK_GIB = 1_048_576;

/** `STORAGE:SIZE_GiB` or an existing `STORAGE:VOLNAME`; null when valid, else `allowed` in words. */
export function checkVolumeId(value: string, allowed: string): string | null {
  if (value.startsWith('/')) return 'absolute paths are not allowed; use STORAGE:VOLUME';
  const fresh = NEW_DISK_RE.exec(value);
  if (fresh)
    return Number(fresh[2]) <= MAX_DISK_GIB ? null : `size must be at most ${MAX_DISK_GIB} GiB`;
  const vol = VOLUME_RE.exec(value);
  if (!vol || !STORAGE_ID_RE.test(vol[1] ?? '')) return `${quote(value)} is not ${allowed}`;
  if ((vol[2] ?? '').split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) {
    return `${quote(value)}: volume names must not contain empty, "." or ".." path segments`;
  }
  return null;
}

/** The fields checks and policy rules look at: storage, and size_gib for a new volume, else volume. */
export function volumeFields(file: string): Record<string, FieldValue> {
  const fresh = NEW_DISK_RE.exec(file);
  return {
    storage: file.includes(':') ? file.slice(0, file.indexOf(':')) : '',
    ...(fresh ? { size_gib: Number(fresh[2]), new_disk: true } : { new_disk: false }),
    ...(file.includes(':') && !fresh ? { volume: file } : {}),
  };
}

/** The guest an existing volume's name says it belongs to (vm-100-disk-0, base-9000-disk-0, subvol-110-disk-0). */
export function volumeOwner(volume: string): number | null {
  const m = /:(?:[^/]*\/)?(?:vm|base|subvol|basevol)-(\d+)-/.exec(volume);
  return m ? Number(m[1]) : null;
}
