// The blast radius in words, one row per fact, for the preview, the approval page and the
// notifications alike: "HA: managed (requested state started)", "Newest backup: 9 days old ...",
// and for a fact that could not be read, that it could not and why. Pure.

import { ageInWords, type BlastRadius } from './blast-radius';
import { guestName } from '../core/guest-name';

export interface FactRow {
  /** Stable key (the JSON field): status, ha, replication, newest_backup, ... */
  fact: string;
  label: string;
  value: string;
  /** The value could not be read. */
  unreadable?: true;
}

const LABELS: readonly [string, string][] = [
  ['status', 'State'],
  ['ha', 'HA'],
  ['replication', 'Replication'],
  ['newest_backup', 'Newest backup'],
  ['backup_storages', 'Backup storages'],
  ['protection', 'Protection'],
  ['lock', 'Lock'],
  ['snapshots', 'Snapshots'],
  ['pool', 'Pool'],
  ['tags', 'Tags'],
  ['disks', 'Disks'],
];

const MAX_LISTED = 10;

function listed(items: readonly string[], none: string, total = items.length): string {
  if (!items.length) return none;
  const shown = items.slice(0, MAX_LISTED).join(', ');
  const shownCount = Math.min(items.length, MAX_LISTED);
  return total > shownCount ? `${shown} and ${total - shownCount} more` : shown;
}

function value(b: BlastRadius, fact: string, now: number): string | null {
  switch (fact) {
    case 'status':
      return b.status ?? null;
    case 'ha':
      if (!b.ha) return null;
      return b.ha.managed
        ? `managed by the HA manager (requested state ${b.ha.state})`
        : 'not HA-managed';
    case 'replication':
      if (!b.replication) return null;
      return listed(
        b.replication.map(
          (j) => `${j.id} to ${j.target} (schedule ${j.schedule}${j.disabled ? ', disabled' : ''})`,
        ),
        'none',
      );
    case 'newest_backup': {
      const n = b.newest_backup;
      if (n === undefined) return null;
      if (n === null)
        return `none found on the backup storages ${b.guest.node} sees (that the API token may list)`;
      const facts = [
        n.verified ? `verification ${n.verified}` : null,
        n.protected ? 'protected' : null,
        b.backup_count !== undefined ? `${b.backup_count} found` : null,
      ].filter(Boolean);
      return `${ageInWords(Math.max(0, now - Date.parse(n.at)))} old, ${n.volid}${facts.length ? ` (${facts.join(', ')})` : ''}`;
    }
    case 'backup_storages':
      return null;
    case 'protection':
      return b.protection === undefined ? null : b.protection ? 'on' : 'off';
    case 'lock':
      return b.lock === undefined ? null : (b.lock ?? 'none');
    case 'snapshots':
      return b.snapshots ? listed(b.snapshots, 'none', b.snapshot_count) : null;
    case 'pool':
      return b.pool === undefined ? null : (b.pool ?? 'none');
    case 'tags':
      return b.tags ? listed(b.tags, 'none') : null;
    case 'disks':
      return b.disks
        ? listed(
            b.disks.map((d) => `${d.key} ${d.volume}${d.size ? ` (${d.size})` : ''}`),
            'none',
          )
        : null;
    default:
      return null;
  }
}

/** Every fact in a fixed order; unreadable ones say so with the reason. */
export function blastRadiusRows(b: BlastRadius, now: number): FactRow[] {
  const rows: FactRow[] = [];
  for (const [fact, label] of LABELS) {
    const why = Object.hasOwn(b.unreadable, fact) ? b.unreadable[fact] : undefined;
    if (why !== undefined) {
      rows.push({ fact, label, value: `could not be read: ${why}`, unreadable: true });
      continue;
    }
    const v = value(b, fact, now);
    if (v !== null) rows.push({ fact, label, value: v });
  }
  return rows;
}

/** "VM 120 (files01) on pve2", or "on prod/pve2" where the server reaches several clusters. */
export function blastGuestLabel(b: BlastRadius): string {
  const g = b.guest;
  return `${guestName(g.vm_type, g.vmid, g.name)} on ${g.cluster ? `${g.cluster}/` : ''}${g.node}`;
}

/**
 * The facts as text lines (previews, chat messages): warnings first. The guest is not named
 * again: the text around them (a preview's state line, a question's title) names it already.
 */
export function blastRadiusLines(b: BlastRadius, now: number): string[] {
  return [
    ...b.warnings.map((w) => `Warning: ${w}`),
    'What this touches:',
    ...blastRadiusRows(b, now).map((r) => `  ${r.label}: ${r.value}`),
  ];
}
