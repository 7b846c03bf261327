// pve_list_resources: everything the cluster knows of (guests, storages, nodes, SDN zones,
// pools) from one GET /cluster/resources, optionally of one type, sorted by id and paged like
// pve_list_vms. PVE's `type` filter has no `pool`: pools are picked out of the full list.

import { z } from 'zod';
import { defineReadTool } from '../../calls/tool-spec';
import { anyList, parseEach, resourceItem, type ResourceItem } from '../../proxmox/schemas';
import { round2, toGib, toMib } from '../common';
import { orNull } from '../../calls/result';
import { fieldsNamed } from '../../core/fields';
import { decodeCursor, pageAfter, pageArgs, pagedOutput } from './paging';

const NAME = 'pve_list_resources';
const TYPES = ['vm', 'storage', 'node', 'sdn', 'pool'] as const;

const input = z.strictObject({
  resource_type: z
    .enum(TYPES)
    .optional()
    .describe('vm (VMs and containers), storage, node, sdn or pool; all when left out.'),
  ...pageArgs(200),
});

const item = z.object({
  id: z.string(),
  type: z.string(),
  ...fieldsNamed('node name status', orNull.text),
  ...fieldsNamed('vmid cpu_percent cpus mem_mib maxmem_mib disk_gib maxdisk_gib', orNull.number),
  content: z.string().nullable(),
  shared: z.boolean().nullable(),
});
type Item = z.output<typeof item>;

function toItem(r: ResourceItem): Item[] {
  if (r.id === undefined) return [];
  return [
    {
      id: r.id,
      type: r.type,
      node: r.node ?? null,
      name: r.name ?? r.storage ?? r.pool ?? r.sdn ?? (r.type === 'node' ? (r.node ?? null) : null),
      status: r.status ?? null,
      vmid: r.vmid ?? null,
      cpu_percent: r.cpu === undefined ? null : round2(r.cpu * 100),
      cpus: r.maxcpu ?? null,
      mem_mib: toMib(r.mem),
      maxmem_mib: toMib(r.maxmem),
      disk_gib: toGib(r.disk),
      maxdisk_gib: toGib(r.maxdisk),
      content: r.content ?? null,
      shared: r.shared ?? null,
    },
  ];
}

export const listResources = defineReadTool({
  name: NAME,
  title: 'List cluster resources',
  description:
    'List cluster resources (guests, storages, nodes, SDN, pools), optionally of one resource_type; paged.',
  input,
  output: pagedOutput('resources', item),
  async run(args, ctx) {
    const after = decodeCursor(NAME, args.cursor);
    const type = args.resource_type;
    const query = type && type !== 'pool' ? { type } : {};
    const all = parseEach(resourceItem, await ctx.pve().get('/cluster/resources', anyList, query))
      .flatMap(toItem)
      // PVE's `vm` filter means both guest kinds; `pool` has no server-side filter.
      .filter(
        (r) =>
          type === undefined ||
          (type === 'vm' ? r.type === 'qemu' || r.type === 'lxc' : r.type === type),
      )
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const { page, next, rest } = pageAfter(NAME, all, (r) => r.id, after, args.limit);
    const lines = page.map((r) =>
      `${r.id} ${r.status ?? ''}${r.name && !r.id.endsWith(r.name) ? ` ${r.name}` : ''}`.trim(),
    );
    const more = next ? `\n${rest} more: call again with cursor "${next}".` : '';
    return {
      structured: { resources: page, total: all.length, next_cursor: next },
      text: all.length
        ? `${all.length} resource${all.length === 1 ? '' : 's'}; showing ${page.length}:\n${lines.join('\n')}${more}`
        : 'No resources match.',
    };
  },
});
