// Cluster-wide reads: the Proxmox version, the cluster's quorum and members, the nodes with
// their load, and one node's metrics. Each is one GET; figures come back in MiB/GiB and seconds.
// Where the server reaches several clusters and the call names none, the status and the nodes
// are every cluster's, each marked with its own (each-cluster.ts).

import { z } from 'zod';
import { defineReadTool } from '../../calls/tool-spec';
import {
  anyList,
  clusterStatusItem,
  nodeListItem,
  nodeStatus,
  parseEach,
  versionInfo,
} from '../../proxmox/schemas';
import { nodeName, round2, toGib, toMib } from '../common';
import { orNull, outputExtras } from '../../calls/result';
import { fieldsNamed } from '../../core/fields';
import { clustersToRead, leftOutFields, leftOutText, readClusters } from './each-cluster';

export const getVersion = defineReadTool({
  name: 'pve_get_version',
  title: 'Proxmox VE version',
  description: 'Proxmox VE version of the API answering.',
  output: z.object({
    version: z.string().optional(),
    release: z.string().nullable().optional(),
    repoid: z.string().nullable().optional(),
    ...outputExtras,
  }),
  async run(_args, ctx) {
    const v = await ctx.pve().get('/version', versionInfo);
    return {
      structured: { version: v.version, release: v.release ?? null, repoid: v.repoid ?? null },
      text: `Proxmox VE ${v.version}${v.repoid ? ` (${v.repoid})` : ''}.`,
    };
  },
});

const member = z.object({
  /** Where the server reaches several clusters: the member's. */
  cluster: z.string().optional(),
  name: z.string(),
  online: z.boolean(),
  ip: z.string().nullable(),
  nodeid: z.number().nullable(),
  local: z.boolean(),
  level: z.string().nullable(),
});

