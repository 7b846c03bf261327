// The seeded volumes: ISOs, container templates, import images and backups on each node's local
// `local` directory storage (some only on pve1, so "missing on that node" can be tested), one
// image per disk, cloud-init drive and RAM state that the seeded guest configs reference, the
// replicas replication jobs keep on their target nodes, backups on the PBS storage, and one
// unreferenced disk (for destroy-unreferenced-disks). Backups carry their guest's config.
import {
  findStorage,
  type ClusterState,
  type Guest,
  type Volume,
  type VolumeType,
} from './cluster-state.ts';
import { isVolumeKey, parseProps, parseSize, volumeOf } from './guest-config.ts';
import { archivedConfig } from './backups.ts';
import { pbsBackups } from './seed-pbs.ts';
import { parseVolname, parseVolumeId } from './volumes.ts';

const MIB = 1024 ** 2;

export interface FileSpec {
  readonly volname: string;
  readonly vtype: VolumeType;
  readonly format: string;
  readonly size: number;
  readonly ageDays: number;
  readonly nodes?: readonly string[];
  readonly owner?: number;
  readonly notes?: string;
  readonly protected?: boolean;
  readonly subtype?: string;
}

/** vzdump names carry their start time: vzdump-<type>-<vmid>-YYYY_MM_DD-HH_MM_SS.<ext>. */
function backupName(type: 'qemu' | 'lxc', vmid: number, at: Date, ext: string): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const date = `${at.getUTCFullYear()}_${pad(at.getUTCMonth() + 1)}_${pad(at.getUTCDate())}`;
  const time = `${pad(at.getUTCHours())}_${pad(at.getUTCMinutes())}_${pad(at.getUTCSeconds())}`;
  return `backup/vzdump-${type}-${vmid}-${date}-${time}.${ext}`;
}

/** A vzdump archive on `local` (on pve1 unless `extra.nodes` says), `days` old. */
export function backupFile(
  now: number,
  type: 'qemu' | 'lxc',
  vmid: number,
  days: number,
  size: number,
  extra: Partial<FileSpec> = {},
): FileSpec {
  const day = new Date(Math.floor(now / 86_400_000 - days) * 86_400_000 + 7_203_000);
  return {
    volname: backupName(type, vmid, day, type === 'qemu' ? 'vma.zst' : 'tar.zst'),
    vtype: 'backup',
    format: type === 'qemu' ? 'vma.zst' : 'tar.zst',
    size,
    ageDays: days,
    nodes: ['pve1'],
    owner: vmid,
    subtype: type,
    ...extra,
  };
}

function fileSpecs(now: number): FileSpec[] {
  const backup = (
    type: 'qemu' | 'lxc',
    vmid: number,
    days: number,
    size: number,
    extra: Partial<FileSpec> = {},
  ) => backupFile(now, type, vmid, days, size, extra);
  return [
    {
      volname: 'iso/debian-12.7.0-amd64-netinst.iso',
      vtype: 'iso',
      format: 'iso',
      size: 661_651_456,
      ageDays: 200,
    },
    {
      volname: 'iso/debian-13.1.0-amd64-netinst.iso',
      vtype: 'iso',
      format: 'iso',
      size: 790_626_304,
      ageDays: 40,
    },
    {
      volname: 'iso/ubuntu-24.04.3-live-server-amd64.iso',
      vtype: 'iso',
      format: 'iso',
      size: 3_213_064_192,
      ageDays: 90,
    },
    {
      volname: 'iso/virtio-win-0.1.271.iso',
      vtype: 'iso',
      format: 'iso',
      size: 709_656_576,
      ageDays: 60,
      nodes: ['pve1'],
    },
    {
      volname: 'iso/Win11_24H2_English_x64.iso',
      vtype: 'iso',
      format: 'iso',
      size: 5_819_484_160,
      ageDays: 60,
      nodes: ['pve1'],
    },
    {
      volname: 'vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
      vtype: 'vztmpl',
      format: 'tzst',
      size: 129_435_417,
      ageDays: 30,
    },
    {
      volname: 'vztmpl/alpine-3.22-default_20250617_amd64.tar.xz',
      vtype: 'vztmpl',
      format: 'txz',
      size: 3_146_264,
      ageDays: 20,
      nodes: ['pve1'],
    },
    {
      volname: 'import/debian-12-genericcloud-amd64.qcow2',
      vtype: 'import',
      format: 'qcow2',
      size: 343_343_104,
      ageDays: 25,
    },
    {
      volname: 'import/ubuntu-24.04-server-cloudimg.ova',
      vtype: 'import',
      format: 'ova',
      size: 612_884_480,
      ageDays: 10,
      nodes: ['pve1'],
    },
    backup('qemu', 100, 1, 1_932_735_283, { notes: 'nightly' }),
    backup('qemu', 100, 8, 1_901_412_086, { notes: 'weekly, before kernel 6.14', protected: true }),
    backup('qemu', 102, 1, 14_173_392_076, { notes: 'nightly' }),
    backup('lxc', 110, 1, 297_795_584),
  ];
}

