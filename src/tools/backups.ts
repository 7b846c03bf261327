// Backups: take one of a guest (pve_create_backup: POST /nodes/{node}/vzdump, one guest per call),
// restore one (pve_restore_backup: to a new vmid by default, over an existing guest only with
// force and the guest stopped; QEMU through `archive`, containers through `restore=1`), and delete
// one (pve_delete_backup; never a protected one). Each reads first what it acts on: the guest and
// the storage, the backup in the storage's listing, the guest a restore would replace. The preview
// says what would happen and what is lost (the disks and snapshots a restore over a guest
// replaces; the backups that remain after a delete); with confirm the one request is sent.

import { z } from 'zod';
import { ToolFailure, type BaseToolContext } from '../calls/tool-spec';
import { ageInWords, readBlastRadius } from '../proxmox/blast-radius';
import { parseBackupVolume, type BackupVolume } from '../proxmox/backup-volume';
import type { PveClient } from '../proxmox/client';
import { guestDisks } from '../proxmox/guest-disks';
import { anyList, guestConfig, nextId, numeric, parseEach, snapshotItem } from '../proxmox/schemas';
import { confirm, nodeName, storageId, vmid, waitArgs } from './common';
import { outputExtras } from '../calls/result';
import { defineWriteTool, type WritePlan } from '../writes/kernel';
import { requestOutput, taskOutput } from '../writes/output';
import { type PlanSent, stepRequest, type WriteStep } from '../writes/plan';
import { guestLabel, guestPath, processStatus } from '../proxmox/guest-state';
import type { WriteRequest } from '../writes/request';
import { readContent, type Volume } from './read/storage';

const output = z.object({
  mode: z.enum(['preview', 'started', 'done']).optional(),
  request: requestOutput.optional(),
  note: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  upid: z.string().optional(),
  task: taskOutput.optional(),
  next_step: z.string().optional(),
  ...outputExtras,
});

const backupVolume = z
  .string()
  .max(300)
  .superRefine((text, ctx) => {
    const parsed = parseBackupVolume(text);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
  })
  .describe('A volid from pve_list_backups.');

/** A volume the input schema accepted. */
function backupOf(volid: string): BackupVolume {
  const parsed = parseBackupVolume(volid);
  if (typeof parsed === 'string') throw new ToolFailure('invalid_arguments', parsed);
  return parsed;
}

const guestEntry = z.object({
  vmid: numeric,
  type: z.string(),
  node: z.string().optional(),
  name: z.string().optional(),
  status: z.string().optional(),
});
type GuestEntry = z.output<typeof guestEntry>;

/** A guest wherever it is in the cluster, or null. */
async function findGuest(pve: PveClient, id: number): Promise<GuestEntry | null> {
  const all = await pve.get('/cluster/resources', anyList, { type: 'vm' });
  return parseEach(guestEntry, all).find((g) => g.vmid === id) ?? null;
}

const backupStorage = z.object({ storage: z.string(), type: z.string().optional() });

/** What the result of each backup tool says: what it does, and how its result begins. */
interface Said {
  note: string;
  /** The result's first sentence, for the id the request used. */
  head(vmid: number | undefined): string;
}

/** A backup tool's one request, and what its preview and result say about it. */
function backupPlan(
  step: WriteStep,
  note: string,
  head: Said['head'],
  next: { doing: string; also?: string },
  details?: Record<string, unknown>,
): WritePlan<Said> {
  return {
    steps: [step],
    lead: [note],
    shown: { note, ...(details ? { details } : {}) },
    requestsAs: 'request',
    next,
    lost: () =>
      `The request to ${step.doing} may or may not have reached Proxmox: check its tasks (pve_get_task_status) or pve_list_backups before trying again.`,
    facts: { note, head },
  };
}

/** Done at once, or its task started (and how it ended, when waited for). */
function finish(plan: WritePlan<Said>, sent: PlanSent) {
  const note = plan.facts.note;
  const head = plan.facts.head(sent.vmid);
  const o = sent.outcomes[0]!;
  const request = stepRequest(o.step);
  if (!o.upid)
    return { structured: { mode: 'done' as const, request, note }, text: `${head} Done.` };
  return {
    structured: {
      mode: 'started' as const,
      request,
      note,
      upid: o.upid,
      ...(o.task ? { task: o.task.state } : {}),
    },
    text: o.task
      ? `${head} Task ${o.upid}: ${o.task.summary}`
      : `${head} Task ${o.upid} started. Use wait: true to wait for it, or follow it with pve_get_task_status.`,
    isError: o.task?.state.succeeded === false,
  };
}

const NOTES_MAX = 1024;

