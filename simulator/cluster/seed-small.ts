// The `small` seed: a second site beside the full one, for a server that reaches two clusters
// (npm start with PVE_CLUSTERS). Two nodes, hv1 and hv2, on another network; storages `local`
// (dir) and `local-lvm` (lvmthin); pool `prod`; five guests: VM 100 (`gw01`, the same id as the
// full seed's web01, so a vmid alone does not say which cluster is meant), VMs 400-402 and
// container 410; nextid is 101. No HA, no replication, no backup server: a plain cluster.
import type { ClusterState, StorageDef } from './cluster-state.ts';
import { disk, type GuestSpec, lxcConfig, qemuConfig } from './seed-guest-builders.ts';
import { seedGuests } from './seed-guests.ts';
import { node } from './seed-nodes.ts';
import { backupFile, type FileSpec, fileVolumes, guestVolumes } from './seed-volumes.ts';

const EPYC = 'AMD EPYC 7313P 16-Core Processor';
const NETWORK = '10.20.0';

const STORAGES: readonly StorageDef[] = [
  {
    id: 'local',
    type: 'dir',
    content: ['backup', 'vztmpl', 'iso'],
    shared: false,
    maxdisk: 100_861_726_720,
    disk: 9_126_805_504,
    path: '/var/lib/vz',
    extra: { 'prune-backups': 'keep-last=3' },
  },
  {
    id: 'local-lvm',
    type: 'lvmthin',
    content: ['images', 'rootdir'],
    shared: false,
    maxdisk: 3_690_987_520_000,
    disk: 301_989_888_000,
    extra: { thinpool: 'data', vgname: 'pve' },
  },
];

const GUESTS: readonly GuestSpec[] = [
  {
    vmid: 100,
    type: 'qemu',
    node: 'hv1',
    running: true,
    pool: 'prod',
    agentUp: true,
    config: qemuConfig(100, 'gw01', 2, 2048, {
      agent: '1',
      onboot: '1',
      scsi0: disk('local-lvm:vm-100-disk-0', '16G'),
      tags: 'edge;prod',
    }),
  },
  {
    vmid: 400,
    type: 'qemu',
    node: 'hv1',
    running: true,
    pool: 'prod',
    agentUp: true,
    config: qemuConfig(400, 'app01', 4, 8192, {
      agent: '1',
      onboot: '1',
      scsi0: disk('local-lvm:vm-400-disk-0', '64G'),
      tags: 'app;prod',
    }),
  },
  {
    vmid: 401,
    type: 'qemu',
    node: 'hv2',
    running: true,
    pool: 'prod',
    agentUp: true,
    config: qemuConfig(401, 'app02', 4, 8192, {
      agent: '1',
      onboot: '1',
      scsi0: disk('local-lvm:vm-401-disk-0', '64G'),
      tags: 'app;prod',
    }),
  },
  {
    vmid: 402,
    type: 'qemu',
    node: 'hv2',
    running: false,
    config: qemuConfig(402, 'db02', 8, 32768, {
      agent: '1',
      scsi0: disk('local-lvm:vm-402-disk-0', '200G', ',discard=on,iothread=1'),
      tags: 'db',
    }),
  },
  {
    vmid: 410,
    type: 'lxc',
    node: 'hv2',
    running: true,
    pool: 'prod',
    config: lxcConfig(410, 'cache01', 2, 4096, {
      onboot: '1',
      rootfs: 'local-lvm:vm-410-disk-0,size=16G',
      tags: 'prod',
    }),
  },
];

function files(now: number): FileSpec[] {
  return [
    {
      volname: 'iso/debian-13.1.0-amd64-netinst.iso',
      vtype: 'iso',
      format: 'iso',
      size: 790_626_304,
      ageDays: 35,
    },
    {
      volname: 'vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
      vtype: 'vztmpl',
      format: 'tzst',
      size: 129_435_417,
      ageDays: 35,
    },
    backupFile(now, 'qemu', 400, 1, 6_442_450_944, { nodes: ['hv1'], notes: 'nightly' }),
  ];
}

export function seedSmallCluster(now: number, name: string): ClusterState {
  const nodes = [
    node(
      'hv1',
      {
        nodeid: 1,
        maxcpu: 32,
        sockets: 1,
        cpuModel: EPYC,
        maxmem: 135_089_844_224,
        mem: 41_875_931_136,
        cpu: 0.0621,
        uptime: 3_024_118,
        network: NETWORK,
      },
      now,
    ),
    node(
      'hv2',
      {
        nodeid: 2,
        maxcpu: 32,
        sockets: 1,
        cpuModel: EPYC,
        maxmem: 135_089_844_224,
        mem: 29_527_900_160,
        cpu: 0.0318,
        uptime: 3_023_907,
        network: NETWORK,
      },
      now,
    ),
  ];
  const state: ClusterState = {
    name,
    nodes,
    storages: [...STORAGES],
    volumes: [],
    pools: new Map([['prod', { comment: 'Production services' }]]),
    guests: new Map(seedGuests(now, GUESTS).map((guest) => [guest.vmid, guest])),
    haResources: new Map(),
    replication: new Map(),
    tasks: new Map(),
  };
  state.volumes = [...fileVolumes(state, files(now), now), ...guestVolumes(state, now)];
  return state;
}
