// Storages and what they hold: the storages (configured cluster-wide, or one node's with usage),
// a storage's backups, and its content of one kind, so that an agent picks a real ISO, container
// template or import image by its volume id instead of guessing one.

import { z } from 'zod';
import { defineReadTool, type BaseToolContext } from '../../calls/tool-spec';
import { fieldsNamed } from '../../core/fields';
import { anyList, maybe, parseEach } from '../../proxmox/schemas';
import { isoSeconds, nodeName, round2, storageId, toGib, vmid } from '../common';
import { orNull, outputExtras } from '../../calls/result';
import { decodeCursor, pageAfter, pageArgs, pagedOutput } from './paging';

const list = (text: string | undefined): string[] =>
  text
    ? text
        .split(/[,;\s]+/)
        .filter(Boolean)
        .sort()
    : [];

const storageRaw = z.object({
  storage: z.string(),
  ...fieldsNamed('type content nodes', maybe.text),
  ...fieldsNamed('shared active enabled disable', maybe.flag),
  ...fieldsNamed('total used avail', maybe.number),
});

const storageRow = z.object({
  storage: z.string(),
  type: z.string().nullable(),
  content: z.array(z.string()),
  ...fieldsNamed('shared enabled active', orNull.flag),
  nodes: z.array(z.string()).nullable(),
  ...fieldsNamed('total_gib used_gib avail_gib used_percent', orNull.number),
});

export const listStorage = defineReadTool({
  name: 'pve_list_storage',
  title: 'List storages',
  description:
    "Storages and what each holds (images, iso, vztmpl, backup...); with node, that node's storages and their usage.",
  input: z.strictObject({
    node: nodeName.optional().describe('A node, for its storages with usage.'),
  }),
  output: z.object({ storages: z.array(storageRow).optional(), ...outputExtras }),
  async run(args, ctx) {
    const path = args.node ? `/nodes/${encodeURIComponent(args.node)}/storage` : '/storage';
    const storages = parseEach(storageRaw, await ctx.pve().get(path, anyList))
      .map((s) => ({
        storage: s.storage,
        type: s.type ?? null,
        content: list(s.content),
        shared: s.shared ?? null,
        enabled: s.enabled ?? (s.disable === undefined ? null : !s.disable),
        active: s.active ?? null,
        nodes: s.nodes ? list(s.nodes) : null,
        total_gib: toGib(s.total),
        used_gib: toGib(s.used),
        avail_gib: toGib(s.avail),
        used_percent: s.total ? round2(((s.used ?? 0) / s.total) * 100) : null,
      }))
      .sort((a, b) => a.storage.localeCompare(b.storage));
    const lines = storages.map(
      (s) =>
        `${s.storage} (${s.type ?? '?'}): ${s.content.join(', ') || 'no content'}${s.total_gib !== null ? `, ${s.used_gib}/${s.total_gib} GiB used` : ''}${s.active === false ? ', inactive' : ''}`,
    );
    return {
      structured: { storages },
      text: `${storages.length} storage${storages.length === 1 ? '' : 's'}${args.node ? ` on ${args.node}` : ''}:\n${lines.join('\n')}`,
    };
  },
});

const contentRaw = z.object({
  volid: z.string(),
  ...fieldsNamed('content format notes', maybe.text),
  ...fieldsNamed('size ctime vmid', maybe.number),
  protected: maybe.flag(),
  verification: z.object({ state: z.string() }).partial().optional(),
});

const volume = z.object({
  volid: z.string(),
  ...fieldsNamed('content format', orNull.text),
  size_gib: z.number().nullable(),
  created: z.string().nullable(),
  vmid: z.number().nullable(),
  notes: z.string().nullable(),
  protected: z.boolean(),
  /** A Proxmox Backup Server backup's last verification (ok, failed), when it has one. */
  verified: z.string().nullable().optional(),
});
export type Volume = z.output<typeof volume>;