export const createBackup = defineWriteTool({
  name: 'pve_create_backup',
  scope: 'pve:operate',
  description:
    'Back up one VM or container now (vzdump), e.g. before a change. Requires confirm=true.',
  input: z.strictObject({
    node: nodeName,
    vmid,
    storage: storageId.describe('A backup storage, e.g. local.'),
    mode: z
      .enum(['snapshot', 'suspend', 'stop'])
      .default('snapshot')
      .describe('snapshot keeps it running; stop shuts it down for the backup.'),
    compress: z
      .enum(['0', '1', 'gzip', 'lzo', 'zstd'])
      .optional()
      .describe('Default zstd; none on a Proxmox Backup Server.'),
    notes: z
      .string()
      .max(NOTES_MAX)
      .refine((v) => ![...v].some((c) => c < ' ' || c === '\u007f'), {
        error: 'must be one line of text, without control characters',
      })
      .optional()
      .describe('One line; {{guestname}} and {{vmid}} are filled in.'),
    protected: z.boolean().optional().describe('Keep it from pruning and deletion.'),
    confirm,
    ...waitArgs,
  }),
  output,
  title: 'Back up a guest',
  destructive: false,
  idempotent: false,
  // The guest it acts on, for target.* rules.
  target: (args) => ({ vmid: args.vmid }),
  async plan(args, ctx) {
    const pve = ctx.pve();
    const guest = await findGuest(pve, args.vmid);
    if (!guest)
      throw new ToolFailure('conflict', `No guest ${args.vmid} in the cluster. Nothing was sent.`);
    const kind = guest.type === 'lxc' ? 'lxc' : 'qemu';
    const who = guestLabel({ node: args.node, vmid: args.vmid, vm_type: kind }, guest.name);
    if (guest.node !== args.node)
      throw new ToolFailure(
        'conflict',
        `${who} is on ${guest.node ?? 'another node'}, not ${args.node}: a backup runs on the guest's node. Nothing was sent.`,
      );
    const storages = parseEach(
      backupStorage,
      await pve.get(`/nodes/${encodeURIComponent(args.node)}/storage`, anyList, {
        content: 'backup',
      }),
    );
    const target = storages.find((s) => s.storage === args.storage);
    if (!target)
      throw new ToolFailure(
        'conflict',
        `${args.storage} does not hold backups on ${args.node} (backup storages there: ${storages.map((s) => s.storage).join(', ') || 'none'}). Nothing was sent.`,
      );
    const pbs = target.type === 'pbs';
    if (pbs && args.compress !== undefined)
      throw new ToolFailure('invalid_arguments', `Invalid arguments for pve_create_backup`, [
        {
          field: 'compress',
          message: `${args.storage} is a Proxmox Backup Server storage, which compresses by itself: leave compress out`,
        },
      ]);
    const params: Record<string, string> = {
      vmid: String(args.vmid),
      storage: args.storage,
      mode: args.mode,
      ...(pbs ? {} : { compress: args.compress ?? 'zstd' }),
      // PVE's notes template is one line in which a backslash is written \\.
      ...(args.notes !== undefined ? { 'notes-template': args.notes.replace(/\\/g, '\\\\') } : {}),
      ...(args.protected !== undefined ? { protected: args.protected ? '1' : '0' } : {}),
      // Never prune older backups on the way (vzdump's default): deleting one needs its own call.
      remove: '0',
    };
    const step: WriteStep = {
      method: 'POST',
      path: `/nodes/${encodeURIComponent(args.node)}/vzdump`,
      params,
      doing: `back up ${who}`,
      answer: 'task',
    };
    // A paused VM is listed `paused`: vzdump takes it as running (its QEMU runs).
    const running = guest.status !== undefined && processStatus(guest.status) === 'running';
    const effect =
      args.mode === 'stop' && running
        ? 'it is shut down for the backup and started again afterwards'
        : args.mode === 'suspend' && running
          ? 'it is suspended while the backup runs'
          : running
            ? 'it keeps running (a snapshot backup)'
            : 'it is not running';
    const note = `Backs up ${who} (${guest.status ?? 'state unknown'}) on ${args.node} to ${args.storage}${pbs ? ' (Proxmox Backup Server)' : ''} in ${args.mode} mode: ${effect}.${args.protected ? ' The backup is protected.' : ''} Older backups are kept (no pruning).`;
    const head = () => `${who}: backup to ${args.storage} started.`;
    return backupPlan(step, note, head, { doing: 'back it up' });
  },
  report: (_args, plan, sent) => finish(plan, sent),
});

/** The backup as the storage lists it, or a refusal naming what is there. */
async function listedBackup(
  ctx: BaseToolContext,
  node: string,
  b: BackupVolume,
): Promise<{ found: Volume; siblings: Volume[] }> {
  const all = await readContent(ctx, node, b.storage, { content: 'backup', vmid: b.vmid });
  const found = all.find((v) => v.volid === b.volid);
  if (!found)
    throw new ToolFailure(
      'conflict',
      `${b.volid} is not on ${b.storage} as ${node} sees it (pve_list_backups lists what is). Nothing was sent.`,
    );
  return { found, siblings: all.filter((v) => v.volid !== b.volid) };
}

