// What a call would hit, read for the person who judges it: the guest's state, whether the HA
// manager and replication jobs act on it, its newest backup and how old that is, protection,
// lock, snapshots, pool, tags and disks. Every read runs at once under one deadline; what the
// policy already read of the guest for this call is not read again (PveClient.shared). A fact
// that could not be read is left out and named with the reason, never guessed. The result is
// plain JSON: it is stored with an approval, shown on its page and sent in its notifications.

import { z } from 'zod';
import type { CallOptions, PveClient } from './client';
import { PveError } from './errors';
import { guestDisks } from './guest-disks';
import {
  accessPermissions,
  boolish,
  guestConfig,
  guestStatus,
  numeric,
  parseEach,
  snapshotItem,
} from './schemas';

/** All reads together may take this long; a read still running then is named unreadable. */
export const BLAST_RADIUS_BUDGET_MS = 3_000;
/** A backup older than this makes a destroy or a rollback warn. */
export const STALE_BACKUP_MS = 24 * 3_600_000;
/** Backup storages read at most (each one is one request); the others are named unread. */
const MAX_BACKUP_STORAGES = 8;
/** What is kept of a list (snapshots, tags, disks, jobs) and of a text: facts stay small. */
const MAX_ITEMS = 50;
const MAX_TEXT = 200;
const clip = (v: string): string => (v.length > MAX_TEXT ? `${v.slice(0, MAX_TEXT - 1)}…` : v);

export interface BlastGuest {
  node: string;
  vmid: number;
  vm_type: 'qemu' | 'lxc';
}

export interface BlastBackup {
  volid: string;
  storage: string;
  /** ISO time the backup was made. */
  at: string;
  age_hours: number;
  protected: boolean;
  /** The last verification's state on a Proxmox Backup Server storage ("ok", "failed"), if any. */
  verified: string | null;
}

export interface BlastReplication {
  id: string;
  target: string;
  schedule: string;
  disabled: boolean;
}

/** The facts; each is absent when it could not be read (then `unreadable` says why). */
export interface BlastRadius {
  /** `cluster`: the guest's, where the server reaches several (a vmid is unique within one). */
  guest: BlastGuest & { name: string | null; cluster?: string };
  /** When the facts were read (ISO). */
  read_at: string;
  status?: string;
  ha?: { managed: false } | { managed: true; state: string };
  replication?: BlastReplication[];
  /** null: no backup of this guest on any backup storage the node sees. */
  newest_backup?: BlastBackup | null;
  /** How many backups of this guest the storages read hold (as the API token sees them). */
  backup_count?: number;
  /** How many snapshots it has (the list keeps the first 50). */
  snapshot_count?: number;
  protection?: boolean;
  lock?: string | null;
  snapshots?: string[];
  pool?: string | null;
  tags?: string[];
  disks?: { key: string; volume: string; size: string | null }[];
  /** Things the approver should weigh first (a missing or old backup before a destroy). */
  warnings: string[];
  /** fact → why it could not be read. */
  unreadable: Record<string, string>;
}

export interface BlastOptions {
  /** The call loses the guest's current data (a destroy, a rollback): warn about old backups. */
  lossy?: string;
  /** A destroy without purge: warn that Proxmox refuses it for a guest in HA or replication. */
  withoutPurge?: boolean;
  budgetMs?: number;
}

/** A fact that could not be read, with why in words that hold no secret. */
class Unreadable extends Error {}

const haResource = z.object({ sid: z.string(), state: z.string().optional() });
const replicationJob = z.object({
  id: z.string(),
  guest: numeric,
  target: z.string(),
  schedule: z.string().optional(),
  disable: boolish.optional(),
});
const backupStorage = z.object({
  storage: z.string(),
  active: boolish.optional(),
  enabled: boolish.optional(),
});
const backupVolume = z.object({
  volid: z.string(),
  subtype: z.enum(['qemu', 'lxc']).optional().catch(undefined),
  vmid: numeric.optional(),
  ctime: numeric.optional(),
  protected: boolish.optional(),
  verification: z.object({ state: z.string().optional() }).partial().optional(),
});
const vmResource = z.object({ vmid: numeric.optional(), pool: z.string().optional() });

const seg = encodeURIComponent;

