// The seeded cluster every tenant starts from: 3 nodes, 12 guests with gaps in their ids
// (100-105, 110, 200, 201, 300, 301, 9000, so nextid is 106), storages, pools, ISOs, bridges.
// Figures are modelled on the go-proxmox pve9x capture (bytes, 0/1 flags, fractional cpu).
import { createHash } from 'node:crypto';
import type { ClusterState, Guest, GuestType, NodeState, StorageDef } from './cluster-state.ts';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

const COMMON_ISOS = [
  'debian-12.7.0-amd64-netinst.iso',
  'debian-13.1.0-amd64-netinst.iso',
  'ubuntu-24.04.3-live-server-amd64.iso',
];
/** Only on pve1's node-local `local` storage, so "ISO missing on that node" can be tested. */
const PVE1_ONLY_ISOS = ['virtio-win-0.1.271.iso', 'Win11_24H2_English_x64.iso'];

interface NodeSpec {
  readonly maxcpu: number;
  readonly maxmem: number;
  readonly mem: number;
  readonly cpu: number;
  readonly uptime: number;
  readonly extra?: Partial<NodeState>;
}

function node(
  name: string,
  spec: NodeSpec,
  now: number,
): NodeState {
  return {
    name,
    online: true,
    maxcpu: spec.maxcpu,
    maxmem: spec.maxmem,
    mem: spec.mem,
    cpu: spec.cpu,
    maxdisk: 100_861_726_720,
    disk: 11_843_256_320 + spec.maxcpu * 104_857_600,
    bootedAt: now - spec.uptime * 1000,
    sslFingerprint: fingerprintFor(name),
    bridges: ['vmbr0'],
    isos: COMMON_ISOS,
    templates: ['debian-13-standard_13.1-2_amd64.tar.zst'],
    ...spec.extra,
  };
}

/** A stable, fake SHA-256 certificate fingerprint per node name (dev data only). */
function fingerprintFor(name: string): string {
  const digest = createHash('sha256').update(`pve-simulator-cert:${name}`).digest('hex').toUpperCase();
  return digest.match(/../g)?.join(':') ?? digest;
}

type GuestSpec = [vmid: number, type: GuestType, node: string, name: string, running: boolean,
  cpus: number, maxmemMiB: number, maxdiskGiB: number, tags?: string, pool?: string];

const GUESTS: readonly GuestSpec[] = [
  [100, 'qemu', 'pve1', 'web01', true, 2, 4096, 32, 'prod;web', 'prod'],
  [101, 'qemu', 'pve1', 'web02', true, 2, 4096, 32, 'prod;web', 'prod'],
  [102, 'qemu', 'pve1', 'db01', true, 4, 16384, 128, 'db;prod', 'prod'],
  [103, 'qemu', 'pve2', 'ci-runner01', true, 4, 8192, 64, 'ci'],
  [104, 'qemu', 'pve2', 'win11-lab', false, 4, 8192, 80, 'lab;windows', 'lab'],
  [105, 'qemu', 'pve3', 'k8s-worker01', true, 4, 8192, 50, 'k8s'],
  [110, 'lxc', 'pve1', 'dns01', true, 1, 512, 8, 'infra'],
  [200, 'lxc', 'pve2', 'proxy01', true, 2, 1024, 10, 'prod;web', 'prod'],
  [201, 'lxc', 'pve2', 'monitoring', true, 2, 2048, 32, 'infra;monitoring'],
  [300, 'qemu', 'pve3', 'backup-test', false, 2, 2048, 32],
  [301, 'lxc', 'pve3', 'old-wiki', false, 1, 512, 8, 'legacy'],
  [9000, 'qemu', 'pve1', 'debian-13-cloudinit', false, 2, 2048, 3.5, 'template'],
];

function guest(spec: GuestSpec, index: number, now: number): Guest {
  const [vmid, type, nodeName, name, running, cpus, maxmemMiB, maxdiskGiB, tags, pool] = spec;
  const maxmem = maxmemMiB * MIB;
  const maxdisk = Math.round(maxdiskGiB * GIB);
  const load = (index % 5) + 1;
  return {
    vmid,
    type,
    node: nodeName,
    name,
    status: running ? 'running' : 'stopped',
    template: vmid === 9000,
    cpus,
    maxmem,
    mem: running ? Math.round(maxmem * (0.35 + load * 0.08)) : 0,
    maxdisk,
    // PVE reports disk usage only for containers; for VMs it is 0 without the guest agent.
    disk: type === 'lxc' && running ? Math.round(maxdisk * (0.1 + load * 0.07)) : 0,
    ...(type === 'lxc' ? { maxswap: 512 * MIB } : {}),
    cpu: running ? Math.round((0.0049 * load + 0.0003 * index) * 1e6) / 1e6 : 0,
    netin: running ? 2_456_116_121 - index * 97_531_357 : 0,
    netout: running ? 545_248_946 - index * 31_415_926 : 0,
    diskread: running ? 4_510_777_856 - index * 123_456_789 : 0,
    diskwrite: running ? 6_059_209_728 - index * 234_567_890 : 0,
    ...(running ? { bootedAt: now - (874_350 - index * 3_600) * 1000 } : {}),
    ...(running ? { pid: 1_044_989 + index * 7_919 } : {}),
    ...(tags !== undefined ? { tags } : {}),
    ...(pool !== undefined ? { pool } : {}),
  };
}

const STORAGES: readonly StorageDef[] = [
  {
    id: 'local', type: 'dir', content: ['backup', 'vztmpl', 'iso'], shared: false,
    maxdisk: 100_861_726_720, disk: 14_446_702_592,
  },
  {
    id: 'local-lvm', type: 'lvmthin', content: ['images', 'rootdir'], shared: false,
    maxdisk: 1_845_493_760_000, disk: 412_316_860_416,
  },
  {
    id: 'ceph-pool', type: 'rbd', content: ['images', 'rootdir'], shared: true,
    maxdisk: 5_497_558_138_880, disk: 1_319_413_953_331,
  },
];

export function seedCluster(now: number): ClusterState {
  const nodes = [
    node('pve1', {
      maxcpu: 16, maxmem: 67_350_347_776, mem: 28_991_029_248, cpu: 0.0412, uptime: 1_209_731,
      extra: { bridges: ['vmbr0', 'vmbr1'], isos: [...COMMON_ISOS, ...PVE1_ONLY_ISOS] },
    }, now),
    node('pve2', { maxcpu: 12, maxmem: 33_567_911_936, mem: 8_127_873_024, cpu: 0.0036, uptime: 874_373 }, now),
    node('pve3', { maxcpu: 8, maxmem: 16_651_702_272, mem: 5_698_938_880, cpu: 0.0072, uptime: 872_920 }, now),
  ];
  return {
    nodes,
    storages: [...STORAGES],
    pools: new Map([
      ['prod', { comment: 'Production services' }],
      ['lab', { comment: 'Test and lab machines' }],
    ]),
    guests: new Map(GUESTS.map((spec, index) => [spec[0], guest(spec, index, now)])),
    tasks: new Map(),
  };
}