const madeAgo = (v: Volume, now: number) =>
  v.created ? `${ageInWords(Math.max(0, now - Date.parse(v.created)))} ago` : 'at an unknown time';

export const restoreBackup = defineWriteTool({
  name: 'pve_restore_backup',
  scope: 'pve:provision',
  description:
    'Restore a backup as a new guest (next free vmid by default), or with force=true over a stopped guest, replacing its disks and snapshots. Requires confirm=true.',
  input: z.strictObject({
    node: nodeName,
    volume: backupVolume,
    vmid: vmid.optional().describe('Target vmid; the next free one when left out.'),
    storage: storageId
      .optional()
      .describe('Storage for its disks (default: a VM where they were, a container local).'),
    force: z.boolean().default(false).describe('Replace the existing guest with this vmid.'),
    start: z.boolean().default(false).describe('Start it afterwards.'),
    confirm,
    ...waitArgs,
  }),
  output,
  title: 'Restore a backup',
  destructive: true,
  idempotent: false,
  fills: ['vmid'],
  // The guest restored over, or (no guest has the id) the one the restore makes: on its node, of
  // the backup's kind, with the tags, name and template flag the backup's config holds.
  target: (args) =>
    args.vmid === undefined
      ? null
      : {
          vmid: args.vmid,
          absent: { node: args.node, vm_type: backupOf(args.volume).kind },
          archive: { node: args.node, volume: args.volume },
        },
  async resolve(args, ctx) {
    if (args.vmid !== undefined) return { args, filled: [] };
    return {
      args: { ...args, vmid: await ctx.pve().get('/cluster/nextid', nextId) },
      filled: ['vmid'],
    };
  },
  // What a restore over a guest replaces; a restore as a new guest touches no guest.
  blastRadius: async (args, ctx) =>
    args.force && args.vmid !== undefined
      ? readBlastRadius(
          ctx.pve(),
          { node: args.node, vmid: args.vmid, vm_type: backupOf(args.volume).kind },
          { lossy: 'restore over it' },
        )
      : null,
  async plan(args, ctx) {
    const pve = ctx.pve();
    const b = backupOf(args.volume);
    const target = args.vmid ?? (await pve.get('/cluster/nextid', nextId));
    const given = !ctx.filled.includes('vmid');
    const { found } = await listedBackup(ctx, args.node, b);
    const now = ctx.clock.now();
    const existing = await findGuest(pve, target);
    const what = b.kind === 'qemu' ? 'VM' : 'container';
    const into = guestLabel({ node: args.node, vmid: target, vm_type: b.kind }, existing?.name);
    let lost = '';
    let details: Record<string, unknown> | undefined;
    if (existing) {
      const existingKind = existing.type === 'lxc' ? 'lxc' : 'qemu';
      if (!args.force)
        throw new ToolFailure(
          'conflict',
          `${into} exists: restoring over it replaces it, which needs force: true (and the guest stopped). Leave vmid out to restore as a new ${what}. Nothing was sent.`,
        );
      if (existingKind !== b.kind)
        throw new ToolFailure(
          'conflict',
          `${into} is a ${existingKind === 'qemu' ? 'VM' : 'container'}, and ${b.volid} is a ${what} backup: it cannot replace it. Nothing was sent.`,
        );
      if (existing.node !== args.node)
        throw new ToolFailure(
          'conflict',
          `${into} is on ${existing.node ?? 'another node'}: restore over it there. Nothing was sent.`,
        );
      if (existing.status !== undefined && processStatus(existing.status) === 'running')
        throw new ToolFailure(
          'conflict',
          `${into} is running: shut it down first; a running guest is never replaced. Nothing was sent.`,
        );
      const ref = { node: args.node, vmid: target, vm_type: b.kind };
      const [config, snaps] = await Promise.all([
        pve.get(guestPath(ref, 'config'), guestConfig),
        pve.get(guestPath(ref, 'snapshot'), anyList),
      ]);
      const disks = guestDisks(config, b.kind).filter((d) => !d.cdrom);
      const snapshots = parseEach(snapshotItem, snaps)
        .map((s) => s.name)
        .filter((n) => n !== 'current');
      lost = ` This replaces ${into} for good: its configuration, its disks (${disks.map((d) => `${d.key} ${d.volume}${d.size ? ` (${d.size})` : ''}`).join(', ') || 'none'}) and its snapshots (${snapshots.join(', ') || 'none'}) are lost.`;
      details = { replaces: { disks, snapshots } };
    } else if (args.force) {
      lost = ` No guest ${target} exists: it is restored as a new one (force is not sent).`;
    }
    const replaces = existing !== null;
    const step = (id: number): WriteStep => ({
      ...restoreRequest(args, id, replaces),
      doing: `restore ${b.volid}`,
      answer: 'task',
    });
    const note = `Restores ${b.volid} (${b.kind === 'qemu' ? 'VM' : 'container'} ${b.vmid}, made ${madeAgo(found, now)}${found.notes ? `, "${found.notes}"` : ''}) as ${into} on ${args.node}${args.storage ? `, its disks on ${args.storage}` : ''}${replaces ? '' : ', with new MAC addresses'}${args.start ? ', then starts it' : ''}.${lost}`;
    const plan = backupPlan(
      step(target),
      note,
      (id = target) => `${b.volid}: restore as ${what} ${id} started.`,
      { doing: 'restore it', also: given ? '' : ` and vmid: ${target}` },
      details,
    );
    if (given) return plan;
    return {
      ...plan,
      freshId: { vmid: target, idArg: 'vmid', rebuild: (id) => [step(id)] },
      lost: (id = target) =>
        `The restore of ${b.volid} as ${what} ${id} may or may not have reached Proxmox: check with pve_list_vms whether ${what} ${id} exists before trying again.`,
    };
  },
  report: (_args, plan, sent) => finish(plan, sent),
});

