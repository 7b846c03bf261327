// pve_migrate_vm: move a guest to another node (POST .../{vmid}/migrate). A VM's own precondition
// check (GET .../migrate: allowed nodes, local disks, host devices) and the guest's state are read
// first, so that what Proxmox would refuse (a running VM without online, a running container
// without restart, local disks in a live migration, host devices) is refused with the reason.

import { z } from 'zod';
import { own } from '../../core/own';
import { STORAGE_ID_RE } from '../../proxmox/formats';
import { migratePrecondition } from '../../proxmox/schemas';
import { confirm, guestTarget, nodeName, waitArgs } from '../common';
import { defineGuestAction, type Verdict } from '../../writes/guest-action';
import { guestLabel, guestPath, type GuestState } from '../../proxmox/guest-state';
import { formParams } from '../input-formats';

/** `storage-pair-list`: one target storage, or SOURCE:TARGET pairs. */
const STORAGE = STORAGE_ID_RE.source.slice(1, -1);
const STORAGE_MAP_RE = new RegExp(
  `^(?:${STORAGE}|${STORAGE}:${STORAGE}(?:[,;]${STORAGE}:${STORAGE}){0,31})$`,
  'i',
);

const input = z.strictObject({
  ...guestTarget,
  target: nodeName.describe('Node to move it to.'),
  online: z.boolean().optional().describe('VM: live-migrate it while it runs.'),
  with_local_disks: z
    .boolean()
    .optional()
    .describe('VM: copy local disks along in a live migration.'),
  targetstorage: z
    .string()
    .max(1024)
    .regex(STORAGE_MAP_RE, {
      error: 'must be a storage id, or SOURCE:TARGET pairs separated by ","',
    })
    .optional()
    .describe('Target storage, or SOURCE:TARGET pairs.'),
  restart: z.boolean().optional().describe('Container: shut it down, move it, start it again.'),
  confirm,
  ...waitArgs,
});
type Args = z.output<typeof input>;

function judgeContainer(args: Args, state: GuestState, who: string): Verdict {
  if (args.online)
    return {
      ok: false,
      reason:
        'Proxmox cannot live-migrate containers: pass restart: true to move a running one (it is shut down and started again), or shut it down first.',
    };
  if (args.with_local_disks)
    return {
      ok: false,
      reason: "with_local_disks is for VMs; a container's local volumes always move with it.",
    };
  if (state.status === 'running' && !args.restart) {
    return {
      ok: false,
      reason: `${who} is running: a running container moves only by restart (pass restart: true: it is shut down, moved and started again), or shut it down first.`,
    };
  }
  const how =
    state.status === 'running'
      ? 'it is shut down, moved and started again (a short outage)'
      : 'it is stopped, so it just moves';
  return {
    ok: true,
    note: `${who} moves from ${args.node} to ${args.target}: ${how}; its local volumes are copied.`,
  };
}

export const migrateVm = defineGuestAction({
  name: 'pve_migrate_vm',
  scope: 'pve:provision',
  title: 'Migrate a guest to another node',
  description:
    'Move a VM or container to another node (online: live, for a running VM; restart: for a running container). Requires confirm=true.',
  destructive: false,
  idempotent: false,
  input,
  request: (args) => ({
    method: 'POST',
    path: guestPath(args, 'migrate'),
    params:
      args.vm_type === 'qemu'
        ? formParams({
            target: args.target,
            online: args.online,
            'with-local-disks': args.with_local_disks,
            targetstorage: args.targetstorage,
          })
        : formParams({
            target: args.target,
            restart: args.restart,
            'target-storage': args.targetstorage,
          }),
  }),
  async judge(args, state, ctx) {
    const who = guestLabel(args, state.name ?? undefined);
    if (args.target === args.node)
      return { ok: false, reason: `${who} already is on ${args.node}.` };
    if (state.lock)
      return {
        ok: false,
        reason: `${who} is locked (${state.lock}): Proxmox refuses to migrate it until that ends.`,
      };
    if (args.vm_type === 'lxc') return judgeContainer(args, state, who);
    if (args.restart)
      return {
        ok: false,
        reason: 'restart is for containers; a running VM moves with online: true.',
      };
    const pre = await ctx
      .pve()
      .get(guestPath(args, 'migrate'), migratePrecondition, { target: args.target });
    // A node may be named constructor or toString: only the answer's own entries count.
    const refused = own(pre.not_allowed_nodes ?? {}, args.target);
    if (refused !== undefined || (pre.allowed_nodes && !pre.allowed_nodes.includes(args.target))) {
      const why =
        refused && typeof refused === 'object' ? ` (${JSON.stringify(refused).slice(0, 200)})` : '';
      return {
        ok: false,
        reason: `Proxmox does not allow ${who} to go to ${args.target}${why}; it may go to ${pre.allowed_nodes?.join(', ') || 'no node'}.`,
      };
    }
    if (pre.local_resources?.length)
      return {
        ok: false,
        reason: `${who} uses host devices of ${args.node} (${pre.local_resources.join(', ')}): only root may force such a migration.`,
      };
    const running = state.status === 'running';
    if (running && !args.online)
      return {
        ok: false,
        reason: `${who} is running: pass online: true to live-migrate it, or shut it down first.`,
      };
    const local = (pre.local_disks ?? []).filter((d) => !d.cdrom).map((d) => d.volid);
    const attached = (pre.local_disks ?? [])
      .filter((d) => !d.cdrom && d.drivename !== undefined)
      .map((d) => d.volid);
    if (running && attached.length && !args.with_local_disks) {
      return {
        ok: false,
        reason: `${who} runs on local disks (${attached.join(', ')}): pass with_local_disks: true to copy them along during the live migration.`,
      };
    }
    const how = running ? 'while it runs (live migration)' : 'stopped';
    const disks = local.length
      ? ` Its local disks are copied: ${local.join(', ')}.`
      : ' Its disks are on shared storage.';
    return {
      ok: true,
      note: `${who} moves from ${args.node} to ${args.target} ${how}.${disks}`,
      details: { local_disks: local },
    };
  },
  doing: (args) =>
    `migrate ${args.vm_type === 'qemu' ? 'VM' : 'container'} ${args.vmid} to ${args.target}`,
});