/** Why a read failed, in a line (PveError messages hold no secret; others are not shown). */
export function whyUnreadable(err: unknown): string {
  const text =
    err instanceof PveError || err instanceof Unreadable ? err.message : 'the read failed';
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

export async function readBlastRadius(
  pve: PveClient,
  g: BlastGuest,
  options: BlastOptions = {},
): Promise<BlastRadius> {
  const now = pve.clock.now();
  const deadline = now + (options.budgetMs ?? BLAST_RADIUS_BUDGET_MS);
  const left = () => ({ timeoutMs: Math.max(1, deadline - pve.clock.now()) });
  const base = `/nodes/${seg(g.node)}/${g.vm_type}/${g.vmid}`;
  const out: BlastRadius = {
    // These three only: a caller may hand in a whole call's arguments, and what goes on to
    // approval pages, notifications and the stored approval must never carry one of its values.
    guest: { node: g.node, vmid: g.vmid, vm_type: g.vm_type, name: null },
    read_at: new Date(now).toISOString(),
    warnings: [],
    unreadable: {},
  };
  let visibility: Visibility | null = null;
  const fact = async <T>(names: string[], read: () => Promise<T>, keep: (v: T) => void) => {
    try {
      keep(await read());
    } catch (err) {
      for (const name of names) out.unreadable[name] = whyUnreadable(err);
    }
  };
  await Promise.all([
    fact(
      ['status'],
      () => pve.shared(`${base}/status/current`, guestStatus, {}, left()),
      (s) => {
        out.status =
          s.qmpstatus && s.qmpstatus !== s.status ? `${s.status} (${s.qmpstatus})` : s.status;
        out.guest.name ??= s.name ?? null;
      },
    ),
    fact(
      ['protection', 'lock', 'tags', 'disks'],
      () => pve.shared(`${base}/config`, guestConfig, {}, left()),
      (c) => keepConfig(out, c, g.vm_type),
    ),
    fact(
      ['snapshots'],
      () => pve.get(`${base}/snapshot`, z.array(z.unknown()), {}, left()),
      (items) => keepSnapshots(out, items),
    ),
    fact(
      ['pool'],
      () => pve.shared('/cluster/resources', z.array(z.unknown()), { type: 'vm' }, left()),
      (items) => {
        const mine = parseEach(vmResource, items).find((r) => r.vmid === g.vmid);
        out.pool = mine?.pool ? clip(mine.pool) : null;
      },
    ),
    fact(
      ['ha'],
      () => pve.get('/cluster/ha/resources', z.array(z.unknown()), {}, left()),
      (items) => keepHa(out, items, g),
    ),
    fact(
      ['replication'],
      () => pve.get('/cluster/replication', z.array(z.unknown()), {}, left()),
      (items) => keepReplication(out, items, g.vmid),
    ),
    fact(
      ['newest_backup'],
      () => newestBackup(pve, g, now, left),
      (b) => {
        out.newest_backup = b.newest;
        out.backup_count = b.count;
        if (b.missed.length)
          out.unreadable.backup_storages = `${b.missed.join('; ')}. A newer backup may be there.`;
      },
    ),
    fact(
      ['permissions'],
      () => tokenSees(pve, g, left),
      (p) => {
        visibility = p;
      },
    ),
  ]);
  notVisible(out, visibility as Visibility | null, g.vmid);
  if (options.lossy) out.warnings.push(...backupWarnings(out, options.lossy, now));
  if (options.withoutPurge && (out.ha?.managed || out.replication?.length))
    out.warnings.push(
      'Proxmox refuses to destroy a guest in HA or with replication jobs unless purge: true (which also removes it from them): this call, as asked, will be refused.',
    );
  return out;
}

/** Name, protection, lock, tags and disks from the guest's config. */
function keepConfig(
  out: BlastRadius,
  c: z.output<typeof guestConfig>,
  vmType: BlastGuest['vm_type'],
): void {
  if (typeof c.name === 'string' || typeof c.hostname === 'string')
    out.guest.name = clip(String(c.name ?? c.hostname));
  out.protection = String(c.protection ?? '0') === '1';
  out.lock = c.lock === undefined ? null : clip(String(c.lock));
  out.tags = String(c.tags ?? '')
    .split(/[;, ]+/)
    .filter(Boolean)
    .slice(0, MAX_ITEMS)
    .map(clip);
  out.disks = guestDisks(c, vmType)
    .filter((d) => !d.cdrom)
    .slice(0, MAX_ITEMS)
    .map((d) => ({
      key: clip(d.key),
      volume: clip(d.volume),
      size: d.size === null ? null : clip(d.size),
    }));
}

function keepSnapshots(out: BlastRadius, items: unknown[]): void {
  const names = parseEach(snapshotItem, items)
    .map((s) => s.name)
    .filter((n) => n !== 'current');
  out.snapshots = names.slice(0, MAX_ITEMS).map(clip);
  out.snapshot_count = names.length;
}

function keepHa(out: BlastRadius, items: unknown[], g: BlastGuest): void {
  const sid = `${g.vm_type === 'qemu' ? 'vm' : 'ct'}:${g.vmid}`;
  const mine = parseEach(haResource, items).find((r) => r.sid === sid);
  out.ha = mine ? { managed: true, state: clip(mine.state ?? 'started') } : { managed: false };
}

function keepReplication(out: BlastRadius, items: unknown[], vmid: number): void {
  out.replication = parseEach(replicationJob, items)
    .filter((j) => j.guest === vmid)
    .slice(0, MAX_ITEMS)
    .map((j) => ({
      id: clip(j.id),
      target: clip(j.target),
      schedule: clip(j.schedule ?? '*/15'),
      disabled: j.disable ?? false,
    }));
}

/**
 * What Proxmox hides from a token is not there as far as the token can tell: a pool without
 * Pool.Audit, backups without VM.Backup. "None" is then not known, and is said so.
 */
function notVisible(out: BlastRadius, sees: Visibility | null, vmid: number): void {
  delete out.unreadable.permissions;
  if (out.pool === null && !sees?.pools) {
    delete out.pool;
    out.unreadable.pool = sees
      ? "none visible: the API token lacks Pool.Audit on /pool, and Proxmox shows a guest's pool only with it"
      : 'none visible, and whether the API token may see pools could not be read';
  }
  if (out.newest_backup === null && !sees?.backups) {
    delete out.newest_backup;
    out.unreadable.newest_backup = sees
      ? `none visible: the API token lacks VM.Backup on /vms/${vmid}, and Proxmox lists a guest's backups only to a token that may back it up`
      : 'none visible, and whether the API token may see backups could not be read';
  }
}

interface Visibility {
  pools: boolean;
  backups: boolean;
}

/** Whether this server's API token holds `privilege` on `path` (GET /access/permissions). */
export async function tokenHolds(
  pve: PveClient,
  path: string,
  privilege: string,
  options: CallOptions,
  fresh = false,
): Promise<boolean> {
  const held = (
    await pve.shared('/access/permissions', accessPermissions, { path }, options, fresh)
  )[path];
  // Each privilege held maps to its propagate flag (0 or 1): held is a key that is there.
  return Object.hasOwn(held ?? {}, privilege);
}

/** Whether the token may see pools, and this guest's backups. */
async function tokenSees(
  pve: PveClient,
  g: BlastGuest,
  left: () => { timeoutMs: number },
): Promise<Visibility> {
  const [pools, backups] = await Promise.all([
    tokenHolds(pve, '/pool', 'Pool.Audit', left()),
    tokenHolds(pve, `/vms/${g.vmid}`, 'VM.Backup', left()),
  ]);
  return { pools, backups };
}

/**
 * Whether the HA manager manages the guest and which replication jobs copy it: what Proxmox
 * refuses a destroy without purge for. A list that cannot be read counts as empty (Proxmox
 * still refuses, with its own words).
 */
export async function readGuestBindings(
  pve: PveClient,
  g: BlastGuest,
): Promise<{ ha: boolean; replication: string[] }> {
  const sid = `${g.vm_type === 'qemu' ? 'vm' : 'ct'}:${g.vmid}`;
  const [ha, jobs] = await Promise.all([
    pve
      .get('/cluster/ha/resources', z.array(z.unknown()), {}, { timeoutMs: BLAST_RADIUS_BUDGET_MS })
      .then((items) => parseEach(haResource, items).some((r) => r.sid === sid))
      .catch(() => false),
    pve
      .get('/cluster/replication', z.array(z.unknown()), {}, { timeoutMs: BLAST_RADIUS_BUDGET_MS })
      .then((items) =>
        parseEach(replicationJob, items)
          .filter((j) => j.guest === g.vmid)
          .map((j) => j.id),
      )
      .catch(() => [] as string[]),
  ]);
  return { ha, replication: jobs };
}

async function newestBackup(
  pve: PveClient,
  g: BlastGuest,
  now: number,
  left: () => { timeoutMs: number },
): Promise<{ newest: BlastBackup | null; count: number; missed: string[] }> {
  const node = `/nodes/${seg(g.node)}`;
  const listed = await pve.get(
    `${node}/storage`,
    z.array(z.unknown()),
    { content: 'backup' },
    left(),
  );
  const enabled = parseEach(backupStorage, listed)
    .filter((s) => s.enabled !== false)
    .sort((a, b) => a.storage.localeCompare(b.storage));
  // What is not read is named: an inactive storage (its server unreachable), one past the cap.
  const missed: string[] = [];
  for (const s of enabled.filter((s) => s.active === false))
    missed.push(`${clip(s.storage)}: inactive (Proxmox cannot reach it)`);
  const active = enabled.filter((s) => s.active !== false);
  for (const s of active.slice(MAX_BACKUP_STORAGES))
    missed.push(`${clip(s.storage)}: not read (only ${MAX_BACKUP_STORAGES} backup storages are)`);
  let newest: (z.output<typeof backupVolume> & { storage: string }) | null = null;
  let count = 0;
  await Promise.all(
    active.slice(0, MAX_BACKUP_STORAGES).map(async ({ storage }) => {
      try {
        const items = await pve.get(
          `${node}/storage/${seg(storage)}/content`,
          z.array(z.unknown()),
          { content: 'backup', vmid: g.vmid },
          left(),
        );
        for (const v of parseEach(backupVolume, items)) {
          if (v.vmid !== undefined && v.vmid !== g.vmid) continue;
          // A backup of an earlier guest of another kind under the same id is not this one's.
          const kind = v.subtype ?? kindOfVolume(v.volid);
          if (kind !== null && kind !== g.vm_type) continue;
          count += 1;
          if (!newest || (v.ctime ?? 0) > (newest.ctime ?? 0)) newest = { ...v, storage };
        }
      } catch (err) {
        missed.push(`${clip(storage)}: ${whyUnreadable(err)}`);
      }
    }),
  );
  const found = newest as (z.output<typeof backupVolume> & { storage: string }) | null;
  // Nothing found while a storage went unread: whether there is a backup is not known.
  if (!found && missed.length) throw new Unreadable(missed.join('; '));
  if (!found) return { newest: null, count, missed };
  const at = (found.ctime ?? 0) * 1000;
  return {
    newest: {
      volid: clip(found.volid),
      storage: clip(found.storage),
      at: new Date(at).toISOString(),
      age_hours: Math.max(0, Math.round((now - at) / 360_000) / 10),
      protected: found.protected ?? false,
      verified: found.verification?.state ? clip(found.verification.state) : null,
    },
    count,
    missed,
  };
}

/** qemu or lxc, from a backup's name (vzdump-qemu-..., backup/vm/..., backup/ct/...). */
function kindOfVolume(volid: string): 'qemu' | 'lxc' | null {
  const m = /:backup\/(?:vzdump-(qemu|lxc)-|(vm|ct)\/)/.exec(volid);
  if (!m) return null;
  return m[1] === 'qemu' || m[2] === 'vm' ? 'qemu' : 'lxc';
}

function backupWarnings(b: BlastRadius, doing: string, now: number): string[] {
  if (b.newest_backup === undefined)
    return [
      `Whether a backup of this guest exists could not be read (${b.unreadable.newest_backup ?? 'unknown'}): check before you ${doing}.`,
    ];
  if (b.newest_backup === null)
    return [
      `No backup of this guest was found on the backup storages ${b.guest.node} shows the API token: if you ${doing}, nothing can bring back what is lost.`,
    ];
  const out: string[] = [];
  const age = now - Date.parse(b.newest_backup.at);
  const unread = b.unreadable.backup_storages
    ? ' (a storage could not be read: a newer one may be there)'
    : '';
  if (age > STALE_BACKUP_MS)
    out.push(
      `The newest backup is ${ageInWords(age)} old (${b.newest_backup.volid})${unread}: if you ${doing}, what changed since that backup cannot be brought back.`,
    );
  if (b.newest_backup.verified === 'failed')
    out.push(
      `The newest backup failed its last verification on the Proxmox Backup Server: it may not restore.`,
    );
  return out;
}

/** "9 days", "30 hours" (never "0 days"). */
export function ageInWords(ms: number): string {
  const hours = Math.round(ms / 3_600_000);
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'}`;
  return `${Math.round(hours / 24)} days`;
}