export async function readContent(
  ctx: BaseToolContext,
  node: string,
  storage: string,
  query: Record<string, string | number | undefined>,
): Promise<Volume[]> {
  const path = `/nodes/${encodeURIComponent(node)}/storage/${encodeURIComponent(storage)}/content`;
  return parseEach(contentRaw, await ctx.pve().get(path, anyList, query)).map((v) => ({
    volid: v.volid,
    content: v.content ?? null,
    format: v.format ?? null,
    size_gib: toGib(v.size),
    created: isoSeconds(v.ctime),
    vmid: v.vmid ?? null,
    notes: v.notes?.trim() || null,
    protected: v.protected ?? false,
    ...(v.verification?.state ? { verified: v.verification.state } : {}),
  }));
}

const storageTarget = {
  node: nodeName.describe('Node whose view of the storage to read, e.g. pve1.'),
  storage: storageId.describe('Storage id, e.g. local.'),
  vmid: vmid.optional().describe('Only volumes of this guest.'),
};

export const listBackups = defineReadTool({
  name: 'pve_list_backups',
  title: 'List backups',
  description:
    'List the backups on a storage (newest first; on a Proxmox Backup Server with their verification), optionally of one guest.',
  input: z.strictObject(storageTarget),
  output: z.object({ backups: z.array(volume).optional(), ...outputExtras }),
  async run(args, ctx) {
    const backups = (
      await readContent(ctx, args.node, args.storage, { content: 'backup', vmid: args.vmid })
    ).sort((a, b) => (b.created ?? '').localeCompare(a.created ?? ''));
    const lines = backups.map(
      (b) =>
        `${b.volid}, ${b.created ?? 'time unknown'}, ${b.size_gib ?? '?'} GiB${b.protected ? ', protected' : ''}${b.verified ? `, verification ${b.verified}` : ''}${b.notes ? `: ${b.notes.split('\n')[0]}` : ''}`,
    );
    return {
      structured: { backups },
      text: backups.length
        ? `${backups.length} backup${backups.length === 1 ? '' : 's'} on ${args.storage}:\n${lines.join('\n')}`
        : `No backups on ${args.storage}${args.vmid ? ` for ${args.vmid}` : ''}.`,
    };
  },
});

const CONTENT_NAME = 'pve_list_storage_content';

export const listStorageContent = defineReadTool({
  name: CONTENT_NAME,
  title: 'List storage content',
  description:
    'Volumes of one kind on a storage (iso, vztmpl, import, images, rootdir, backup, snippets), to pick a real volume id (local:iso/debian-12.iso). Paged.',
  input: z.strictObject({
    ...storageTarget,
    content: z
      .enum(['iso', 'vztmpl', 'import', 'images', 'rootdir', 'backup', 'snippets'])
      .describe('The kind of volume.'),
    ...pageArgs(400),
  }),
  output: pagedOutput('volumes', volume),
  async run(args, ctx) {
    const after = decodeCursor(CONTENT_NAME, args.cursor);
    const all = (
      await readContent(ctx, args.node, args.storage, { content: args.content, vmid: args.vmid })
    ).sort((a, b) => (a.volid < b.volid ? -1 : a.volid > b.volid ? 1 : 0));
    const { page, next, rest } = pageAfter(CONTENT_NAME, all, (v) => v.volid, after, args.limit);
    const more = next ? `\n${rest} more: call again with cursor "${next}".` : '';
    const lines = page.map((v) => `${v.volid}${v.size_gib !== null ? ` (${v.size_gib} GiB)` : ''}`);
    return {
      structured: { volumes: page, total: all.length, next_cursor: next },
      text: all.length
        ? `${all.length} ${args.content} volume${all.length === 1 ? '' : 's'} on ${args.storage}:\n${lines.join('\n')}${more}`
        : `No ${args.content} volumes on ${args.storage}.`,
    };
  },
});
