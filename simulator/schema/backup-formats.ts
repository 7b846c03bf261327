// Property-string formats of vzdump's parameters: 'backup-fleecing' and 'backup-performance'
// (pve-guest-common PVE/VZDump/Common.pm) and 'prune-backups' (pve-storage Storage/Plugin.pm),
// with their validators and texts.
import { PveDie, type PropertyStringFormat, type PropSchema } from './schema-types.ts';

const keep: PropSchema = { type: 'integer', optional: true, minimum: 0 };

/** validate_prune_backups: all zero means keep-all; keep-all excludes the other options. */
function validatePruneBackups(parsed: Readonly<Record<string, string>>): void {
  const { 'keep-all': keepAll, ...rest } = parsed;
  const positive = Object.values(rest).some((value) => Number(value) > 0);
  if (positive && keepAll !== undefined && keepAll !== '0') {
    throw new PveDie('keep-all cannot be set together with other options.\n');
  }
}

export const PRUNE_BACKUPS_FORMAT: PropertyStringFormat = {
  keys: {
    'keep-all': { type: 'boolean', optional: true },
    'keep-last': keep,
    'keep-hourly': keep,
    'keep-daily': keep,
    'keep-weekly': keep,
    'keep-monthly': keep,
    'keep-yearly': keep,
  },
  validate: validatePruneBackups,
};

/** verify_backup_fleecing */
function validateFleecing(parsed: Readonly<Record<string, string>>): void {
  if (!parsed.storage && parsed.enabled === '1') {
    throw new PveDie("'storage' parameter is required when 'enabled' is set\n");
  }
}

export const BACKUP_FLEECING_FORMAT: PropertyStringFormat = {
  keys: {
    enabled: { type: 'boolean', optional: true, defaultKey: true },
    storage: { type: 'string', optional: true, format: 'pve-storage-id' },
  },
  validate: validateFleecing,
};

export const BACKUP_PERFORMANCE_FORMAT: PropertyStringFormat = {
  keys: {
    'max-workers': { type: 'integer', optional: true, minimum: 1, maximum: 256 },
    'pbs-entries-max': { type: 'integer', optional: true, minimum: 1 },
  },
};

/** Parse a prune-backups string as validate_prune_backups leaves it (all zero → keep-all). */
export function parsePruneBackups(text: string): Record<string, number> {
  const res: Record<string, number> = {};
  for (const part of text.split(',')) {
    const [key = '', value = ''] = part.split('=');
    if (key !== '') res[key] = /^(1|on|yes|true)$/i.test(value) ? 1 : Number(value) || 0;
  }
  const { 'keep-all': _keepAll, ...rest } = res;
  return Object.values(rest).some((value) => value > 0) ? rest : { 'keep-all': 1 };
}