/**
 * The restore request. `replaces`: over the guest the preview saw (force=1); otherwise a new
 * guest, with new MAC addresses (unique=1) so it can run beside the original, and without force,
 * so that a guest that appeared at that id meanwhile makes Proxmox refuse.
 */
function restoreRequest(
  args: { node: string; volume: string; storage?: string; force: boolean; start: boolean },
  target: number,
  replaces: boolean,
): WriteRequest {
  const b = backupOf(args.volume);
  const common = {
    vmid: String(target),
    ...(args.storage ? { storage: args.storage } : {}),
    ...(replaces && args.force ? { force: '1' } : { unique: '1' }),
    ...(args.start ? { start: '1' } : {}),
  };
  return {
    method: 'POST',
    path: `/nodes/${encodeURIComponent(args.node)}/${b.kind}`,
    params:
      b.kind === 'qemu'
        ? { ...common, archive: b.volid }
        : { ...common, ostemplate: b.volid, restore: '1' },
  };
}

export const deleteBackup = defineWriteTool({
  name: 'pve_delete_backup',
  scope: 'pve:operate',
  description:
    'Delete one backup for good (never a protected one). Requires confirm=true; the preview says which remain.',
  input: z.strictObject({ node: nodeName, volume: backupVolume, confirm, ...waitArgs }),
  output,
  title: 'Delete a backup',
  destructive: true,
  idempotent: false,
  // The guest the backup is of: while it exists, its facts; once gone, those its backup keeps.
  target: (args) => ({
    vmid: backupOf(args.volume).vmid,
    gone: true,
    archive: { node: args.node, volume: args.volume },
  }),
  async plan(args, ctx) {
    const b = backupOf(args.volume);
    const { found, siblings } = await listedBackup(ctx, args.node, b);
    const now = ctx.clock.now();
    if (found.protected)
      throw new ToolFailure(
        'conflict',
        `${b.volid} is protected: Proxmox refuses to delete it, and so does this tool. A person removes its protection first, if it really is to go. Nothing was sent.`,
      );
    const newest = siblings
      .filter((v) => v.created !== null)
      .sort((x, y) => (y.created ?? '').localeCompare(x.created ?? ''))[0];
    const remain = siblings.length
      ? `${siblings.length} other backup${siblings.length === 1 ? '' : 's'} of ${b.vmid} remain on ${b.storage}${newest ? `, the newest made ${madeAgo(newest, now)} (${newest.volid})` : ''}.`
      : `It is the only backup of ${b.vmid} on ${b.storage}: none remains there.`;
    const note = `Deletes ${b.volid} (made ${madeAgo(found, now)}${found.notes ? `, "${found.notes}"` : ''}) for good. ${remain}`;
    const step: WriteStep = {
      method: 'DELETE',
      path: deletePath(args.node, b),
      params: {},
      doing: `delete ${b.volid}`,
      answer: 'task?',
    };
    return backupPlan(
      step,
      note,
      () => `${b.volid}: deletion started.`,
      { doing: 'delete it' },
      { remaining: siblings.map((v) => v.volid) },
    );
  },
  report: (_args, plan, sent) => finish(plan, sent),
});

function deletePath(node: string, b: BackupVolume): string {
  return `/nodes/${encodeURIComponent(node)}/storage/${encodeURIComponent(b.storage)}/content/${encodeURIComponent(b.volid)}`;
}