/** Files on each node's `local` storage (or the nodes a spec names), each backup with its config. */
export function fileVolumes(
  state: ClusterState,
  specs: readonly FileSpec[],
  now: number,
): Volume[] {
  const res: Volume[] = [];
  for (const spec of specs) {
    for (const node of spec.nodes ?? state.nodes.map((n) => n.name)) {
      const { nodes: _nodes, ageDays, ...rest } = spec;
      res.push({
        storage: 'local',
        node,
        ...rest,
        ctime: Math.floor(now / 1000) - ageDays * 86_400,
      });
    }
  }
  return res.map((volume) => withConfig(state, volume));
}

/** One image per volume a guest config (or snapshot) references on a guest-image storage. */
function images(state: ClusterState, guest: Guest, now: number): Volume[] {
  const found = new Map<string, number>();
  for (const config of [guest.config, ...guest.snapshots.values()]) {
    for (const [key, value] of Object.entries(config)) {
      if (key === 'vmstate') found.set(value, (Number(config.memory ?? 512) * 2 + 500) * MIB);
      if (!isVolumeKey(guest.type, key)) continue;
      const volid = volumeOf(guest.type, value);
      const size =
        parseSize(parseProps(value).size ?? '') ?? (/cloudinit/.test(volid) ? 4 * MIB : 0);
      found.set(volid, size);
    }
  }
  const res: Volume[] = [];
  for (const [volid, size] of found) {
    const parsed = parseVolumeId(volid);
    const storage = state.storages.find((s) => s.id === parsed?.storeid);
    if (!parsed || !storage || storage.type === 'dir') continue;
    res.push({
      storage: storage.id,
      node: storage.shared ? undefined : guest.node,
      volname: parsed.volname,
      vtype: 'images',
      format: parseVolname(state, volid).format ?? 'raw',
      size,
      ctime: Math.floor(now / 1000) - 30 * 86_400,
      owner: guest.vmid,
    });
  }
  return res;
}

/** A disk of VM 300 that its config no longer references (left over by an aborted operation). */
function orphans(now: number): Volume[] {
  return [
    {
      storage: 'local-lvm',
      node: 'pve3',
      volname: 'vm-300-disk-1',
      vtype: 'images',
      format: 'raw',
      size: 8 * 1024 ** 3,
      ctime: Math.floor(now / 1000) - 90 * 86_400,
      owner: 300,
    },
  ];
}

/** A replication job keeps a copy of the guest's node-local volumes on its target node. */
function replicas(state: ClusterState, guestImages: readonly Volume[]): Volume[] {
  return [...state.replication.values()].flatMap((job) =>
    guestImages
      .filter((v) => v.owner === job.guest && !findStorage(state, v.storage)?.shared)
      .map((v) => ({ ...v, node: job.target })),
  );
}

/** Each seeded backup holds its guest's config as it is now (what a restore brings back). */
function withConfig(state: ClusterState, volume: Volume): Volume {
  const guest = volume.vtype === 'backup' ? state.guests.get(volume.owner ?? 0) : undefined;
  return guest ? { ...volume, backupConfig: archivedConfig(guest.config) } : volume;
}

/** Every guest's disks, cloud-init drives and RAM states, and their replicas. */
export function guestVolumes(state: ClusterState, now: number): Volume[] {
  const guestImages = [...state.guests.values()].flatMap((guest) => images(state, guest, now));
  return [...guestImages, ...replicas(state, guestImages)];
}

export function seedVolumes(state: ClusterState, now: number): Volume[] {
  return [
    ...fileVolumes(state, fileSpecs(now), now),
    ...guestVolumes(state, now),
    ...pbsBackups(now).map((volume) => withConfig(state, volume)),
    ...orphans(now),
  ];
}
