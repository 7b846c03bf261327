// Volume ids as pve-storage parses them (parse_volume_id, each plugin's parse_volname), and
// whether a volume exists on a node of the simulated cluster.
import { dieError } from '../schema/pve-error.ts';
import { findStorage, type ClusterState, type NodeState, type StorageDef } from './cluster-state.ts';

/** qemu-server $NEW_DISK_RE: `[STORAGE:]SIZE_GiB` allocates a new volume. */
export const NEW_DISK_RE = /^(([^/:\s]+):)?(\d+(\.\d+)?)$/;

export interface ParsedVolume {
  readonly storage: StorageDef;
  readonly volname: string;
  readonly vtype: 'iso' | 'vztmpl' | 'images' | 'backup' | 'snippets' | 'import';
  /** The vmid encoded in an image name (vm-100-disk-0 → 100). */
  readonly owner?: number;
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

const DIR_PATTERNS: readonly [RegExp, ParsedVolume['vtype']][] = [
  [/^iso\/[^/]+\.(iso|img)$/i, 'iso'],
  [/^vztmpl\/[^/]+\.tar\.([gx]z|zst|bz2)$/, 'vztmpl'],
  [/^images\/\d+\/[^/]+$/, 'images'],
  [/^backup\/[^/]+$/, 'backup'],
  [/^snippets\/[^/]+$/, 'snippets'],
  [/^import\/[^/]+$/, 'import'],
];

/** PVE::Storage::parse_volname for the simulator's three storage types. */
export function parseVolname(state: ClusterState, volid: string): ParsedVolume {
  const parsed = parseVolumeId(volid);
  if (!parsed) throw dieError(`unable to parse volume ID '${volid}'`);
  const storage = storageConfig(state, parsed.storeid);
  const { volname } = parsed;
  if (storage.type === 'dir') {
    const vtype = DIR_PATTERNS.find(([re]) => re.test(volname))?.[1];
    if (!vtype) throw dieError(`unable to parse directory volume name '${volname}'`);
    const owner = /^images\/(\d+)\//.exec(volname)?.[1];
    return { storage, volname, vtype, ...(owner ? { owner: Number(owner) } : {}) };
  }
  const owner = /^(?:vm|base)-(\d+)-\S+$/.exec(volname)?.[1];
  if (owner === undefined) {
    const kind = storage.type === 'rbd' ? 'rbd' : 'lvm';
    throw dieError(`unable to parse ${kind} volume name '${volname}'`);
  }
  return { storage, volname, vtype: 'images', owner: Number(owner) };
}

/** Whether a volume exists as seen from `node` (ISOs and templates live on node-local `local`). */
export function volumeExists(state: ClusterState, node: NodeState, volume: ParsedVolume): boolean {
  const file = volume.volname.split('/').pop() ?? '';
  if (volume.vtype === 'iso') return node.isos.includes(file);
  if (volume.vtype === 'vztmpl') return node.templates.includes(file);
  if (volume.vtype === 'images' && volume.owner !== undefined) {
    const owner = state.guests.get(volume.owner);
    return owner !== undefined && (volume.storage.shared || owner.node === node.name);
  }
  return false;
}
