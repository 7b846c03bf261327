// Disk sizes as Proxmox writes them (`size=32G` in a config, `+10G` or `40G` for a resize):
// bytes for comparing, GiB for people and policy rules. Proxmox only grows disks, so a resize
// is judged against the size the config records before anything is sent.

import { propertyValue, type PropertyValue } from '../core/property-value';

const UNIT: Readonly<Record<string, number>> = {
  '': 1,
  K: 1024,
  M: 1024 ** 2,
  G: 1024 ** 3,
  T: 1024 ** 4,
};
const GIB = 1024 ** 3;

/** The fields of a parsed resize size (what policy rules may reach: args.size.gib). */
export const RESIZE_FIELDS = ['grow', 'gib', 'bytes'];

/** A size in a config (`32G`, `3584M`, a bare number of bytes); null when it is not one. */
export function sizeBytes(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)$/.exec(text);
  return m ? Math.round(Number(m[1]) * UNIT[m[2]!]!) : null;
}

/** "32 GiB", "3.5 GiB", "512 MiB": bytes for a sentence. */
export function describeBytes(bytes: number): string {
  if (bytes >= GIB) return `${Math.round((bytes / GIB) * 100) / 100} GiB`;
  return `${Math.round((bytes / 1024 ** 2) * 100) / 100} MiB`;
}

/**
 * A resize size, `+10G` (grow by) or `40G` (grow to). PVE takes a bare number as bytes, which is
 * almost never what anyone means, so a unit is required. Fields: `grow` (relative), `gib`, `bytes`.
 */
export function parseResizeSize(
  text: string,
): { ok: true; value: PropertyValue } | { ok: false; error: string } {
  const m = /^(\+?)(\d{1,7}(?:\.\d{1,3})?)([KMGT])$/.exec(text);
  if (!m)
    return {
      ok: false,
      error:
        'must be +SIZE to grow by or SIZE to grow to, with a unit K, M, G or T (e.g. +10G, 40G)',
    };
  const bytes = Number(m[2]) * UNIT[m[3]!]!;
  if (bytes <= 0) return { ok: false, error: 'must be more than 0' };
  return {
    ok: true,
    value: propertyValue(text, {
      grow: m[1] === '+',
      gib: Math.round((bytes / GIB) * 1000) / 1000,
      bytes: Math.round(bytes),
    }),
  };
}

/** The size after the resize, from the current one. */
export function resizedBytes(size: PropertyValue, currentBytes: number): number {
  const bytes = Number(size.fields.bytes);
  return size.fields.grow === true ? currentBytes + bytes : bytes;
}
