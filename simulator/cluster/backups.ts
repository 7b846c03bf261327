// Backups as vzdump writes them and pve-storage lists them: archive names (vzdump-<type>-<vmid>-
// <time>.<vma|tar>[.zst|.gz|.lzo] on a directory storage, <vm|ct>/<vmid>/<UTC time> on PBS), the
// guest config an archive carries (for restores), notes templates, the prune-backups selection
// (prune_mark_backup_group), and the number formats of vzdump's log.
import type { ClusterState, Guest, GuestConfig, Volume } from './cluster-state.ts';
import { configVolumes, parseProps, parseSize } from './guest-config.ts';

const two = (n: number) => String(n).padStart(2, '0');

/** strftime("-%Y_%m_%d-%H_%M_%S") of the backup time (nodes run on UTC here). */
export function vzdumpTime(ms: number): string {
  const d = new Date(ms);
  const date = `${d.getUTCFullYear()}_${two(d.getUTCMonth() + 1)}_${two(d.getUTCDate())}`;
  return `${date}-${two(d.getUTCHours())}_${two(d.getUTCMinutes())}_${two(d.getUTCSeconds())}`;
}

/** strftime("%FT%TZ", gmtime): a PBS snapshot's backup time. */
export const pbsTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** strftime("%F %H:%M:%S", localtime). */
export function logTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, '');
}

export type Compressor = 'zst' | 'gz' | 'lzo' | undefined;

/** compressor_info: 0 → none, 1|lzo → lzo, gzip → gz, zstd → zst. */
export function compressor(compress: string | undefined): Compressor {
  if (compress === undefined || compress === '' || compress === '0') return undefined;
  if (compress === '1' || compress === 'lzo') return 'lzo';
  return compress === 'gzip' ? 'gz' : 'zst';
}

/** The archive's volname on a directory storage and on PBS. */
export function dirBackupVolname(guest: Guest, startMs: number, comp: Compressor): string {
  const ext = `${guest.type === 'qemu' ? 'vma' : 'tar'}${comp ? `.${comp}` : ''}`;
  return `backup/vzdump-${guest.type}-${guest.vmid}-${vzdumpTime(startMs)}.${ext}`;
}

export const pbsGroup = (guest: Pick<Guest, 'type' | 'vmid'>) =>
  `${guest.type === 'qemu' ? 'vm' : 'ct'}/${guest.vmid}`;

/** What a backup archive keeps of a config: no lock, parent, pending or unused volumes. */
export function archivedConfig(config: GuestConfig): GuestConfig {
  const res: GuestConfig = {};
  for (const [key, value] of Object.entries(config)) {
    if (key === 'lock' || key === 'parent' || /^unused\d+$/.test(key)) continue;
    res[key] = value;
  }
  return res;
}

export interface BackupDisk {
  readonly key: string;
  readonly volid: string;
  readonly size: number;
  readonly included: boolean;
  /** LXC mount points: the path inside the container. */
  readonly mp?: string;
}

/** get_backup_volumes: the disks (mount points) of a config and whether vzdump includes them. */
export function backupDisks(type: Guest['type'], config: GuestConfig): BackupDisk[] {
  return configVolumes(type, config)
    .filter((v) => !v.cdrom && !/^unused/.test(v.key))
    .map((v) => {
      const props = parseProps(config[v.key] ?? '', type === 'qemu' ? 'file' : 'volume');
      const size = parseSize(props.size ?? '0') ?? 0;
      const included =
        type === 'qemu' ? props.backup !== '0' : v.key === 'rootfs' || props.backup === '1';
      return {
        key: v.key,
        volid: v.volid,
        size,
        included,
        ...(type === 'lxc' ? { mp: v.key === 'rootfs' ? '/' : (props.mp ?? '') } : {}),
      };
    });
}

/** How much data a guest's disks hold (stable per guest). */
export const dataFraction = (vmid: number) => 0.12 + (vmid % 5) * 0.015;

const RATIO: Readonly<Record<string, number>> = { none: 1, lzo: 0.58, gz: 0.48, zst: 0.42 };

/** The archive size on a directory storage. */
export function archiveSize(guest: Guest, disks: readonly BackupDisk[], comp: Compressor): number {
  const data = disks.filter((d) => d.included).reduce((sum, d) => sum + d.size, 0);
  return Math.round(data * dataFraction(guest.vmid) * (RATIO[comp ?? 'none'] ?? 1)) + 4096;
}

/** The size PBS lists for a snapshot: images count fully (fixed index), pxar archives by data. */
export function pbsSize(guest: Guest, disks: readonly BackupDisk[]): number {
  const total = disks.filter((d) => d.included).reduce((sum, d) => sum + d.size, 0);
  return guest.type === 'qemu' ? total + 830 : Math.round(total * dataFraction(guest.vmid)) + 1210;
}

// --- notes templates (PVE::VZDump $verify_notes_template / $generate_notes)

