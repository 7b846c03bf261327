// Snapshots of a guest: list them (a tree: each names its parent; `current` is where the live
// state hangs), take one, delete one, roll back to one. Writes are judged against the list as it
// is now: a name that exists (or does not), and what a rollback or a delete will lose.

import { z } from 'zod';
import { type BaseToolContext, defineReadTool } from '../calls/tool-spec';
import { anyList, parseEach, snapshotItem } from '../proxmox/schemas';
import { confirm, guestTarget, isoSeconds, snapshotName, waitArgs } from './common';
import { outputExtras } from '../calls/result';
import { defineGuestAction, type Verdict } from '../writes/guest-action';
import { guestLabel, guestPath, type GuestRef, type GuestState } from '../proxmox/guest-state';

const snapshot = z.object({
  name: z.string(),
  parent: z.string().nullable(),
  time: z.string().nullable(),
  vmstate: z.boolean(),
  description: z.string(),
});
type Snapshot = z.output<typeof snapshot>;

/** The guest's snapshots (without the `current` pseudo-entry) and the one the live state follows. */
async function readSnapshots(
  ctx: Pick<BaseToolContext, 'pve'>,
  g: GuestRef,
): Promise<{ snapshots: Snapshot[]; current: string | null }> {
  const items = await ctx.pve().get(guestPath(g, 'snapshot'), anyList);
  const snapshots: Snapshot[] = [];
  let current: string | null = null;
  for (const s of parseEach(snapshotItem, items)) {
    if (s.name === 'current') {
      current = s.parent ?? null;
      continue;
    }
    snapshots.push({
      name: s.name,
      parent: s.parent ?? null,
      time: isoSeconds(s.snaptime),
      vmstate: s.vmstate ?? false,
      description: (s.description ?? '').trim(),
    });
  }
  snapshots.sort((a, b) => (a.time ?? '').localeCompare(b.time ?? ''));
  return { snapshots, current };
}

export const listSnapshots = defineReadTool({
  name: 'pve_list_snapshots',
  title: 'List snapshots of a guest',
  description:
    'Snapshots of a VM or container: name, parent, time, RAM saved, and which one the current state follows.',
  input: z.strictObject(guestTarget),
  output: z.object({
    snapshots: z.array(snapshot).optional(),
    current_parent: z.string().nullable().optional(),
    ...outputExtras,
  }),
  // The guest it acts on, for target.* rules.
  target: (args) => ({ vmid: args.vmid }),
  async run(args, ctx) {
    const { snapshots, current } = await readSnapshots(ctx, args);
    const label = guestLabel(args);
    const lines = snapshots.map(
      (s) =>
        `${s.name}${s.parent ? ` (after ${s.parent})` : ''}, ${s.time ?? 'time unknown'}${s.vmstate ? ', with RAM' : ''}${s.description ? `: ${s.description.split('\n')[0]}` : ''}`,
    );
    const text = snapshots.length
      ? `${label} has ${snapshots.length} snapshot${snapshots.length === 1 ? '' : 's'}; the current state follows ${current ?? 'none'}:\n${lines.join('\n')}`
      : `${label} has no snapshots.`;
    return { structured: { snapshots, current_parent: current }, text };
  },
});

const createInput = z.strictObject({
  ...guestTarget,
  snapname: snapshotName
    .refine((n) => n.toLowerCase() !== 'current', {
      message: '"current" is reserved for the live state',
    })
    .describe('Snapshot name, e.g. pre_upgrade.'),
  description: z.string().max(8192).optional().describe('What the snapshot is for.'),
  vmstate: z
    .boolean()
    .optional()
    .describe('QEMU only: also save the RAM, so a rollback resumes the running VM.'),
  confirm,
  ...waitArgs,
});

const namedInput = z.strictObject({
  ...guestTarget,
  snapname: snapshotName.describe('Name of an existing snapshot.'),
  confirm,
  ...waitArgs,
});
const rollbackInput = namedInput.extend({
  start: z.boolean().optional().describe('Start the guest after the rollback.'),
});

async function findSnapshot(
  ctx: BaseToolContext,
  g: GuestRef,
  name: string,
): Promise<{ found: Snapshot | undefined; all: Snapshot[]; current: string | null }> {
  const { snapshots, current } = await readSnapshots(ctx, g);
  return { found: snapshots.find((s) => s.name === name), all: snapshots, current };
}

function missing(g: GuestRef, name: string, all: Snapshot[]): Verdict {
  const known = all.length ? `it has ${all.map((s) => s.name).join(', ')}` : 'it has none';
  return { ok: false, reason: `${guestLabel(g)} has no snapshot named ${name} (${known}).` };
}

