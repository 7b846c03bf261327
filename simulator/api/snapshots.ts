// GET and POST /nodes/{node}/{qemu,lxc}/{vmid}/snapshot: the snapshot tree (with the `current`
// pseudo-entry) and snapshot_create (guest-common AbstractConfig): prepare takes the 'snapshot'
// lock and copies the config, volume snapshots follow, commit drops the lock and makes the new
// snapshot the parent of the current state. VMs may save their RAM (vmstate) while running.
import { perm } from '../access/permissions.ts';
import type { Guest, GuestConfig } from '../cluster/cluster-state.ts';
import { configDigest } from '../cluster/config-file.ts';
import { configVolumes, isTemplateConfig } from '../cluster/guest-config.ts';
import { snapshotLines } from '../cluster/storage-log.ts';
import type { TaskLog, WorkPlan } from '../cluster/tasks.ts';
import { findStorage } from '../cluster/cluster-state.ts';
import { parseVolumeId } from '../cluster/volumes.ts';
import { dieError } from '../schema/pve-error.ts';
import {
  GUEST_PARAMS,
  SNAPNAME_PARAM,
  type HandlerContext,
  type Route,
} from './handler-context.ts';
import { flag, lockError, loadGuest, onGuest, startGuestTask, str } from './guest-helpers.ts';
import { saveVmState, vmstateStorage } from './vmstate.ts';

/** Keys __snapshot_copy_config leaves out of a snapshot. */
const NOT_COPIED = /^(snapshots|snapstate|snaptime|vmstate|lock|digest|description|unused\d+)$/;

export function copyConfig(source: GuestConfig): GuestConfig {
  return Object.fromEntries(Object.entries(source).filter(([key]) => !NOT_COPIED.test(key)));
}

function listSnapshots(type: Guest['type']) {
  return (ctx: HandlerContext): unknown => {
    const guest = loadGuest(ctx, type);
    const items = [...guest.snapshots.entries()].map(([name, snap]) => ({
      name,
      snaptime: Number(snap.snaptime ?? 0),
      ...(type === 'qemu' ? { vmstate: snap.vmstate ? 1 : 0 } : {}),
      description: snap.description ?? '',
      ...(snap.parent ? { parent: snap.parent } : {}),
      ...(snap.snapstate ? { snapstate: snap.snapstate } : {}),
    }));
    const current = {
      name: 'current',
      digest: configDigest(guest),
      running: guest.status === 'running' ? 1 : 0,
      description: 'You are here!',
      ...(guest.config.parent ? { parent: guest.config.parent } : {}),
    };
    return [...items, current];
  };
}

/** has_feature('snapshot'): every disk (not CD-ROMs) on a storage that can snapshot it. */
function snapshotPossible(ctx: HandlerContext, guest: Guest): boolean {
  return configVolumes(guest.type, guest.config)
    .filter((v) => !v.cdrom && !/^unused/.test(v.key))
    .every((v) => findStorage(ctx.state, parseVolumeId(v.volid)?.storeid ?? '')?.type !== 'dir');
}

function prepare(
  ctx: HandlerContext,
  guest: Guest,
  snapname: string,
  vmstate: boolean,
  log: TaskLog,
): WorkPlan {
  if (isTemplateConfig(guest.config))
    return { error: "you can't take a snapshot if it's a template" };
  const locked = lockError(guest);
  if (locked) return { error: locked };
  if (guest.snapshots.has(snapname)) return { error: `snapshot name '${snapname}' already used` };
  if (!snapshotPossible(ctx, guest)) return { error: 'snapshot feature is not available' };
  guest.config.lock = 'snapshot';
  for (const [name, other] of guest.snapshots) {
    if (other.parent === snapname) {
      log.warn(
        `deleting parent '${snapname}' reference from '${name}' to avoid bogus snapshot cycle.`,
      );
      delete other.parent;
    }
  }
  const snap: GuestConfig = {
    ...copyConfig(guest.config),
    snapstate: 'prepare',
    snaptime: String(Math.floor(ctx.now / 1000)),
  };
  const description = str(ctx, 'description');
  if (description) snap.description = description;
  guest.snapshots.set(snapname, snap);
  return {
    commit: (taskLog, now) => {
      if (vmstate && guest.status === 'running') {
        saveVmState(ctx, guest, snap, snapname, vmstateStorage(ctx.state, guest), taskLog, now);
      }
      for (const volume of configVolumes(guest.type, snap).filter((v) => !v.cdrom)) {
        const storage = findStorage(ctx.state, parseVolumeId(volume.volid)?.storeid ?? '');
        if (storage) taskLog.info(...snapshotLines(storage, volume.key, volume.volid, snapname));
      }
      if (vmstate && guest.status === 'running') taskLog.info('resuming VM again');
      delete snap.snapstate;
      delete guest.config.lock;
      guest.config.parent = snapname;
    },
    undo: () => {
      guest.snapshots.delete(snapname);
      if (guest.config.lock === 'snapshot') delete guest.config.lock;
    },
  };
}

function createSnapshot(type: Guest['type']) {
  return (ctx: HandlerContext): unknown => {
    const snapname = String(ctx.params.snapname);
    if (snapname === 'current')
      throw dieError("unable to use snapshot name 'current' (reserved name)");
    if (type === 'qemu' && snapname.toLowerCase() === 'pending') {
      throw dieError("unable to use snapshot name 'pending' (reserved name)");
    }
    if (type === 'lxc' && snapname === 'vzdump')
      throw dieError("unable to use snapshot name 'vzdump' (reserved name)");
    const vmid = Number(ctx.params.vmid);
    if (type === 'qemu') loadGuest(ctx, type); // qemu-server checks the VM exists before forking
    const vmstate = flag(ctx, 'vmstate');
    return startGuestTask(
      ctx,
      type === 'qemu' ? 'qmsnapshot' : 'vzsnapshot',
      vmid,
      onGuest(ctx, type, vmid, (guest, log) => prepare(ctx, guest, snapname, vmstate, log)),
    );
  };
}

const SNAPSHOT = perm('/vms/{vmid}', ['VM.Snapshot']);
const AUDIT = perm('/vms/{vmid}', ['VM.Audit']);
const description = { type: 'string', optional: true } as const;

export const SNAPSHOT_ROUTES: readonly Route[] = (['qemu', 'lxc'] as const).flatMap(
  (type): Route[] => [
    {
      method: 'GET',
      path: `/nodes/{node}/${type}/{vmid}/snapshot`,
      permissions: AUDIT,
      schema: GUEST_PARAMS,
      handle: listSnapshots(type),
    },
    {
      method: 'POST',
      path: `/nodes/{node}/${type}/{vmid}/snapshot`,
      permissions: SNAPSHOT,
      schema: {
        ...GUEST_PARAMS,
        snapname: SNAPNAME_PARAM,
        description,
        ...(type === 'qemu' ? { vmstate: { type: 'boolean', optional: true } } : {}),
      },
      handle: createSnapshot(type),
    },
  ],
);
