// Which of a guest's volumes a migration has to move, and which stop it (QemuMigrate and
// LXC::Migrate sync_offline_local_volumes' test_volid): every volume the config, its snapshots
// and RAM states reference; shared storages need nothing, local ones are copied unless they are
// ISO images, belong to another guest, carry snapshots, or back linked clones.
import { findStorage, type ClusterState, type Guest } from '../cluster/cluster-state.ts';
import { configVolumes } from '../cluster/guest-config.ts';
import { findVolume, parseVolumeId } from '../cluster/volumes.ts';

export interface LocalVolume {
  readonly volid: string;
  readonly key?: string;
  readonly size: number;
  readonly cdrom: boolean;
  readonly ref: 'attached' | 'unused' | 'snapshot' | 'vmstate';
}

export interface VolumeScan {
  readonly local: LocalVolume[];
  /** [volid, reason] for each local volume that cannot move. */
  readonly errors: [string, string][];
}

export function scanVolumes(state: ClusterState, guest: Guest, running: boolean): VolumeScan {
  const seen = new Map<string, LocalVolume>();
  const inSnapshots = new Set<string>();
  const add = (volid: string, volume: Omit<LocalVolume, 'volid' | 'size'>) => {
    if (seen.has(volid)) return;
    const storage = findStorage(state, parseVolumeId(volid)?.storeid ?? '');
    if (!storage || storage.shared) return;
    seen.set(volid, { volid, size: findVolume(state, guest.node, volid)?.size ?? 0, ...volume });
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
      // only qcow2 files (and zfs/btrfs) can carry their snapshots along; thin LVs cannot
      errors.push([
        volume.volid,
        running
          ? 'online storage migration not possible if non-replicated snapshot exists'
          : 'non-migratable snapshot exists',
      ]);
      continue;
    }
    if (state.volumes.some((v) => v.parent === volume.volid))
      errors.push([volume.volid, 'referenced by linked clone(s)']);
  }
  return { local: [...seen.values()], errors };
}

/** After a migration: the guest's node-local volumes now live on the target node. */
export function moveLocalVolumes(state: ClusterState, guest: Guest, target: string): void {
  for (const volume of scanVolumes(state, guest, false).local) {
    const stored = findVolume(state, guest.node, volume.volid);
    if (stored && !volume.cdrom) stored.node = target;
  }
}
