// pve_list_vms: every QEMU VM and LXC container in the cluster from one
// GET /cluster/resources?type=vm, filtered, sorted by vmid and paged with an opaque cursor.
// Where the server reaches several clusters and the call names none, every cluster's, read side
// by side, each guest marked with its cluster and sorted by cluster (in the configured order),
// then vmid; a cluster that does not answer is named (unreachable), the others listed.

import { z } from 'zod';
import { defineReadTool } from '../../calls/tool-spec';
import { clusterResources, resourceItem, type ResourceItem } from '../../proxmox/schemas';
import { tagList } from '../../proxmox/formats';
import { processStatus } from '../../proxmox/guest-state';
import { nodeName, tagName, toGib, toMib } from '../common';
import { notOurCursor } from './paging';
import { orNull, outputExtras } from '../../calls/result';
import { fieldsNamed } from '../../core/fields';
import { clustersToRead, leftOutFields, leftOutText, readClusters } from './each-cluster';

const NAME = 'pve_list_vms';

const input = z.strictObject({
  node: nodeName.optional().describe('Only guests on this node.'),
  type: z.enum(['qemu', 'lxc']).optional().describe('qemu (VMs) or lxc (containers).'),
  status: z
    .enum(['running', 'stopped', 'unknown'])
    .optional()
    .describe('Guest status; unknown means its node is offline.'),
  tag: tagName.optional().describe('Only guests carrying this tag (case-insensitive).'),
  name: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe('Case-insensitive substring of the guest name.'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .describe('Page size, 1–1000 (default 100).'),
  cursor: z.string().max(64).optional().describe('next_cursor from the previous page.'),
});

const guest = z.object({
  /** Where the server reaches several clusters: the guest's (a vmid is unique only within one). */
  cluster: z.string().optional(),
  vmid: z.number(),
  name: z.string().nullable(),
  type: z.enum(['qemu', 'lxc']),
  node: z.string().nullable(),
  status: z.string().nullable(),
  tags: z.array(z.string()),
  ...fieldsNamed('cpus maxmem_mib mem_mib maxdisk_gib uptime_s', orNull.number),
  template: z.boolean(),
});
type Guest = z.output<typeof guest>;

const output = z.object({
  guests: z.array(guest).optional(),
  total: z.number().optional().describe('Guests matching the filters, across all pages.'),
  next_cursor: z
    .string()
    .nullable()
    .optional()
    .describe('Pass as cursor for the next page; null on the last.'),
  ...outputExtras,
});

export const listVms = defineReadTool({
  name: NAME,
  title: 'List VMs and containers',
  acrossClusters: true,
  description: 'List QEMU VMs and LXC containers from cluster resources',
  input,
  output,
  async run(args, ctx) {
    const plan = clustersToRead(ctx, args);
    const after = args.cursor === undefined ? null : decodeCursor(args.cursor, plan.clusters);
    const read = await readClusters(ctx, plan, (pve) =>
      pve.get('/cluster/resources', clusterResources, { type: 'vm' }),
    );
    const all = read.answers
      .flatMap(({ at, cluster, value }) =>
        value.flatMap(toGuest).map((g) => ({ at, g: cluster ? { cluster, ...g } : g })),
      )
      .filter(({ g }) => matches(args)(g))
      .sort((a, b) => a.at - b.at || a.g.vmid - b.g.vmid);
    const rest = after
      ? all.filter(({ at, g }) => at > after.at || (at === after.at && g.vmid > after.vmid))
      : all;
    const page = rest.slice(0, args.limit);
    const last = page.at(-1);
    const next =
      rest.length > page.length && last
        ? encodeCursor(last.g.vmid, plan.clusters.length > 1 ? plan.clusters[last.at]! : null)
        : null;
    const guests = page.map(({ g }) => g);
    return {
      structured: {
        guests,
        total: all.length,
        next_cursor: next,
        ...leftOutFields(plan, read),
      },
      text:
        summarise(guests, all.length, rest.length - page.length, next) +
        leftOutText(plan, read, 'guests'),
    };
  },
});

function toGuest(raw: unknown): Guest[] {
  const parsed = resourceItem.safeParse(raw);
  if (!parsed.success) return [];
  const r: ResourceItem = parsed.data;
  if ((r.type !== 'qemu' && r.type !== 'lxc') || r.vmid === undefined || !Number.isInteger(r.vmid))
    return [];
  return [
    {
      vmid: r.vmid,
      name: r.name ?? null,
      type: r.type,
      node: r.node ?? null,
      status: r.status ?? null,
      tags: tagList(r.tags),
      cpus: r.maxcpu ?? null,
      maxmem_mib: toMib(r.maxmem),
      mem_mib: toMib(r.mem),
      maxdisk_gib: toGib(r.maxdisk),
      uptime_s: r.uptime ?? null,
      template: r.template ?? false,
    },
  ];
}

function matches(args: z.output<typeof input>): (g: Guest) => boolean {
  const name = args.name?.toLowerCase();
  const tag = args.tag?.toLowerCase();
  return (g) =>
    (args.node === undefined || g.node === args.node) &&
    (args.type === undefined || g.type === args.type) &&
    // A paused VM is listed `paused`, and is running (its QEMU runs).
    (args.status === undefined || (g.status !== null && processStatus(g.status) === args.status)) &&
    (tag === undefined || g.tags.some((t) => t.toLowerCase() === tag)) &&
    (name === undefined || (g.name ?? '').toLowerCase().includes(name));
}

// Keyset pagination on vmid (over several clusters, on the cluster, by name, then vmid): stable
// while guests come and go between pages. A cursor names the cluster it stopped in: one the list
// does not read (another call's, or one the policy refuses now) is not ours.
function encodeCursor(vmid: number, cluster: string | null): string {
  return btoa(cluster === null ? `after:${vmid}` : `after:${cluster}:${vmid}`).replace(/=+$/, '');
}

function decodeCursor(
  cursor: string,
  clusters: readonly (string | null)[],
): { at: number; vmid: number } {
  let text = '';
  try {
    text = atob(cursor);
  } catch {
    // fall through to the error below
  }
  if (clusters.length > 1) {
    const m = /^after:([a-z][a-z0-9-]{0,23}):(\d{1,10})$/.exec(text);
    const at = m ? clusters.indexOf(m[1]!) : -1;
    if (!m || at < 0) throw notOurCursor(NAME);
    return { at, vmid: Number(m[2]) };
  }
  const m = /^after:(\d{1,10})$/.exec(text);
  if (!m) throw notOurCursor(NAME);
  return { at: 0, vmid: Number(m[1]) };
}

function summarise(page: Guest[], total: number, remaining: number, next: string | null): string {
  if (total === 0) return 'No guests match.';
  const lines = page.map(
    (g) =>
      `${g.cluster ? `${g.cluster}/` : ''}${g.vmid} ${g.type} ${g.name ?? '(no name)'} ${g.status ?? '?'} on ${g.node ?? '?'}` +
      `${g.cpus !== null ? `, ${g.cpus} cpu` : ''}${g.maxmem_mib !== null ? `, ${g.maxmem_mib} MiB` : ''}` +
      `${g.tags.length ? `, tags ${g.tags.join(';')}` : ''}${g.template ? ', template' : ''}`,
  );
  const more = next ? `\n${remaining} more: call again with cursor "${next}".` : '';
  return `${total} guest${total === 1 ? '' : 's'} match; showing ${page.length}:\n${lines.join('\n')}${more}`;
}
