// Which of a guest's volumes a migration has to move, and which stop it (QemuMigrate and
// LXC::Migrate sync_offline_local_volumes' test_volid): every volume the config, its snapshots
// and RAM states reference; shared storages need nothing, local ones are copied unless they are
// ISO images, belong to another guest, carry snapshots (ZFS ones may: zfs send takes them along,
// online only when replicated to the target), or back linked clones. A replication job to the
// target already holds ZFS volumes there: they stay, and the job then replicates back.
import { findStorage, type ClusterState, type Guest } from '../cluster/cluster-state.ts';
import { configVolumes } from '../cluster/guest-config.ts';
import { guestJobs, switchJobTarget } from '../cluster/replication.ts';
import { findVolume, parseVolumeId } from '../cluster/volumes.ts';

export interface LocalVolume {
  readonly volid: string;
  readonly key?: string;
  readonly size: number;
  readonly cdrom: boolean;
  readonly ref: 'attached' | 'unused' | 'snapshot' | 'vmstate';
  /** Kept on the target by a replication job (get_replicatable_volumes: ZFS volumes). */
  readonly replicated: boolean;
}

export interface VolumeScan {
  readonly local: LocalVolume[];
  /** [volid, reason] for each local volume that cannot move. */
  readonly errors: [string, string][];
}

/** find_local_replication_job: the guest's job that replicates to `target`, if any. */
export function replicatesTo(state: ClusterState, guest: Guest, target: string | undefined) {
  return guestJobs(state, guest.vmid).some(([, job]) => job.target === target);
}

const storageOf = (state: ClusterState, volid: string) =>
  findStorage(state, parseVolumeId(volid)?.storeid ?? '');

export function scanVolumes(
  state: ClusterState,
  guest: Guest,
  running: boolean,
  target?: string,
): VolumeScan {
  const seen = new Map<string, LocalVolume>();
  const inSnapshots = new Set<string>();
  const replication = replicatesTo(state, guest, target);
  const add = (volid: string, volume: Omit<LocalVolume, 'volid' | 'size' | 'replicated'>) => {
    if (seen.has(volid)) return;
    const storage = storageOf(state, volid);
    if (!storage || storage.shared) return;
    const size = findVolume(state, guest.node, volid)?.size ?? 0;
    const replicated = replication && storage.type === 'zfspool' && volume.ref !== 'vmstate';
    seen.set(volid, { volid, size, replicated, ...volume });
  };
  for (const v of configVolumes(guest.type, guest.config)) {
    add(v.volid, {
      key: v.key,
      cdrom: v.cdrom,
      ref: /^unused/.test(v.key) ? 'unused' : 'attached',
    });
  }
  for (const snap of guest.snapshots.values()) {
    for (const v of configVolumes(guest.type, snap)) {
      inSnapshots.add(v.volid);
      add(v.volid, { key: v.key, cdrom: v.cdrom, ref: 'snapshot' });
    }
    if (snap.vmstate) add(snap.vmstate, { cdrom: false, ref: 'vmstate' });
  }
  const errors: [string, string][] = [];
  for (const volume of seen.values()) {
    const stored = findVolume(state, guest.node, volume.volid);
    if (volume.cdrom) {
      if (!/cloudinit/.test(volume.volid)) errors.push([volume.volid, 'local cdrom image']);
      continue;
    }
    if (stored?.owner !== guest.vmid) {
      errors.push([volume.volid, `owned by other VM (owner = VM ${stored?.owner ?? 'unknown'})`]);
      continue;
    }
    if (volume.ref === 'vmstate') continue;
    if (inSnapshots.has(volume.volid)) {
      // only ZFS datasets (and qcow2 files) can carry their snapshots along; thin LVs cannot
      const zfs = storageOf(state, volume.volid)?.type === 'zfspool';
      if (running && !volume.replicated) {
        errors.push([
          volume.volid,
          'online storage migration not possible if non-replicated snapshot exists',
        ]);
        continue;
      }
      if (!zfs) {
        errors.push([volume.volid, 'non-migratable snapshot exists']);
        continue;
      }
    }
    if (state.volumes.some((v) => v.parent === volume.volid))
      errors.push([volume.volid, 'referenced by linked clone(s)']);
  }
  return { local: [...seen.values()], errors };
}

/**
 * After a migration: the guest's node-local volumes now live on the target node; replicated ones
 * were there already and their source copies stay behind as the replicas of the switched job.
 */
export function moveLocalVolumes(state: ClusterState, guest: Guest, target: string): void {
  for (const volume of scanVolumes(state, guest, false, target).local) {
    const stored = findVolume(state, guest.node, volume.volid);
    if (!stored || volume.cdrom) continue;
    if (volume.replicated && findVolume(state, target, volume.volid)) continue;
    stored.node = target;
  }
  if (replicatesTo(state, guest, target)) switchJobTarget(state, guest.vmid, guest.node, target);
}
