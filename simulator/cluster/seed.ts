// The seeded cluster every tenant starts from: 3 nodes, 5 storages (dir, LVM-thin, RBD, ZFS and a
// Proxmox Backup Server), pools, 13 guests with gaps in their ids (100-105, 110, 120, 200, 201,
// 300, 301, 9000, so nextid is 106), HA resources, a replication job, and the volumes the guests
// and storages hold. Figures are modelled on the go-proxmox pve9x capture (bytes, 0/1 flags).
import type { ClusterState, StorageDef } from './cluster-state.ts';
import { seedGuests } from './seed-guests.ts';
import { seedHaResources, seedReplication } from './seed-ha.ts';
import { node } from './seed-nodes.ts';
import { seedSmallCluster } from './seed-small.ts';
import { seedVolumes } from './seed-volumes.ts';

/**
 * The clusters a tenant can start as: `full` (this file's) or `small` (seed-small.ts: another
 * site, two nodes and five guests, for a second cluster beside the first).
 */
export const SEEDS = ['full', 'small'] as const;
export type SeedName = (typeof SEEDS)[number];
/** What each seed holds, in a few words (npm start's banner; the simulator's tests check it). */
export const SEED_SUMMARY: Readonly<Record<SeedName, string>> = {
  full: '3 nodes, 13 guests',
  small: '2 nodes, 5 guests',
};

const STORAGES: readonly StorageDef[] = [
  {
    id: 'local',
    type: 'dir',
    content: ['backup', 'vztmpl', 'iso', 'import'],
    shared: false,
    maxdisk: 100_861_726_720,
    disk: 14_446_702_592,
    path: '/var/lib/vz',
    extra: { 'prune-backups': 'keep-all=1' },
  },
  {
    id: 'local-lvm',
    type: 'lvmthin',
    content: ['images', 'rootdir'],
    shared: false,
    maxdisk: 1_845_493_760_000,
    disk: 412_316_860_416,
    extra: { thinpool: 'data', vgname: 'pve' },
  },
  {
    id: 'ceph-pool',
    type: 'rbd',
    content: ['images', 'rootdir'],
    shared: true,
    maxdisk: 5_497_558_138_880,
    disk: 1_319_413_953_331,
    extra: { krbd: 0, pool: 'ceph-pool' },
  },
  {
    id: 'local-zfs',
    type: 'zfspool',
    content: ['images', 'rootdir'],
    shared: false,
    maxdisk: 1_919_850_381_312,
    disk: 287_762_808_832,
    extra: { pool: 'rpool/data', sparse: 1 },
  },
  {
    // pbs is in PVE's shared-storage list; its password lives in /etc/pve/priv, never here.
    id: 'pbs-backup',
    type: 'pbs',
    content: ['backup'],
    shared: true,
    maxdisk: 7_999_376_588_800,
    disk: 2_147_483_648_000,
    extra: {
      datastore: 'store1',
      fingerprint:
        '4f:1c:9a:7e:22:b8:05:d3:6a:91:ce:40:7f:13:e8:52:bd:09:64:a7:3c:f1:28:8e:5d:b6:70:19:c4:ab:e2:3f',
      'prune-backups': 'keep-daily=7,keep-weekly=4',
      server: '10.10.0.50',
      username: 'pve-sync@pbs!pve',
    },
  },
];

export function seedCluster(now: number, name = 'pve-sim', seed: SeedName = 'full'): ClusterState {
  if (seed === 'small') return seedSmallCluster(now, name);
  const xeon = 'Intel(R) Xeon(R) Silver 4314 CPU @ 2.40GHz';
  const nodes = [
    node(
      'pve1',
      {
        nodeid: 1,
        maxcpu: 16,
        sockets: 1,
        cpuModel: xeon,
        maxmem: 67_350_347_776,
        mem: 28_991_029_248,
        cpu: 0.0412,
        uptime: 1_209_731,
        bridges: ['vmbr0', 'vmbr1'],
      },
      now,
    ),
    node(
      'pve2',
      {
        nodeid: 2,
        maxcpu: 12,
        sockets: 1,
        cpuModel: 'AMD Ryzen 9 5900X 12-Core Processor',
        maxmem: 33_567_911_936,
        mem: 8_127_873_024,
        cpu: 0.0036,
        uptime: 874_373,
      },
      now,
    ),
    node(
      'pve3',
      {
        nodeid: 3,
        maxcpu: 8,
        sockets: 1,
        cpuModel: 'Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz',
        maxmem: 16_651_702_272,
        mem: 5_698_938_880,
        cpu: 0.0072,
        uptime: 872_920,
      },
      now,
    ),
  ];
  const state: ClusterState = {
    name,
    nodes,
    storages: [...STORAGES],
    volumes: [],
    pools: new Map([
      ['prod', { comment: 'Production services' }],
      ['lab', { comment: 'Test and lab machines' }],
    ]),
    guests: new Map(seedGuests(now).map((guest) => [guest.vmid, guest])),
    haResources: seedHaResources(),
    replication: seedReplication(),
    tasks: new Map(),
  };
  state.volumes = seedVolumes(state, now);
  return state;
}