/** The problems PVE reports for a template, or undefined when it is fine. */
export function notesTemplateError(template: string): string | undefined {
  if (template.includes('\n')) return 'contains a line feed\n';
  const problems: string[] = [];
  for (const m of template.matchAll(/\\(.)/g)) {
    if (!/^[n\\]$/.test(m[1] ?? ''))
      problems.push(`escape sequence '\\${m[1]}' at char ${m.index}`);
  }
  for (const m of template.matchAll(/\{\{([^\s{}]+)\}\}/g)) {
    const name = m[1] ?? '';
    // Perl's pos() is after the match; PVE subtracts the name's length
    const at = (m.index ?? 0) + m[0].length - name.length;
    if (!/^(cluster|guestname|node|vmid)$/.test(name))
      problems.push(`variable '${name}' at char ${at}`);
  }
  return problems.length > 0 ? `found unknown: ${problems.join(', ')}\n` : undefined;
}

export function generateNotes(template: string, vars: Readonly<Record<string, string>>): string {
  const unescaped = template.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  return unescaped.replace(
    /\{\{(cluster|guestname|node|vmid)\}\}/g,
    (_, key: string) => vars[key] ?? '',
  );
}

// --- prune-backups (PVE::Storage prune_mark_backup_group)

export type PruneMark = 'keep' | 'remove' | 'protected';

interface PruneEntry {
  readonly ctime: number;
  mark?: PruneMark;
}

const ID_FUNCS: readonly [string, (d: Date) => string][] = [
  ['keep-last', (d) => String(d.getTime())],
  [
    'keep-hourly',
    (d) => `${d.getUTCHours()}/${d.getUTCDate()}/${d.getUTCMonth()}/${d.getUTCFullYear()}`,
  ],
  ['keep-daily', (d) => `${d.getUTCDate()}/${d.getUTCMonth()}/${d.getUTCFullYear()}`],
  ['keep-weekly', (d) => isoWeek(d)],
  ['keep-monthly', (d) => `${d.getUTCMonth()}/${d.getUTCFullYear()}`],
  ['keep-yearly', (d) => String(d.getUTCFullYear())],
];

/** strftime("%V/%G"): ISO week and week-based year. */
function isoWeek(d: Date): string {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const yearStart = Date.UTC(t.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((t.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${week}/${t.getUTCFullYear()}`;
}

/** Mark a backup group (newest first) as prune_mark_backup_group does. */
export function pruneMark(entries: PruneEntry[], keep: Readonly<Record<string, number>>): void {
  const positive = Object.entries(keep).filter(([k, v]) => k !== 'keep-all' && v > 0);
  if (keep['keep-all'] || positive.length === 0) {
    for (const entry of entries) if (entry.mark !== 'protected') entry.mark = 'keep';
    return;
  }
  const sorted = [...entries].sort((a, b) => b.ctime - a.ctime);
  for (const [option, id] of ID_FUNCS) {
    const count = keep[option] ?? 0;
    if (!count) continue;
    const already = new Set(
      sorted.filter((e) => e.mark === 'keep').map((e) => id(new Date(e.ctime * 1000))),
    );
    const fresh = new Set<string>();
    for (const entry of sorted) {
      const key = id(new Date(entry.ctime * 1000));
      if (entry.mark !== undefined || already.has(key)) continue;
      if (!fresh.has(key)) {
        if (fresh.size >= count) break;
        fresh.add(key);
        entry.mark = 'keep';
      } else {
        entry.mark = 'remove';
      }
    }
  }
  for (const entry of sorted) entry.mark ??= 'remove';
}

/** The backups of one guest on a storage as `node` sees them (a backup group). */
export function backupGroup(
  state: ClusterState,
  storage: string,
  node: string,
  guest: Pick<Guest, 'type' | 'vmid'>,
  shared: boolean,
): Volume[] {
  return state.volumes.filter(
    (v) =>
      v.storage === storage &&
      v.vtype === 'backup' &&
      v.owner === guest.vmid &&
      (v.subtype === undefined || v.subtype === guest.type) &&
      (shared ? v.node === undefined : v.node === node),
  );
}

// --- number formats of vzdump's log

/** PVE::VZDump::format_size */
export function vzdumpSize(size: number): string {
  const kb = size / 1024;
  if (kb < 1024) return `${Math.floor(kb)}KB`;
  const mb = size / 1024 ** 2;
  if (mb < 1024) return `${Math.floor(mb)}MB`;
  const gb = mb / 1024;
  return gb < 1024 ? `${gb.toFixed(2)}GB` : `${(gb / 1024).toFixed(2)}TB`;
}

/** PVE::Format::render_bytes */
export function renderBytes(value: number, precision = 2): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let unit = 0;
  let v = value;
  if (v > 1023) {
    unit = Math.floor(Math.log(v) / Math.log(1024));
    v /= 1024 ** unit;
  }
  return `${v.toFixed(precision)} ${units[unit]}`;
}

/** PVE::Format::render_duration */
export function renderDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h ${m}m ${s}s`;
  return m > 0 ? `${m}m ${s}s` : `${s}s`;
}

/** PVE::VZDump::format_time: hh:mm:ss */
export function hms(seconds: number): string {
  return `${two(Math.floor(seconds / 3600))}:${two(Math.floor((seconds % 3600) / 60))}:${two(seconds % 60)}`;
}
