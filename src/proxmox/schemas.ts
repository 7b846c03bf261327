// zod schemas for the few Proxmox responses we read. PVE's returns are not closed: booleans
// arrive as 0/1, numbers sometimes as strings, and new keys appear between releases, so each
// schema coerces what it needs and ignores the rest.

import { z } from 'zod';
import { fieldsNamed } from '../core/fields';

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

/** Makers of the fields an answer may leave out, for fieldsNamed. */
export const maybe = {
  text: () => z.string().optional(),
  number: () => numeric.optional(),
  flag: () => boolish.optional(),
};

/** The load figures nodes, guests and storages share (CPU as a fraction, bytes, seconds). */
const usageFields = fieldsNamed('cpu maxcpu mem maxmem disk maxdisk uptime', maybe.number);

/**
 * `GET /access/permissions`: each path with the privileges the token (or user) holds there, each
 * mapped to its propagate flag (0 or 1); a privilege held is a key that is there.
 */
export const accessPermissions = z.record(z.string(), z.record(z.string(), z.unknown()));

/** One `GET /cluster/resources` entry, of any type. */
export const resourceItem = z.object({
  type: z.string(),
  ...fieldsNamed('id name node storage pool sdn status tags lock content', maybe.text),
  ...fieldsNamed('vmid', maybe.number),
  ...fieldsNamed('template shared', maybe.flag),
  ...usageFields,
});
export type ResourceItem = z.output<typeof resourceItem>;

/** The items of a list that fit `schema`; an odd entry is skipped, never fatal to the rest. */
export function parseEach<S extends z.ZodType>(
  schema: S,
  items: readonly unknown[],
): z.output<S>[] {
  return items.flatMap((raw) => {
    const parsed = schema.safeParse(raw);
    return parsed.success ? [parsed.data] : [];
  });
}

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

/** A list whose items are validated one by one by the caller (one odd entry hides nothing). */
export const anyList = z.array(z.unknown());

export const versionInfo = z.object({
  version: z.string(),
  release: z.string().optional(),
  repoid: z.string().optional(),
});

/** One `GET /cluster/status` entry: the cluster itself, or a node. */
export const clusterStatusItem = z.object({
  type: z.string(),
  ...fieldsNamed('name id ip level', maybe.text),
  ...fieldsNamed('nodes version nodeid', maybe.number),
  ...fieldsNamed('quorate online local', maybe.flag),
});

/** One `GET /nodes` entry. */
export const nodeListItem = z.object({
  node: z.string(),
  ...fieldsNamed('status level', maybe.text),
  ...usageFields,
});

const usage = z.object(fieldsNamed('total used free', maybe.number));

/** `GET /nodes/{node}/status`. */
export const nodeStatus = z.object({
  cpu: numeric.optional(),
  wait: numeric.optional(),
  loadavg: z.array(numeric).optional(),
  uptime: numeric.optional(),
  memory: usage.optional(),
  swap: usage.optional(),
  rootfs: usage.extend({ avail: numeric.optional() }).optional(),
  kversion: z.string().optional(),
  pveversion: z.string().optional(),
  cpuinfo: z
    .object({
      model: z.string().optional(),
      cpus: numeric.optional(),
      sockets: numeric.optional(),
      cores: numeric.optional(),
    })
    .optional(),
});

/** `GET /nodes/{node}/{qemu|lxc}/{vmid}/status/current`. */
export const guestStatus = z.object({
  status: z.string(),
  ...fieldsNamed('qmpstatus name lock tags', maybe.text),
  ...fieldsNamed('cpus cpu mem maxmem disk maxdisk uptime pid netin netout', maybe.number),
  ...fieldsNamed('template agent', maybe.flag),
});
export type GuestStatus = z.output<typeof guestStatus>;

/** One `GET .../snapshot` entry; `current` is the pseudo-entry for the live state. */
export const snapshotItem = z.object({
  name: z.string(),
  parent: z.string().optional(),
  snaptime: numeric.optional(),
  vmstate: boolish.optional(),
  description: z.string().optional(),
});

/** A guest config: keys to strings or numbers (PVE sends both). */
export const guestConfig = z.record(z.string(), z.union([z.string(), z.number()]));

/** `GET /nodes/{node}/tasks/{upid}/log` lines. */
export const taskLogLines = z.array(z.object({ n: numeric, t: z.string() }));

/** The QEMU guest agent's `network-get-interfaces`: `{result: [...]}`. */
export const agentInterfaces = z.object({
  result: z.array(
    z.object({
      name: z.string(),
      'hardware-address': z.string().optional(),
      'ip-addresses': z
        .array(
          z.object({
            'ip-address': z.string(),
            'ip-address-type': z.string(),
            prefix: numeric.optional(),
          }),
        )
        .optional(),
    }),
  ),
});

/** `GET /nodes/{node}/lxc/{vmid}/interfaces`: PVE 9 lists `ip-addresses`, PVE 8 only inet/inet6; null when stopped. */
export const lxcInterfaces = z
  .array(
    z.object({
      name: z.string(),
      hwaddr: z.string().optional(),
      inet: z.string().optional(),
      inet6: z.string().optional(),
      'ip-addresses': z
        .array(z.object({ 'ip-address': z.string().optional(), prefix: numeric.optional() }))
        .optional(),
    }),
  )
  .nullable();

/** `GET /nodes/{node}/qemu/{vmid}/migrate` (migrate_vm_precondition): where the VM may go and what ties it to its node. */
export const migratePrecondition = z.object({
  running: boolish.optional(),
  allowed_nodes: z.array(z.string()).optional(),
  not_allowed_nodes: z.record(z.string(), z.unknown()).optional(),
  /** Attached disks name their drive; unused ones, snapshot volumes and RAM states do not. */
  local_disks: z
    .array(
      z.object({ volid: z.string(), cdrom: boolish.optional(), drivename: z.string().optional() }),
    )
    .optional(),
  local_resources: z.array(z.string()).optional(),
});
