// pve_resize_disk: grow a VM disk or a container volume (PUT .../{vmid}/resize, a task in PVE 9).
// Proxmox only grows: a size that would shrink the disk is refused, and one it already has is
// left alone, before anything is sent, judged against the size the config records.

import { z } from 'zod';
import { ToolFailure } from '../../calls/tool-spec';
import {
  RESIZE_FIELDS,
  describeBytes,
  parseResizeSize,
  resizedBytes,
} from '../../proxmox/disk-size';
import { DISK_KEY_RE, guestDisks } from '../../proxmox/guest-disks';
import { guestConfig } from '../../proxmox/schemas';
import { confirm, guestTarget, waitArgs } from '../common';
import { defineGuestAction } from '../../writes/guest-action';
import { guestLabel, guestPath } from '../../proxmox/guest-state';
import { propertyString } from '../input-formats';

const input = z.strictObject({
  ...guestTarget,
  disk: z
    .string()
    .regex(/^(?:(?:ide|sata|scsi|virtio|mp)\d{1,3}|efidisk0|tpmstate0|rootfs)$/, {
      error: 'must be a disk such as scsi0, virtio0, rootfs or mp0',
    })
    .describe('e.g. scsi0; a container: rootfs, mp0.'),
  size: propertyString(parseResizeSize, '+10G or 40G').describe(
    '+SIZE to grow by, SIZE to grow to (K, M, G, T).',
  ),
  confirm,
  ...waitArgs,
});

export const resizeDisk = defineGuestAction({
  name: 'pve_resize_disk',
  scope: 'pve:provision',
  title: 'Grow a disk of a guest',
  description:
    'Grow a VM disk or container volume (Proxmox never shrinks). Requires confirm=true; the preview gives the sizes before and after.',
  destructive: false,
  idempotent: false,
  input,
  policyFields: { size: RESIZE_FIELDS },
  request: (args) => ({
    method: 'PUT',
    path: guestPath(args, 'resize'),
    params: { disk: args.disk, size: args.size.text },
  }),
  async judge(args, state, ctx) {
    if (!DISK_KEY_RE[args.vm_type].test(args.disk) || args.disk.startsWith('unused')) {
      throw new ToolFailure('invalid_arguments', `Invalid arguments for pve_resize_disk`, [
        {
          field: 'disk',
          message:
            args.vm_type === 'qemu'
              ? 'a VM disk is ide0-3, sata0-5, scsi0-30, virtio0-15, efidisk0 or tpmstate0'
              : 'a container volume is rootfs or mp0-255',
        },
      ]);
    }
    const config = await ctx.pve().get(guestPath(args, 'config'), guestConfig);
    const who = guestLabel(args, state.name ?? undefined);
    const disks = guestDisks(config, args.vm_type).filter((d) => !d.unused);
    const disk = disks.find((d) => d.key === args.disk);
    if (!disk)
      return {
        ok: false,
        reason: `${who} has no ${args.disk} (it has ${disks.map((d) => d.key).join(', ') || 'no disks'}).`,
      };
    if (disk.cdrom)
      return {
        ok: false,
        reason: `${args.disk} of ${who} is a CD-ROM drive, which has no size to grow.`,
      };
    if (state.lock)
      return {
        ok: false,
        reason: `${who} is locked (${state.lock}): Proxmox refuses this until the operation holding the lock ends.`,
      };
    if (disk.bytes === null) {
      return {
        ok: true,
        note: `${args.disk} (${disk.volume}): its config does not record a size, so Proxmox judges ${args.size.text}; it refuses to shrink.`,
      };
    }
    const after = resizedBytes(args.size, disk.bytes);
    if (after < disk.bytes) {
      return {
        ok: false,
        reason: `Proxmox only grows disks: ${args.disk} of ${who} is ${describeBytes(disk.bytes)}, more than ${args.size.text}. Give a larger size, or +SIZE.`,
      };
    }
    if (after === disk.bytes)
      return {
        ok: 'unchanged',
        note: `Its ${args.disk} already is ${describeBytes(disk.bytes)}.`,
      };
    const inside =
      args.vm_type === 'qemu'
        ? 'The partition and file system inside are not grown: do that in the guest (growpart, resize2fs), or cloud-init does it at boot.'
        : "The container's file system is grown with it.";
    return {
      ok: true,
      note: `${args.disk} (${disk.volume}) grows from ${describeBytes(disk.bytes)} to ${describeBytes(after)}. ${inside}`,
      details: { disk: args.disk, volume: disk.volume, from_bytes: disk.bytes, to_bytes: after },
    };
  },
  doing: (args) =>
    `grow ${args.disk} ${args.size.text.startsWith('+') ? `by ${args.size.text.slice(1)}` : `to ${args.size.text}`}`,
});
