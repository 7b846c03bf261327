// What a call would hit, read for the person who judges it: the guest's state, whether the HA
// manager and replication jobs act on it, its newest backup and how old that is, protection,
// lock, snapshots, pool, tags and disks. Every read runs at once under one deadline; a fact
// that could not be read is left out and named with the reason, never guessed. The result is
// plain JSON: it is stored with an approval, shown on its page and sent in its notifications.

import { z } from 'zod';
import type { PveClient } from './client';
import { PveError } from './errors';
import { guestDisks } from './guest-disks';
import { boolish, guestConfig, guestStatus, numeric, parseEach, snapshotItem } from './schemas';

/** All reads together may take this long; a read still running then is named unreadable. */
export const BLAST_RADIUS_BUDGET_MS = 2_500;
/** A backup older than this makes a destroy or a rollback warn. */
export const STALE_BACKUP_MS = 24 * 3_600_000;
/** Backup storages read at most (each one is one request). */
const MAX_BACKUP_STORAGES = 8;

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
  guest: BlastGuest & { name: string | null };
  /** When the facts were read (ISO). */
  read_at: string;
  status?: string;
  ha?: { managed: false } | { managed: true; state: string };
  replication?: BlastReplication[];
  /** null: no backup of this guest on any backup storage the node sees. */
  newest_backup?: BlastBackup | null;
  /** How many backups of this guest those storages hold. */
  backup_count?: number;
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
  budgetMs?: number;
}

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
  vmid: numeric.optional(),
  ctime: numeric.optional(),
  protected: boolish.optional(),
  verification: z.object({ state: z.string().optional() }).partial().optional(),
});
const vmResource = z.object({ vmid: numeric.optional(), pool: z.string().optional() });

const seg = encodeURIComponent;

/** Why a read failed, in a line (PveError messages hold no secret; others are not shown). */
function whyUnreadable(err: unknown): string {
  const text = err instanceof PveError ? err.message : 'the read failed';
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
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
    guest: { ...g, name: null },
    read_at: new Date(now).toISOString(),
    warnings: [],
    unreadable: {},
  };
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
      () => pve.get(`${base}/status/current`, guestStatus, {}, left()),
      (s) => {
        out.status =
          s.qmpstatus && s.qmpstatus !== s.status ? `${s.status} (${s.qmpstatus})` : s.status;
        out.guest.name ??= s.name ?? null;
      },
    ),
    fact(
      ['protection', 'lock', 'tags', 'disks'],
      () => pve.get(`${base}/config`, guestConfig, {}, left()),
      (c) => {
        if (typeof c.name === 'string' || typeof c.hostname === 'string')
          out.guest.name = String(c.name ?? c.hostname);
        out.protection = String(c.protection ?? '0') === '1';
        out.lock = c.lock === undefined ? null : String(c.lock);
        out.tags = String(c.tags ?? '')
          .split(/[;, ]+/)
          .filter(Boolean);
        out.disks = guestDisks(c, g.vm_type)
          .filter((d) => !d.cdrom)
          .map((d) => ({ key: d.key, volume: d.volume, size: d.size }));
      },
    ),
    fact(
      ['snapshots'],
      () => pve.get(`${base}/snapshot`, z.array(z.unknown()), {}, left()),
      (items) => {
        out.snapshots = parseEach(snapshotItem, items)
          .map((s) => s.name)
          .filter((n) => n !== 'current');
      },
    ),
    fact(
      ['pool'],
      () => pve.get('/cluster/resources', z.array(z.unknown()), { type: 'vm' }, left()),
      (items) => {
        const mine = parseEach(vmResource, items).find((r) => r.vmid === g.vmid);
        out.pool = mine?.pool ?? null;
      },
    ),
    fact(
      ['ha'],
      () => pve.get('/cluster/ha/resources', z.array(z.unknown()), {}, left()),
      (items) => {
        const sid = `${g.vm_type === 'qemu' ? 'vm' : 'ct'}:${g.vmid}`;
        const mine = parseEach(haResource, items).find((r) => r.sid === sid);
        out.ha = mine ? { managed: true, state: mine.state ?? 'started' } : { managed: false };
      },
    ),
    fact(
      ['replication'],
      () => pve.get('/cluster/replication', z.array(z.unknown()), {}, left()),
      (items) => {
        out.replication = parseEach(replicationJob, items)
          .filter((j) => j.guest === g.vmid)
          .map((j) => ({
            id: j.id,
            target: j.target,
            schedule: j.schedule ?? '*/15',
            disabled: j.disable ?? false,
          }));
      },
    ),
    fact(
      ['newest_backup'],
      () => newestBackup(pve, g, now, left),
      (b) => {
        out.newest_backup = b.newest;
        out.backup_count = b.count;
        if (b.missed.length)
          out.unreadable.backup_storages = `${b.missed.join(', ')} could not be read: a newer backup may be there`;
      },
    ),
  ]);
  if (options.lossy) out.warnings.push(...backupWarnings(out, options.lossy, now));
  return out;
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
  const storages = parseEach(backupStorage, listed)
    .filter((s) => s.enabled !== false && s.active !== false)
    .slice(0, MAX_BACKUP_STORAGES);
  let newest: (z.output<typeof backupVolume> & { storage: string }) | null = null;
  let count = 0;
  const missed: string[] = [];
  await Promise.all(
    storages.map(async ({ storage }) => {
      try {
        const items = await pve.get(
          `${node}/storage/${seg(storage)}/content`,
          z.array(z.unknown()),
          { content: 'backup', vmid: g.vmid },
          left(),
        );
        for (const v of parseEach(backupVolume, items)) {
          if (v.vmid !== undefined && v.vmid !== g.vmid) continue;
          count += 1;
          if (!newest || (v.ctime ?? 0) > (newest.ctime ?? 0)) newest = { ...v, storage };
        }
      } catch {
        missed.push(storage);
      }
    }),
  );
  if (missed.length === storages.length && storages.length > 0)
    throw new Error('no backup storage could be read');
  const found = newest as (z.output<typeof backupVolume> & { storage: string }) | null;
  if (!found) return { newest: null, count, missed };
  const at = (found.ctime ?? 0) * 1000;
  return {
    newest: {
      volid: found.volid,
      storage: found.storage,
      at: new Date(at).toISOString(),
      age_hours: Math.max(0, Math.round((now - at) / 360_000) / 10),
      protected: found.protected ?? false,
      verified: found.verification?.state ?? null,
    },
    count,
    missed,
  };
}

function backupWarnings(b: BlastRadius, doing: string, now: number): string[] {
  if (b.newest_backup === undefined)
    return [
      `Whether a backup of this guest exists could not be read (${b.unreadable.newest_backup ?? 'unknown'}): check before you ${doing}.`,
    ];
  if (b.newest_backup === null)
    return [
      `No backup of this guest was found on the backup storages ${b.guest.node} sees: if you ${doing}, nothing can bring back what is lost.`,
    ];
  const age = now - Date.parse(b.newest_backup.at);
  if (age <= STALE_BACKUP_MS) return [];
  return [
    `The newest backup is ${ageInWords(age)} old (${b.newest_backup.volid}): if you ${doing}, what changed since that backup cannot be brought back.`,
  ];
}

/** "9 days", "30 hours" (never "0 days"). */
export function ageInWords(ms: number): string {
  const hours = Math.round(ms / 3_600_000);
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'}`;
  return `${Math.round(hours / 24)} days`;
}
