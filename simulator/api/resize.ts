// PUT /nodes/{node}/{qemu,lxc}/{vmid}/resize: grow a disk by `+SIZE` or to an absolute size, as a
// 'resize' task (PVE 9 returns a UPID for both). qemu-server checks everything in the worker;
// pve-container checks lock, digest and size at once (500) and again in the worker.
import { check, perm } from '../access/permissions.ts';
import { findStorage, type Guest } from '../cluster/cluster-state.ts';
import { configDigest } from '../cluster/config-file.ts';
import { formatSize, isCdrom, parseProps, parseSize, printProps } from '../cluster/guest-config.ts';
import { resizeLines } from '../cluster/storage-log.ts';
import type { WorkPlan } from '../cluster/tasks.ts';
import { findVolume, parseVolumeId } from '../cluster/volumes.ts';
import { MOUNTPOINT_FORMAT } from '../schema/lxc-formats.ts';
import { dieError } from '../schema/pve-error.ts';
import { parsePropertyString } from '../schema/schema-check.ts';
import {
  DIGEST_PARAM,
  GUEST_PARAMS,
  SKIPLOCK_PARAM,
  type HandlerContext,
  type Route,
} from './handler-context.ts';
import {
  checkLock,
  flag,
  loadGuest,
  lockError,
  onGuest,
  refuseRootOnly,
  startGuestTask,
  str,
} from './guest-helpers.ts';

interface Target {
  readonly volid: string;
  readonly from: number;
  readonly to: number;
  readonly props: Record<string, string>;
}

/** The requested size in bytes: `+N[KMGT]` grows by N, `N[KMGT]` sets it. */
function requestedSize(size: string, current: number): number {
  const grow = size.startsWith('+');
  return Math.trunc((grow ? current : 0) + (parseSize(size.replace(/^\+/, '')) ?? 0));
}

/** Both types: the disk's volume and its current and new size, or the error PVE dies with. */
function target(ctx: HandlerContext, guest: Guest, disk: string, size: string): Target | string {
  const value = guest.config[disk];
  const defaultKey = guest.type === 'qemu' ? 'file' : 'volume';
  if (value === undefined && guest.type === 'qemu') return `disk '${disk}' does not exist`;
  if (value === undefined) {
    try {
      parsePropertyString(MOUNTPOINT_FORMAT, '', '');
    } catch (err) {
      return err instanceof Error ? err.message.replace(/\n$/, '') : String(err);
    }
  }
  const props = parseProps(value ?? '', defaultKey);
  const volid = props[defaultKey] ?? '';
  if (guest.type === 'qemu' && !volid) return `disk '${disk}' has no associated volume`;
  if (guest.type === 'qemu' && isCdrom(value ?? '')) return "you can't resize a cdrom";
  const storeid = parseVolumeId(volid)?.storeid ?? '';
  check(ctx.identity, `/storage/${storeid}`, ['Datastore.AllocateSpace']);
  const volume = findVolume(ctx.state, guest.node, volid);
  if (!volume) return `Could not determine current size of volume '${volid}'`;
  const to = requestedSize(size, volume.size);
  if (to < volume.size)
    return guest.type === 'qemu'
      ? 'shrinking disks is not supported'
      : 'unable to shrink disk size';
  if (to === volume.size && guest.type === 'lxc') return 'disk is already at specified size';
  return { volid, from: volume.size, to, props };
}

function resizePlan(ctx: HandlerContext, guest: Guest, skiplock: boolean): WorkPlan {
  const digest = str(ctx, 'digest');
  const disk = String(ctx.params.disk);
  if (digest && digest !== configDigest(guest)) {
    return {
      error:
        guest.type === 'qemu'
          ? 'checksum mismatch (file change by other user?)'
          : 'detected modified configuration - file changed by other user? Try again.',
    };
  }
  const locked = lockError(guest);
  if (locked && !skiplock) return { error: locked };
  const found = target(ctx, guest, disk, String(ctx.params.size));
  if (typeof found === 'string') return { error: found };
  if (found.to === found.from) return {};
  return {
    commit: (log) => {
      const volume = findVolume(ctx.state, guest.node, found.volid);
      const storage = findStorage(ctx.state, volume?.storage ?? '');
      if (volume) volume.size = found.to;
      if (storage) log.info(...resizeLines(storage, found.volid, found.from, found.to));
      const defaultKey = guest.type === 'qemu' ? 'file' : 'volume';
      const required = guest.type === 'lxc' && disk !== 'rootfs' ? ['mp'] : [];
      guest.config[disk] = printProps(
        { ...found.props, size: formatSize(found.to) },
        { defaultKey, required },
      );
    },
  };
}

function resize(type: Guest['type']) {
  return (ctx: HandlerContext): unknown => {
    if (type === 'qemu') refuseRootOnly(ctx, 'skiplock');
    const vmid = Number(ctx.params.vmid);
    if (type === 'lxc') {
      // pve-container's early checks, before forking
      const guest = loadGuest(ctx, 'lxc');
      checkLock(guest);
      const digest = str(ctx, 'digest');
      if (digest && digest !== configDigest(guest))
        throw dieError('detected modified configuration - file changed by other user? Try again.');
      const found = target(ctx, guest, String(ctx.params.disk), String(ctx.params.size));
      if (typeof found === 'string') throw dieError(found);
    }
    return startGuestTask(
      ctx,
      'resize',
      vmid,
      onGuest(ctx, type, vmid, (guest) => resizePlan(ctx, guest, flag(ctx, 'skiplock'))),
    );
  };
}

const QEMU_DISKS = [
  ...[0, 1, 2, 3].map((i) => `ide${i}`),
  ...Array.from({ length: 31 }, (_, i) => `scsi${i}`),
  ...Array.from({ length: 16 }, (_, i) => `virtio${i}`),
  ...Array.from({ length: 6 }, (_, i) => `sata${i}`),
  'efidisk0',
  'tpmstate0',
];
const LXC_DISKS = ['rootfs', ...Array.from({ length: 256 }, (_, i) => `mp${i}`)];
const SIZE = { type: 'string', pattern: '\\+?\\d+(\\.\\d+)?[KMGT]?' } as const;

export const RESIZE_ROUTES: readonly Route[] = [
  {
    method: 'PUT',
    path: '/nodes/{node}/qemu/{vmid}/resize',
    permissions: perm('/vms/{vmid}', ['VM.Config.Disk']),
    schema: {
      ...GUEST_PARAMS,
      skiplock: SKIPLOCK_PARAM,
      disk: { type: 'string', enum: QEMU_DISKS },
      size: SIZE,
      digest: DIGEST_PARAM,
    },
    handle: resize('qemu'),
  },
  {
    method: 'PUT',
    path: '/nodes/{node}/lxc/{vmid}/resize',
    permissions: perm('/vms/{vmid}', ['VM.Config.Disk'], true),
    schema: {
      ...GUEST_PARAMS,
      disk: { type: 'string', enum: LXC_DISKS },
      size: SIZE,
      digest: DIGEST_PARAM,
    },
    handle: resize('lxc'),
  },
];
