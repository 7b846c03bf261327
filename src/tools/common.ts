// Pieces shared by every tool: the argument formats PVE defines, and the output members any
// result may carry besides its own (a failure's `error`, a refusal's `policy`), so failures fit
// each outputSchema. Every tool definition costs each conversation context: keep these lean
// (the shapes of `error` and `policy` are in the server's instructions, not repeated per tool).

import { z } from 'zod';
import {
  CONFIGID_RE,
  isNodeAlias,
  NODE_ALIAS_RULE,
  NODE_RE,
  NODE_RULE,
  STORAGE_ID_RE,
  TAG_MAX,
  TAG_RE,
  VMID_MAX,
  VMID_MIN,
} from '../proxmox/formats';

// Long patterns are checked with refine rather than regex: a regex would be repeated in the JSON
// schema of every tool that takes the argument, and every tool definition costs context.
export const nodeName = z
  .string()
  .max(63)
  .refine((v) => NODE_RE.test(v), { error: `must be ${NODE_RULE}` })
  .refine((v) => !isNodeAlias(v), { error: NODE_ALIAS_RULE });

export const tagName = z
  .string()
  .max(TAG_MAX)
  .regex(TAG_RE, { error: 'must be a tag: letters, digits, "_" first, then also "-", "+", "."' });

export const vmid = z.number().int().min(VMID_MIN).max(VMID_MAX);

export const vmType = z.enum(['qemu', 'lxc']).default('qemu');

/** Which guest a guest tool acts on: PLG's `node`, `vmid` and `vm_type`. */
export const guestTarget = {
  node: nodeName.describe('Node, e.g. pve1.'),
  vmid: vmid.describe('Guest id.'),
  // No description: the enum says it (qemu a VM, lxc a container), and on an approval page a
  // hint naming one of them beside the other read as a contradiction.
  vm_type: vmType,
};

export const storageId = z.string().max(100).regex(STORAGE_ID_RE, {
  error: 'must be a storage id: letters, digits, "-", "_", "." (e.g. local-lvm)',
});

/** `pve-configid`, at most 40 characters: what PVE accepts as a snapshot name. */
export const snapshotName = z.string().max(40).regex(CONFIGID_RE, {
  error: 'must be a snapshot name: a letter, then letters, digits or "_" (2–40 characters)',
});

/** true to act; otherwise a preview (said once in the server's instructions, not per tool). */
export const confirm = z.boolean().default(false);

/** `wait` for the task, at most `timeout_s` (told once in the instructions). */
export const waitArgs = {
  wait: z.boolean().default(false),
  timeout_s: z.number().int().min(1).max(120).default(60),
};

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Bytes in MiB or GiB with two decimals; null stays null. */
export const toMib = (bytes: number | undefined): number | null =>
  bytes === undefined ? null : round2(bytes / MIB);
export const toGib = (bytes: number | undefined): number | null =>
  bytes === undefined ? null : round2(bytes / GIB);

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Epoch seconds as ISO 8601 UTC; null for absent or zero. */
export function isoSeconds(seconds: number | undefined): string | null {
  return seconds ? new Date(seconds * 1000).toISOString() : null;
}
