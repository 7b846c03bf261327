// DELETE /nodes/{node}/{qemu,lxc}/{vmid}: destroy a guest (qmdestroy / vzdestroy). Protection and
// running state are refused at once (500); the worker repeats them, honours the lock, frees every
// volume the guest owns (disks, unused disks, snapshot RAM states; with
// destroy-unreferenced-disks also its other images), drops it from its pool and removes it.
import { perm } from '../access/permissions.ts';
import { findStorage, type ClusterState, type Guest } from '../cluster/cluster-state.ts';
import { configVolumes } from '../cluster/guest-config.ts';
import { haltGuest } from '../cluster/power.ts';
import { freeLines } from '../cluster/storage-log.ts';
import type { TaskLog, WorkPlan } from '../cluster/tasks.ts';
import { findVolume, removeVolume } from '../cluster/volumes.ts';
import { dieError } from '../schema/pve-error.ts';
import {
  GUEST_PARAMS,
  SKIPLOCK_PARAM,
  type HandlerContext,
  type Route,
} from './handler-context.ts';
import {
  flag,
  guestKind,
  lockError,
  loadGuest,
  onGuest,
  refuseRootOnly,
  startGuestTask,
} from './guest-helpers.ts';

/** The refusals both the API call and the worker apply; a message or undefined. */
function earlyError(ctx: HandlerContext, guest: Guest): string | undefined {
  const kind = guestKind(guest.type);
  if (guest.config.protection === '1')
    return `can't remove ${kind} ${guest.vmid} - protection mode enabled`;
  if (guest.type === 'lxc') {
    const locked = lockError(guest);
    if (locked) return locked;
    if (guest.status === 'running' && !flag(ctx, 'force'))
      return `unable to destroy CT ${guest.vmid} - container is running`;
  } else if (guest.status === 'running') {
    return `VM ${guest.vmid} is running - destroy failed`;
  }
  return undefined;
}

function freeVolume(state: ClusterState, guest: Guest, volid: string, log: TaskLog): void {
  const volume = findVolume(state, guest.node, volid);
  // only volumes this guest owns are freed (a linked clone's base stays with its template)
  if (!volume || volume.owner !== guest.vmid) return;
  removeVolume(state, guest.node, volid);
  const storage = findStorage(state, volume.storage);
  if (storage) log.info(...freeLines(storage, volid));
}

/** volume_is_base_and_used: a template's base volume that a linked clone still builds on. */
export function baseInUse(state: ClusterState, guest: Guest): string | undefined {
  const volids = configVolumes(guest.type, guest.config)
    .filter((v) => !v.cdrom)
    .map((v) => v.volid);
  return volids.find((volid) => state.volumes.some((v) => v.parent === volid));
}

function destroyPlan(ctx: HandlerContext, guest: Guest, skiplock: boolean): WorkPlan {
  const early = earlyError(ctx, guest);
  if (early) return { error: early };
  const locked = lockError(guest);
  if (locked && guest.type === 'qemu' && !skiplock && guest.config.lock !== 'suspended')
    return { error: locked };
  const inUse = baseInUse(ctx.state, guest);
  if (inUse) return { error: `base volume '${inUse}' is still in use by linked cloned` };
  guest.config.lock = 'destroyed';
  return {
    commit: (log) => {
      if (guest.status === 'running') {
        log.warn(`forced to stop CT ${guest.vmid} before destroying!`);
        haltGuest(guest);
      }
      const volids = new Set(
        configVolumes(guest.type, guest.config)
          .filter((v) => !v.cdrom)
          .map((v) => v.volid),
      );
      if (guest.config.vmstate) volids.add(guest.config.vmstate);
      for (const snap of guest.snapshots.values()) if (snap.vmstate) volids.add(snap.vmstate);
      for (const volid of volids) freeVolume(ctx.state, guest, volid, log);
      if (flag(ctx, 'destroy-unreferenced-disks')) {
        const others = ctx.state.volumes.filter(
          (v) => v.vtype === 'images' && v.owner === guest.vmid,
        );
        for (const volume of others)
          freeVolume(ctx.state, guest, `${volume.storage}:${volume.volname}`, log);
      }
      if (flag(ctx, 'purge'))
        log.info(`purging ${guestKind(guest.type)} ${guest.vmid} from related configurations..`);
      ctx.state.guests.delete(guest.vmid);
    },
    undo: () => {
      if (guest.config.lock === 'destroyed') delete guest.config.lock;
    },
  };
}

function destroy(type: Guest['type']) {
  return (ctx: HandlerContext): unknown => {
    if (type === 'qemu') refuseRootOnly(ctx, 'skiplock');
    const guest = loadGuest(ctx, type);
    const early = earlyError(ctx, guest);
    if (early) throw dieError(early);
    return startGuestTask(
      ctx,
      type === 'qemu' ? 'qmdestroy' : 'vzdestroy',
      guest.vmid,
      onGuest(ctx, type, guest.vmid, (g) => destroyPlan(ctx, g, flag(ctx, 'skiplock'))),
    );
  };
}

const bool = { type: 'boolean', optional: true } as const;

export const DESTROY_ROUTES: readonly Route[] = [
  {
    method: 'DELETE',
    path: '/nodes/{node}/qemu/{vmid}',
    permissions: perm('/vms/{vmid}', ['VM.Allocate']),
    schema: {
      ...GUEST_PARAMS,
      skiplock: SKIPLOCK_PARAM,
      purge: bool,
      'destroy-unreferenced-disks': bool,
    },
    handle: destroy('qemu'),
  },
  {
    method: 'DELETE',
    path: '/nodes/{node}/lxc/{vmid}',
    permissions: perm('/vms/{vmid}', ['VM.Allocate']),
    schema: { ...GUEST_PARAMS, purge: bool, force: bool, 'destroy-unreferenced-disks': bool },
    handle: destroy('lxc'),
  },
];
