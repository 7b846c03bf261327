// pve_delete_vm: destroy a VM or container (DELETE /nodes/{node}/{qemu|lxc}/{vmid}). The preview
// names the guest, its state, its disks and whether protection is set; a running, protected or
// locked guest is refused with the reason before anything is sent (no force, no skiplock).

import { z } from 'zod';
import { readGuestBindings } from '../../proxmox/blast-radius';
import { guestDisks } from '../../proxmox/guest-disks';
import { guestConfig } from '../../proxmox/schemas';
import { confirm, guestTarget, waitArgs } from '../common';
import { defineGuestAction } from '../../writes/guest-action';
import { guestLabel, guestPath } from '../../proxmox/guest-state';
import { formParams } from '../input-formats';

const input = z.strictObject({
  ...guestTarget,
  purge: z.boolean().optional().describe('Also remove it from backup jobs, replication and HA.'),
  destroy_unreferenced_disks: z
    .boolean()
    .optional()
    .describe('Also destroy disks of this id that its config does not list.'),
  confirm,
  ...waitArgs,
});

export const deleteVm = defineGuestAction({
  name: 'pve_delete_vm',
  scope: 'pve:provision',
  title: 'Delete a guest',
  description:
    'Destroy a stopped VM or container and its disks, for good. Requires confirm=true; the preview names its disks and protection.',
  destructive: true,
  idempotent: false,
  input,
  request: (args) => ({
    method: 'DELETE',
    path: guestPath(args),
    params: formParams({
      purge: args.purge,
      'destroy-unreferenced-disks': args.destroy_unreferenced_disks,
    }),
  }),
  async judge(args, state, ctx) {
    const config = await ctx.pve().get(guestPath(args, 'config'), guestConfig);
    const who = guestLabel(args, state.name ?? undefined);
    const protection = String(config.protection ?? '0') === '1';
    if (protection) {
      return {
        ok: false,
        reason: `${who} has protection set: Proxmox refuses to destroy it. A person turns protection off first, if it really is to go.`,
      };
    }
    // Proxmox's own order: protection, then HA and replication, then the run state.
    if (!args.purge) {
      const bound = await readGuestBindings(ctx.pve(), args);
      const what = [
        bound.ha ? 'is managed by the HA manager' : null,
        bound.replication.length
          ? `has replication job${bound.replication.length > 1 ? 's' : ''} ${bound.replication.join(', ')}`
          : null,
      ].filter(Boolean);
      if (what.length)
        return {
          ok: false,
          reason: `${who} ${what.join(' and ')}: Proxmox refuses to destroy it unless purge: true, which also removes it from HA, replication and backup jobs.`,
        };
    }
    if (state.status === 'running') {
      return {
        ok: false,
        reason: `${who} is running: shut it down first (pve_shutdown_vm); a running guest is never destroyed here.`,
      };
    }
    if (state.lock)
      return {
        ok: false,
        reason: `${who} is locked (${state.lock}): Proxmox refuses this until the operation holding the lock ends.`,
      };
    const disks = guestDisks(config, args.vm_type).filter((d) => !d.cdrom);
    const list = disks.map((d) => `${d.key} ${d.volume}${d.size ? ` (${d.size})` : ''}`);
    const notes = [
      `Destroying ${who} removes it and ${disks.length ? `its disks for good: ${list.join(', ')}` : 'its configuration (it has no disks)'}; its snapshots go with it. Protection is off. This cannot be undone.`,
    ];
    if (state.template)
      notes.push('It is a template: Proxmox refuses while linked clones still use its disks.');
    if (args.purge) notes.push('purge: it is also removed from backup jobs, replication and HA.');
    if (args.destroy_unreferenced_disks)
      notes.push(
        'destroy_unreferenced_disks: disks of this id on any storage that its config does not list are destroyed too.',
      );
    return {
      ok: true,
      note: notes.join(' '),
      details: {
        protection,
        template: state.template,
        disks: disks.map((d) => ({ key: d.key, volume: d.volume, size: d.size })),
      },
    };
  },
  doing: (args) => `destroy ${args.vm_type === 'qemu' ? 'VM' : 'container'} ${args.vmid}`,
  warns: (args) => ({ lossy: 'destroy it', withoutPurge: !args.purge }),
});
