// DELETE /nodes/{node}/{qemu,lxc}/{vmid}/snapshot/{snapname} and POST .../rollback, following
// guest-common snapshot_delete (lock 'snapshot-delete', drop the RAM state and volume snapshots,
// re-parent children) and snapshot_rollback (stop, lock 'rollback', restore the snapshot's config
// and disks, restart from a saved RAM state, optionally start). Both run entirely in the worker.
import { perm } from '../access/permissions.ts';
import {
  findStorage,
  type ClusterState,
  type Guest,
  type GuestConfig,
} from '../cluster/cluster-state.ts';
import {
  addUnused,
  configVolumes,
  isTemplateConfig,
  parseProps,
  parseSize,
  randomUuid,
} from '../cluster/guest-config.ts';
import { bootGuest, haltGuest } from '../cluster/power.ts';
import { deleteSnapshotLines, freeLines, rollbackLines } from '../cluster/storage-log.ts';
import type { WorkPlan } from '../cluster/tasks.ts';
import { findVolume, parseVolumeId, removeVolume } from '../cluster/volumes.ts';
import {
  GUEST_PARAMS,
  SNAPNAME_PARAM,
  type HandlerContext,
  type Route,
} from './handler-context.ts';
import { flag, lockError, onGuest, startGuestTask } from './guest-helpers.ts';

const storageOf = (state: ClusterState, volid: string) =>
  findStorage(state, parseVolumeId(volid)?.storeid ?? '');

function deletePlan(ctx: HandlerContext, guest: Guest, snapname: string): WorkPlan {
  const snap = guest.snapshots.get(snapname);
  if (!snap) return { error: `snapshot '${snapname}' does not exist` };
  const locked = lockError(guest);
  if (locked) return { error: locked };
  if (isTemplateConfig(guest.config))
    return { error: "you can't delete a snapshot if vm is a template" };
  guest.config.lock = 'snapshot-delete';
  snap.snapstate = 'delete';
  return {
    commit: (log) => {
      if (snap.vmstate) {
        const storage = storageOf(ctx.state, snap.vmstate);
        removeVolume(ctx.state, guest.node, snap.vmstate);
        if (storage) log.info(...freeLines(storage, snap.vmstate));
      }
      for (const volume of configVolumes(guest.type, snap).filter((v) => !v.cdrom)) {
        const storage = storageOf(ctx.state, volume.volid);
        if (storage) log.info(...deleteSnapshotLines(storage, volume.volid, snapname));
      }
      // children of the deleted snapshot (and the current state) now hang off its parent
      for (const config of [guest.config, ...guest.snapshots.values()]) {
        if (config.parent !== snapname) continue;
        if (snap.parent) config.parent = snap.parent;
        else delete config.parent;
      }
      guest.snapshots.delete(snapname);
      delete guest.config.lock;
    },
    // no undo: a failed delete leaves the 'snapshot-delete' lock and snapstate behind, as in PVE
  };
}

/** __snapshot_apply_config: the snapshot's config, keeping description, unused disks and snapshots. */
function appliedConfig(current: GuestConfig, snap: GuestConfig): GuestConfig {
  const kept = Object.entries(current).filter(
    ([key]) => /^unused\d+$/.test(key) || key === 'description',
  );
  const copied = Object.entries(snap).filter(
    ([key]) => !/^(snapstate|snaptime|vmstate|lock|digest|description|unused\d+)$/.test(key),
  );
  return Object.fromEntries([...kept, ...copied]);
}

function rollbackPlan(
  ctx: HandlerContext,
  guest: Guest,
  snapname: string,
  start: boolean,
): WorkPlan {
  if (isTemplateConfig(guest.config)) return { error: "you can't rollback if vm is a template" };
  const snap = guest.snapshots.get(snapname);
  if (!snap) return { error: `snapshot '${snapname}' does not exist` };
  if (snap.snapstate)
    return { error: `unable to rollback to incomplete snapshot (snapstate = ${snap.snapstate})` };
  const locked = lockError(guest);
  if (locked) return { error: locked };
  if (guest.status === 'running') haltGuest(guest); // __snapshot_rollback_vm_stop: a hard stop
  guest.config.lock = 'rollback';
  return {
    commit: (log, now) => {
      for (const volume of configVolumes(guest.type, snap).filter((v) => !v.cdrom)) {
        const storage = storageOf(ctx.state, volume.volid);
        if (storage) log.info(...rollbackLines(storage, volume.volid));
        const size = parseSize(parseProps(snap[volume.key] ?? '').size ?? '');
        const stored = findVolume(ctx.state, guest.node, volume.volid);
        if (stored && size !== undefined) stored.size = size;
      }
      const snapVolumes = new Set(configVolumes(guest.type, snap).map((v) => v.volid));
      const orphans = configVolumes(guest.type, guest.config).filter(
        (v) => !v.cdrom && !/^unused/.test(v.key) && !snapVolumes.has(v.volid),
      );
      const config = appliedConfig(guest.config, snap);
      for (const orphan of orphans) addUnused(config, orphan.volid);
      config.parent = snapname;
      if (guest.type === 'qemu' && config.vmgenid) config.vmgenid = randomUuid();
      guest.config = config;
      if ((snap.vmstate && guest.type === 'qemu') || start) bootGuest(ctx.state, guest, now);
    },
    undo: () => {
      if (guest.config.lock === 'rollback') delete guest.config.lock;
    },
  };
}

function deleteSnapshot(type: Guest['type']) {
  return (ctx: HandlerContext): unknown => {
    const vmid = Number(ctx.params.vmid);
    const snapname = String(ctx.params.snapname);
    return startGuestTask(
      ctx,
      type === 'qemu' ? 'qmdelsnapshot' : 'vzdelsnapshot',
      vmid,
      onGuest(ctx, type, vmid, (guest) => deletePlan(ctx, guest, snapname)),
    );
  };
}

function rollback(type: Guest['type']) {
  return (ctx: HandlerContext): unknown => {
    const vmid = Number(ctx.params.vmid);
    const snapname = String(ctx.params.snapname);
    return startGuestTask(
      ctx,
      type === 'qemu' ? 'qmrollback' : 'vzrollback',
      vmid,
      onGuest(ctx, type, vmid, (guest) => rollbackPlan(ctx, guest, snapname, flag(ctx, 'start'))),
    );
  };
}

const SNAP_PARAMS = { ...GUEST_PARAMS, snapname: SNAPNAME_PARAM } as const;

export const SNAPSHOT_OP_ROUTES: readonly Route[] = (['qemu', 'lxc'] as const).flatMap(
  (type): Route[] => [
    {
      method: 'DELETE',
      path: `/nodes/{node}/${type}/{vmid}/snapshot/{snapname}`,
      permissions: perm('/vms/{vmid}', ['VM.Snapshot']),
      schema: { ...SNAP_PARAMS, force: { type: 'boolean', optional: true } },
      handle: deleteSnapshot(type),
    },
    {
      method: 'POST',
      path: `/nodes/{node}/${type}/{vmid}/snapshot/{snapname}/rollback`,
      permissions: perm('/vms/{vmid}', ['VM.Snapshot', 'VM.Snapshot.Rollback'], true),
      schema: { ...SNAP_PARAMS, start: { type: 'boolean', optional: true } },
      handle: rollback(type),
    },
  ],
);
