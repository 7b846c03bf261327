// DELETE /nodes/{node}/{qemu,lxc}/{vmid}: destroy a guest (qmdestroy / vzdestroy). Protection, HA
// management and replication jobs (both unless purge=1) and running state are refused at once
// (500); the worker repeats them, honours the lock, frees every volume the guest owns (disks,
// unused disks, snapshot RAM states; with destroy-unreferenced-disks also its other images), with
// purge=1 drops its replication jobs and HA resource, and removes it.
import { perm } from '../access/permissions.ts';
import { findStorage, type ClusterState, type Guest } from '../cluster/cluster-state.ts';
import { configVolumes } from '../cluster/guest-config.ts';
import { guestSid, removeHaResource } from '../cluster/ha.ts';
import { haltGuest } from '../cluster/power.ts';
import { existingJobError, removeGuestJobs } from '../cluster/replication.ts';
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

/** Without purge, an HA resource or a replication job of the guest must go first. */
function purgeError(ctx: HandlerContext, guest: Guest): string | undefined {
  if (flag(ctx, 'purge')) return undefined;
  if (ctx.state.haResources.has(guestSid(guest))) {
    const kind = guestKind(guest.type);
    return `unable to remove ${kind} ${guest.vmid} - used in HA resources and purge parameter not set.`;
  }
  return existingJobError(ctx.state, guest.vmid);
}

/** The refusals both the API call and the worker apply, in PVE's order; a message or undefined. */
function earlyError(ctx: HandlerContext, guest: Guest): string | undefined {
  const kind = guestKind(guest.type);
  if (guest.config.protection === '1')
    return `can't remove ${kind} ${guest.vmid} - protection mode enabled`;
  const locked = guest.type === 'lxc' ? lockError(guest) : undefined;
  if (locked) return locked;
  const purge = purgeError(ctx, guest);
  if (purge) return purge;
  if (guest.status !== 'running') return undefined;
  if (guest.type === 'qemu') return `VM ${guest.vmid} is running - destroy failed`;
  return flag(ctx, 'force')
    ? undefined
    : `unable to destroy CT ${guest.vmid} - container is running`;
}

/** purge=1: remove_vmid_jobs, then delete_service_from_config if the guest was HA-managed. */
function purgeRelated(ctx: HandlerContext, guest: Guest, log: TaskLog): void {
  const kind = guestKind(guest.type);
  log.info(`purging ${kind} ${guest.vmid} from related configurations..`);
  removeGuestJobs(ctx.state, guest.vmid);
  if (removeHaResource(ctx.state, guestSid(guest)))
    log.info(`NOTE: removed ${kind} ${guest.vmid} from HA resource configuration.`);
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
      if (flag(ctx, 'purge')) purgeRelated(ctx, guest, log);
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
