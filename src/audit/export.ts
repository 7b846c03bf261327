// Audit records as files an operator downloads: JSON Lines for tools, CSV for spreadsheets.
// Pure functions. The CSV is RFC 4180 (CRLF rows, quoted fields) and guarded against formula
// injection, because user-controlled text (tool arguments, emails, PVE error kinds) ends up in
// cells that Excel, LibreOffice and Google Sheets would otherwise evaluate.

import { COLUMNS } from './audit-row';
import type { StoredAuditRecord } from './record';

/** The arguments' columns, which the export puts after who, what and how it ended. */
const ARGUMENTS = ['arg_keys', 'args_hmac', 'args'] as const;

type Column = (typeof COLUMNS)[number];
const isArgument = (c: Column): boolean => (ARGUMENTS as readonly Column[]).includes(c);
/** The stored columns without the arguments; the first `EXPORTED_BEFORE` of them come first. */
const OTHERS = COLUMNS.filter((c) => c !== 'ts' && !isArgument(c));
const EXPORTED_BEFORE = OTHERS.indexOf('user_groups') + 1;
if (EXPORTED_BEFORE === 0) throw new Error('audit export: no user_groups column to follow');

/**
 * The fixed column order of both formats: `id`, then the stored columns (./audit-row.ts) with
 * the arguments after `user_groups`. `user_scopes` and any column added since come after them,
 * so that a reader going by position keeps working. `time` (CSV only) is `ts` as ISO 8601 UTC,
 * for people reading the sheet; `arg_keys` and `args` are JSON text in their cell.
 */
export const CSV_COLUMNS: readonly (Column | 'id' | 'time')[] = [
  'id',
  'ts',
  'time',
  ...OTHERS.slice(0, EXPORTED_BEFORE),
  ...ARGUMENTS,
  ...OTHERS.slice(EXPORTED_BEFORE),
];

const RECORD_FIELDS = CSV_COLUMNS.filter((c): c is Exclude<typeof c, 'time'> => c !== 'time');

/** One JSON object per record, each line ending in `\n`; keys in CSV_COLUMNS order (no `time`). */
export function toJsonLines(records: readonly StoredAuditRecord[]): string {
  let out = '';
  for (const record of records) {
    const ordered: Record<string, unknown> = {};
    // Every key on every line: a field a record leaves out (pve_token) is null.
    for (const field of RECORD_FIELDS) ordered[field] = record[field] ?? null;
    out += `${JSON.stringify(ordered)}\n`;
  }
  return out;
}

/** CSV in CSV_COLUMNS order, CRLF after every row (RFC 4180), with a header row unless told not to. */
export function toCsv(records: readonly StoredAuditRecord[], header = true): string {
  const rows: string[] = header ? [CSV_COLUMNS.join(',')] : [];
  for (const record of records) {
    rows.push(CSV_COLUMNS.map((column) => csvCell(cellValue(record, column))).join(','));
  }
  return rows.map((row) => `${row}\r\n`).join('');
}

function cellValue(record: StoredAuditRecord, column: (typeof CSV_COLUMNS)[number]): unknown {
  if (column === 'time')
    return Number.isFinite(record.ts) ? new Date(record.ts).toISOString() : null;
  return record[column];
}

/** Cell starts that a spreadsheet reads as a formula (OWASP "CSV Injection"), plus LF. */
const FORMULA_START = /^[=+\-@\t\r\n]/;

/**
 * One cell. Numbers are written as they are, never prefixed: they are numbers from our own
 * record (ids, times, statuses, vmids), not user text, and a quote would turn a number into
 * text. Only strings are guarded: one that could start a formula gets a leading `'`, so the
 * sheet shows it as text. Then RFC 4180: a cell holding a comma, quote, CR or LF is quoted,
 * quotes doubled.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
