// zod schemas for the few Proxmox responses we read. PVE's returns are not closed: booleans
// arrive as 0/1, numbers sometimes as strings, and new keys appear between releases, so each
// schema coerces what it needs and ignores the rest.

import { z } from 'zod';

const NUMERIC_RE = /^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i;

/** A number, or a string holding one. */
export const numeric = z.union([
  z.number(),
  z.string().regex(NUMERIC_RE, 'expected a number').transform(Number),
]);

/** PVE booleans: 0/1, "0"/"1", or (rarely) true/false. */
export const boolish = z
  .union([z.boolean(), z.literal(0), z.literal(1), z.literal('0'), z.literal('1')])
  .transform((v) => v === true || v === 1 || v === '1');

export const resourceItem = z.object({
  type: z.string(),
  vmid: numeric.optional(),
  name: z.string().optional(),
  node: z.string().optional(),
  status: z.string().optional(),
  tags: z.string().optional(),
  template: boolish.optional(),
  maxcpu: numeric.optional(),
  maxmem: numeric.optional(),
  mem: numeric.optional(),
  maxdisk: numeric.optional(),
  uptime: numeric.optional(),
  lock: z.string().optional(),
  pool: z.string().optional(),
});
export type ResourceItem = z.output<typeof resourceItem>;

/** The list is validated item by item, so one odd entry cannot hide the rest. */
export const clusterResources = z.array(z.unknown());

/** `GET /cluster/nextid`: the schema says integer; the wire carries a string such as "100". */
export const nextId = numeric.pipe(z.number().int().min(100).max(999_999_999));

/** `POST /nodes/{node}/qemu` returns the task's UPID. */
export const upidString = z.string().regex(/^UPID:/, 'expected a UPID');

export const taskStatus = z.object({
  status: z.string(),
  exitstatus: z.string().optional(),
  upid: z.string().optional(),
});
export type TaskStatus = z.output<typeof taskStatus>;