/** What one cluster's /cluster/status says: its name and quorum, and its members by name. */
function clusterStatus(items: z.output<typeof clusterStatusItem>[]) {
  const c = items.find((i) => i.type === 'cluster');
  const cluster = c
    ? { name: c.name ?? '', quorate: c.quorate ?? false, nodes: c.nodes ?? null }
    : null;
  const nodes = items
    .filter((i) => i.type === 'node')
    .map((n) => ({
      name: n.name ?? '',
      online: n.online ?? false,
      ip: n.ip ?? null,
      nodeid: n.nodeid ?? null,
      local: n.local ?? false,
      level: n.level || null,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const offline = nodes.filter((n) => !n.online).map((n) => n.name);
  const head = cluster
    ? `Cluster ${cluster.name}: ${cluster.quorate ? 'quorate' : 'NOT quorate (writes are blocked)'}`
    : 'A single node, not in a cluster';
  const text = `${head}; ${nodes.length - offline.length} of ${nodes.length} nodes online${offline.length ? ` (offline: ${offline.join(', ')})` : ''}.`;
  return { cluster, nodes, text };
}

export const getClusterStatus = defineReadTool({
  name: 'pve_get_cluster_status',
  title: 'Cluster status',
  acrossClusters: true,
  description: 'Cluster name, quorum, and which nodes are online or offline.',
  output: z.object({
    cluster: z
      .object({ name: z.string(), quorate: z.boolean(), nodes: z.number().nullable() })
      .nullable()
      .optional(),
    nodes: z.array(member).optional(),
    ...outputExtras,
  }),
  async run(args, ctx) {
    const plan = clustersToRead(ctx, args);
    const read = await readClusters(ctx, plan, async (pve) =>
      clusterStatus(parseEach(clusterStatusItem, await pve.get('/cluster/status', anyList))),
    );
    // As a call to one of them says it (run-call.ts onOneCluster).
    const named = (cluster: string | undefined, text: string) =>
      cluster ? `Cluster ${cluster}: ${text}` : text;
    const nodes = read.answers.flatMap(({ cluster, value }) =>
      value.nodes.map((n) => (cluster ? { cluster, ...n } : n)),
    );
    // One cluster (the only one, or the one named): its status, as ever.
    const [only] = read.answers;
    if (!plan.across)
      return { structured: { cluster: only!.value.cluster, nodes }, text: only!.value.text };
    // Every cluster: each one's status under its name, every member marked with its cluster.
    const clusters = read.answers.map(({ cluster, value }) => ({
      cluster: cluster!,
      status: value.cluster,
    }));
    return {
      structured: { clusters, nodes, ...leftOutFields(plan, read) },
      text: (
        read.answers.map(({ cluster, value }) => named(cluster, value.text)).join('\n') +
        leftOutText(plan, read, 'nodes')
      ).trim(),
    };
  },
});

const nodeRow = z.object({
  /** Where the server reaches several clusters: the node's. */
  cluster: z.string().optional(),
  node: z.string(),
  status: z.string().nullable(),
  ...fieldsNamed('cpu_percent cpus mem_mib maxmem_mib uptime_s', orNull.number),
});

export const listNodes = defineReadTool({
  name: 'pve_list_nodes',
  title: 'List nodes',
  acrossClusters: true,
  description: 'The cluster nodes with status, CPU, memory and uptime.',
  output: z.object({ nodes: z.array(nodeRow).optional(), ...outputExtras }),
  async run(args, ctx) {
    const plan = clustersToRead(ctx, args);
    const read = await readClusters(ctx, plan, (pve) => pve.get('/nodes', anyList));
    const nodes = read.answers.flatMap(({ cluster, value }) =>
      parseEach(nodeListItem, value)
        .map((n) => ({
          ...(cluster ? { cluster } : {}),
          node: n.node,
          status: n.status ?? null,
          cpu_percent: n.cpu === undefined ? null : round2(n.cpu * 100),
          cpus: n.maxcpu ?? null,
          mem_mib: toMib(n.mem),
          maxmem_mib: toMib(n.maxmem),
          uptime_s: n.uptime ?? null,
        }))
        .sort((a, b) => a.node.localeCompare(b.node)),
    );
    const lines = nodes.map(
      (n) =>
        `${n.cluster ? `${n.cluster}/` : ''}${n.node} ${n.status ?? '?'}${n.cpu_percent !== null ? `, CPU ${n.cpu_percent}% of ${n.cpus}` : ''}${n.maxmem_mib ? `, memory ${n.mem_mib}/${n.maxmem_mib} MiB` : ''}`,
    );
    return {
      structured: { nodes, ...leftOutFields(plan, read) },
      text:
        `${nodes.length} node${nodes.length === 1 ? '' : 's'}:\n${lines.join('\n')}` +
        leftOutText(plan, read, 'nodes'),
    };
  },
});

const usage = z
  .object({
    total_gib: z.number().nullable(),
    used_gib: z.number().nullable(),
    free_gib: z.number().nullable(),
  })
  .nullable();

export const getNodeMetrics = defineReadTool({
  name: 'pve_get_node_metrics',
  title: 'Node metrics',
  description: "One node's CPU, load, memory, swap, root disk, uptime and versions.",
  input: z.strictObject({ node: nodeName.describe('Node, e.g. pve1.') }),
  output: z.object({
    node: z.string().optional(),
    cpu_percent: z.number().nullable().optional(),
    iowait_percent: z.number().nullable().optional(),
    loadavg: z.array(z.number()).optional(),
    memory: usage.optional(),
    swap: usage.optional(),
    rootfs: usage.optional(),
    uptime_s: z.number().nullable().optional(),
    cpu_model: z.string().nullable().optional(),
    cpus: z.number().nullable().optional(),
    kernel: z.string().nullable().optional(),
    pve_version: z.string().nullable().optional(),
    ...outputExtras,
  }),
  async run(args, ctx) {
    const s = await ctx.pve().get(`/nodes/${encodeURIComponent(args.node)}/status`, nodeStatus);
    const gib = (
      u: { total?: number; used?: number; free?: number; avail?: number } | undefined,
    ) =>
      u
        ? { total_gib: toGib(u.total), used_gib: toGib(u.used), free_gib: toGib(u.free ?? u.avail) }
        : null;
    const structured = {
      node: args.node,
      cpu_percent: s.cpu === undefined ? null : round2(s.cpu * 100),
      iowait_percent: s.wait === undefined ? null : round2(s.wait * 100),
      loadavg: s.loadavg ?? [],
      memory: gib(s.memory),
      swap: gib(s.swap),
      rootfs: gib(s.rootfs),
      uptime_s: s.uptime ?? null,
      cpu_model: s.cpuinfo?.model ?? null,
      cpus: s.cpuinfo?.cpus ?? null,
      kernel: s.kversion ?? null,
      pve_version: s.pveversion ?? null,
    };
    const m = structured.memory;
    return {
      structured,
      text:
        `${args.node}: CPU ${structured.cpu_percent ?? '?'}%${structured.cpus ? ` of ${structured.cpus}` : ''}, load ${structured.loadavg.join(' ') || '?'}` +
        `${m ? `, memory ${m.used_gib}/${m.total_gib} GiB` : ''}${structured.rootfs ? `, root disk ${structured.rootfs.used_gib}/${structured.rootfs.total_gib} GiB` : ''}` +
        `${structured.uptime_s !== null ? `, up ${Math.floor(structured.uptime_s / 86_400)} days` : ''}.`,
    };
  },
});
