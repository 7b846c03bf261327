// Volumes as pve-storage parses and keeps them: volume ids (parse_volume_id, each plugin's
// parse_volname), the per-storage volume store (node-local storages hold one set per node), and
// allocating and freeing guest images with PVE's naming (vm-<vmid>-disk-<n>; subvol-<vmid>-disk-<n>
// for container volumes on ZFS).
import { dieError } from '../schema/pve-error.ts';
import {
  findStorage,
  type ClusterState,
  type StorageDef,
  type Volume,
  type VolumeType,
} from './cluster-state.ts';

/** qemu-server $NEW_DISK_RE: `[STORAGE:]SIZE_GiB` allocates a new volume. */
export const NEW_DISK_RE = /^(([^/:\s]+):)?(\d+(\.\d+)?)$/;

export interface ParsedVolume {
  readonly storage: StorageDef;
  readonly volname: string;
  readonly vtype: VolumeType;
  /** The vmid encoded in an image or backup name (vm-100-disk-0 → 100). */
  readonly owner?: number;
  /** A base image (template), which linked clones can share. */
  readonly isBase?: boolean;
  /** The format parse_volname reports where the name decides it (zfs subvol, pbs-vm/pbs-ct). */
  readonly format?: string;
}

export function parseVolumeId(volid: string): { storeid: string; volname: string } | undefined {
  const match = /^([a-z][a-z0-9\-_.]*[a-z0-9]):(.+)$/i.exec(volid);
  return match ? { storeid: match[1] ?? '', volname: match[2] ?? '' } : undefined;
}

export function storageConfig(state: ClusterState, storeid: string): StorageDef {
  const storage = findStorage(state, storeid);
  if (!storage) throw dieError(`storage '${storeid}' does not exist`);
  return storage;
}

const DIR_PATTERNS: readonly [RegExp, VolumeType][] = [
  [/^iso\/[^/]+\.(iso|img)$/i, 'iso'],
  [/^vztmpl\/[^/]+\.tar\.([gx]z|zst|bz2)$/, 'vztmpl'],
  [/^images\/\d+\/[^/]+$/, 'images'],
  [/^backup\/[^/]+$/, 'backup'],
  [/^snippets\/[^/]+$/, 'snippets'],
  [/^import\/[^/]+$/, 'import'],
];

/** DirPlugin: the subdirectory names the content type; images and backups name their owner. */
function parseDirVolname(storage: StorageDef, volname: string): ParsedVolume {
  const vtype = DIR_PATTERNS.find(([re]) => re.test(volname))?.[1];
  if (!vtype) throw dieError(`unable to parse directory volume name '${volname}'`);
  const owner =
    /^images\/(\d+)\//.exec(volname)?.[1] ??
    /^backup\/vzdump-(?:qemu|lxc)-(\d+)-/.exec(volname)?.[1];
  return { storage, volname, vtype, ...(owner ? { owner: Number(owner) } : {}) };
}