export const createSnapshot = defineGuestAction({
  name: 'pve_create_snapshot',
  scope: 'pve:operate',
  title: 'Snapshot a guest',
  description:
    'Take a snapshot of a VM or container (disks; with vmstate also RAM). Requires confirm=true; previews otherwise.',
  destructive: false,
  idempotent: false,
  input: createInput,
  request: (args) => {
    const params: Record<string, string> = { snapname: args.snapname };
    if (args.description !== undefined) params.description = args.description;
    if (args.vmstate !== undefined) params.vmstate = args.vmstate ? '1' : '0';
    return { method: 'POST', path: guestPath(args, 'snapshot'), params };
  },
  async judge(args, state, ctx) {
    if (args.vmstate !== undefined && args.vm_type === 'lxc')
      return {
        ok: false,
        reason: 'vmstate is for QEMU VMs only: containers have no RAM state to save.',
      };
    const { found } = await findSnapshot(ctx, args, args.snapname);
    if (found)
      return {
        ok: false,
        reason: `${guestLabel(args, state.name ?? undefined)} already has a snapshot named ${args.snapname} (from ${found.time ?? 'an unknown time'}).`,
      };
    if (state.lock)
      return {
        ok: false,
        reason: `${guestLabel(args, state.name ?? undefined)} is locked (${state.lock}): Proxmox refuses a snapshot until that ends.`,
      };
    const ram =
      args.vmstate && state.status === 'running'
        ? ' and its RAM (a rollback resumes it running)'
        : '';
    const crash =
      !args.vmstate && state.status === 'running'
        ? ' It keeps running; the disks are captured as after a power cut unless vmstate: true.'
        : '';
    return { ok: true, note: `Snapshot ${args.snapname} will hold the disks${ram}.${crash}` };
  },
  doing: (args) => `create snapshot ${args.snapname}`,
});

/**
 * The snapshot a change names, with the guest's others; or why Proxmox would refuse `what` (a
 * change of "this", "a rollback"): no such snapshot, or the guest locked.
 */
async function snapshotToChange(
  ctx: BaseToolContext,
  args: GuestRef & { snapname: string },
  state: GuestState,
  what: string,
): Promise<{ found: Snapshot; all: Snapshot[] } | Verdict> {
  const { found, all } = await findSnapshot(ctx, args, args.snapname);
  if (!found) return missing(args, args.snapname, all);
  if (state.lock)
    return {
      ok: false,
      reason: `${guestLabel(args, state.name ?? undefined)} is locked (${state.lock}): Proxmox refuses ${what} until that ends.`,
    };
  return { found, all };
}

export const deleteSnapshot = defineGuestAction({
  name: 'pve_delete_snapshot',
  scope: 'pve:operate',
  title: 'Delete a snapshot of a guest',
  description:
    'Delete one snapshot of a VM or container; the guest itself is not changed. Requires confirm=true; previews otherwise.',
  destructive: true,
  idempotent: true,
  input: namedInput,
  request: (args) => ({
    method: 'DELETE',
    path: guestPath(args, 'snapshot', args.snapname),
    params: {},
  }),
  async judge(args, state, ctx) {
    const named = await snapshotToChange(ctx, args, state, 'this');
    if ('ok' in named) return named;
    const { found, all } = named;
    const children = all.filter((s) => s.parent === found.name).map((s) => s.name);
    const reparent = children.length
      ? ` ${children.join(', ')} will follow ${found.parent ?? 'nothing'} instead.`
      : '';
    return {
      ok: true,
      note: `Snapshot ${found.name} (${found.time ?? 'time unknown'}) and what only it holds are gone for good; the guest's current state does not change.${reparent}`,
    };
  },
  doing: (args) => `delete snapshot ${args.snapname}`,
});

export const rollbackSnapshot = defineGuestAction({
  name: 'pve_rollback_snapshot',
  scope: 'pve:operate',
  title: 'Roll a guest back to a snapshot',
  description:
    'Roll a VM or container back to a snapshot: everything since it is lost. Requires confirm=true; previews otherwise.',
  destructive: true,
  idempotent: false,
  input: rollbackInput,
  request: (args) => ({
    method: 'POST',
    path: guestPath(args, 'snapshot', args.snapname, 'rollback'),
    params:
      args.start === undefined ? ({} as Record<string, string>) : { start: args.start ? '1' : '0' },
  }),
  async judge(args, state, ctx) {
    const named = await snapshotToChange(ctx, args, state, 'a rollback');
    if ('ok' in named) return named;
    const { found } = named;
    const running =
      state.status === 'running'
        ? ` It is running now and will be stopped first${found.vmstate ? ', then resumed from the saved RAM' : ''}.`
        : '';
    return {
      ok: true,
      note: `Rolling back to ${found.name} (${found.time ?? 'time unknown'}) discards everything since: disk writes, configuration changes${found.vmstate ? '' : ' and the running state'}.${running}`,
    };
  },
  doing: (args) => `roll back to snapshot ${args.snapname}`,
  warns: (args) => ({ lossy: `roll it back to ${args.snapname}` }),
});
