// GET /cluster/status (corosync membership and quorum, pve-manager API2/Cluster.pm get_status)
// and GET /nodes/{node}/status (a node's kernel, CPU, memory, swap and root fs, API2/Nodes.pm).
import { perm } from '../access/permissions.ts';
import { isQuorate, uptimeSeconds } from '../cluster/cluster-state.ts';
import { NODE_PARAM, type HandlerContext, type Route } from './handler-context.ts';
import { requestNode } from './guest-helpers.ts';

const KERNEL_RELEASE = '6.17.2-1-pve';
const KERNEL_VERSION = '#1 SMP PREEMPT_DYNAMIC PMX 6.17.2-1 (2025-10-21T11:55Z)';
/** The node clients talk to: its entry carries local=1. */
const LOCAL_NODE = 'pve1';

function clusterStatus({ state }: HandlerContext): unknown {
  const cluster = {
    type: 'cluster',
    id: 'cluster',
    name: state.name,
    nodes: state.nodes.length,
    version: state.nodes.length + 4,
    quorate: isQuorate(state) ? 1 : 0,
  };
  const nodes = state.nodes.map((node) => ({
    type: 'node',
    id: `node/${node.name}`,
    name: node.name,
    nodeid: node.nodeid,
    local: node.name === LOCAL_NODE ? 1 : 0,
    online: node.online ? 1 : 0,
    ip: node.ip,
    ...(node.online ? { level: '' } : {}),
  }));
  return [cluster, ...nodes];
}

function nodeStatus(ctx: HandlerContext): unknown {
  const node = requestNode(ctx);
  const available = node.maxmem - node.mem;
  const rootUsed = node.disk;
  return {
    uptime: uptimeSeconds(node.bootedAt, ctx.now),
    idle: 0,
    loadavg: [...node.loadavg],
    kversion: `Linux ${KERNEL_RELEASE} ${KERNEL_VERSION}`,
    'current-kernel': {
      sysname: 'Linux',
      release: KERNEL_RELEASE,
      version: KERNEL_VERSION,
      machine: 'x86_64',
    },
    'boot-info': { mode: 'efi', secureboot: 0 },
    cpuinfo: {
      user_hz: 100,
      model: node.cpuModel,
      sockets: node.sockets,
      cpus: node.maxcpu,
      cores: node.maxcpu / node.sockets / 2,
      mhz: '2400.000',
      hvm: '1',
      flags:
        'fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx lm constant_tsc rep_good nopl xtopology cpuid pni pclmulqdq vmx ssse3 fma cx16 sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm abm avx2 bmi1 bmi2',
    },
    cpu: node.cpu,
    wait: 0.0004,
    memory: { total: node.maxmem, used: node.mem, free: Math.round(available * 0.4), available },
    ksm: { shared: 0 },
    swap: { total: node.swapTotal, used: node.swapUsed, free: node.swapTotal - node.swapUsed },
    pveversion: 'pve-manager/9.1.3/e5010dcea566a205',
    rootfs: {
      total: node.maxdisk,
      used: rootUsed,
      avail: node.maxdisk - rootUsed - 5_153_960_755,
      free: node.maxdisk - rootUsed,
    },
  };
}

export const CLUSTER_STATUS_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/cluster/status',
    permissions: perm('/', ['Sys.Audit']),
    schema: {},
    handle: clusterStatus,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/status',
    permissions: perm('/nodes/{node}', ['Sys.Audit']),
    schema: { node: NODE_PARAM },
    handle: nodeStatus,
  },
];