/** PBSPlugin: backup/<type>/<id>/<UTC time>; the format is pbs-<type>, numeric ids own it. */
function parsePbsVolname(storage: StorageDef, volname: string): ParsedVolume {
  const match =
    /^backup\/([^\s_]+)\/([^\s_]+)\/([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)$/.exec(
      volname,
    );
  if (!match) throw dieError(`unable to parse PBS volume name '${volname}'`);
  const owner = /^\d+$/.test(match[2] ?? '') ? { owner: Number(match[2]) } : {};
  return { storage, volname, vtype: 'backup', format: `pbs-${match[1]}`, ...owner };
}

/** ZFSPoolPlugin: [base-<id>-…/](vm|base|subvol|basevol)-<id>-…; subvols are containers'. */
function parseZfsVolname(storage: StorageDef, volname: string): ParsedVolume {
  const match = /^(((base|basevol)-(\d+)-\S+)\/)?((base|basevol|vm|subvol)-(\d+)-\S+)$/.exec(
    volname,
  );
  if (!match) throw dieError(`unable to parse zfs volume name '${volname}'`);
  const kind = match[6] ?? '';
  return {
    storage,
    volname,
    vtype: 'images',
    owner: Number(match[7]),
    isBase: kind === 'base' || kind === 'basevol',
    format: kind === 'subvol' || kind === 'basevol' ? 'subvol' : 'raw',
  };
}

/** PVE::Storage::parse_volname for the simulator's storage types. */
export function parseVolname(state: ClusterState, volid: string): ParsedVolume {
  const parsed = parseVolumeId(volid);
  if (!parsed) throw dieError(`unable to parse volume ID '${volid}'`);
  const storage = storageConfig(state, parsed.storeid);
  const { volname } = parsed;
  if (storage.type === 'dir') return parseDirVolname(storage, volname);
  if (storage.type === 'pbs') return parsePbsVolname(storage, volname);
  if (storage.type === 'zfspool') return parseZfsVolname(storage, volname);
  // rbd names linked clones base-<id>-disk-<n>/vm-<id>-disk-<m>: the last part owns it.
  const match = /^(?:(?:base)-\d+-\S+\/)?(vm|base)-(\d+)-\S+$/.exec(volname);
  if (!match) {
    const kind = storage.type === 'rbd' ? 'rbd' : 'lvm';
    throw dieError(`unable to parse ${kind} volume name '${volname}'`);
  }
  return {
    storage,
    volname,
    vtype: 'images',
    owner: Number(match[2]),
    isBase: match[1] === 'base',
  };
}

const volid = (volume: Volume) => `${volume.storage}:${volume.volname}`;

/** The volume with this id as `node` sees it (node-local storages differ per node). */
export function findVolume(state: ClusterState, node: string, id: string): Volume | undefined {
  const parsed = parseVolumeId(id);
  if (!parsed) return undefined;
  const storage = findStorage(state, parsed.storeid);
  if (!storage) return undefined;
  return state.volumes.find(
    (v) => volid(v) === id && (storage.shared ? v.node === undefined : v.node === node),
  );
}

export function volumeExists(state: ClusterState, node: string, id: string): boolean {
  return findVolume(state, node, id) !== undefined;
}

/** Volumes of one storage as `node` sees them, sorted by volid like volume_list. */
export function listVolumes(state: ClusterState, storage: StorageDef, node: string): Volume[] {
  return state.volumes
    .filter(
      (v) => v.storage === storage.id && (storage.shared ? v.node === undefined : v.node === node),
    )
    .sort((a, b) => volid(a).toLowerCase().localeCompare(volid(b).toLowerCase()));
}

export function removeVolume(state: ClusterState, node: string, id: string): boolean {
  const volume = findVolume(state, node, id);
  if (volume) state.volumes = state.volumes.filter((v) => v !== volume);
  return volume !== undefined;
}

export interface ImageRequest {
  readonly storage: StorageDef;
  readonly node: string;
  readonly vmid: number;
  readonly size: number;
  readonly now: number;
  /** A fixed name (cloud-init, vmstate, base); otherwise the next free vm-<vmid>-disk-<n>. */
  readonly name?: string;
  /** Linked clones: the base volume they build on (RBD and ZFS name it: base-.../vm-...). */
  readonly parent?: string;
  /** 'subvol': a container's ZFS dataset (alloc_disk asks zfspool for one), named subvol-…. */
  readonly format?: 'raw' | 'subvol';
}

/** The next free <prefix>-<vmid>-disk-<n> (find_free_diskname), skipping dir storages' .raw. */
function freeDiskName(taken: Set<string | undefined>, prefix: string, vmid: number): string {
  for (let n = 0; ; n++) {
    const candidate = `${prefix}-${vmid}-disk-${n}`;
    if (!taken.has(candidate) && !taken.has(`${candidate}.raw`)) return candidate;
  }
}

/** vdisk_alloc: add an image volume and return its volid. */
export function allocateImage(state: ClusterState, req: ImageRequest): string {
  const { storage, vmid } = req;
  if (storage.type === 'pbs') throw dieError("can't allocate space in pbs storage");
  const node = storage.shared ? undefined : req.node;
  const subvol = req.format === 'subvol' && storage.type === 'zfspool';
  const taken = new Set(
    listVolumes(state, storage, req.node).map((v) => v.volname.split('/').pop()),
  );
  const name = req.name ?? freeDiskName(taken, subvol ? 'subvol' : 'vm', vmid);
  const baseName = req.parent === undefined ? undefined : parseVolumeId(req.parent)?.volname;
  const volname =
    storage.type === 'dir'
      ? `images/${vmid}/${name}.raw`
      : (storage.type === 'rbd' || storage.type === 'zfspool') && baseName
        ? `${baseName}/${name}`
        : name;
  state.volumes.push({
    storage: storage.id,
    node,
    volname,
    vtype: 'images',
    format: subvol ? 'subvol' : 'raw',
    size: req.size,
    ctime: Math.floor(req.now / 1000),
    owner: vmid,
    ...(req.parent !== undefined ? { parent: req.parent } : {}),
  });
  return `${storage.id}:${volname}`;
}
