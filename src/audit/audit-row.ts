// How an audit record becomes a row of audit_records and back, and the page cursor: the codec
// behind AuditLog (./audit-log.ts), which documents the table. Pure functions. A record is
// clipped and coerced on the way in, never refused, so no call goes unrecorded.

import { base64Url, fromBase64Url } from '../encoding';
import type { AuditRecord, StoredAuditRecord } from './record';

/** Stored size caps. */
const MAX_ID = 256;
const MAX_TEXT = 1_024;
const MAX_ARG_KEYS = 100;
const MAX_GROUPS = 100;
export const MAX_ARGS_BYTES = 16 * 1024;

/** The columns an INSERT fills (all but id), in the order of `rowValues`. */
export const COLUMNS = [
  'ts',
  'request_id',
  'user_id',
  'user_email',
  'client_id',
  'grant_id',
  'session',
  'tool',
  'arg_keys',
  'args_hmac',
  'args',
  'decision',
  'rule',
  'outcome',
  'error_kind',
  'upstream_status',
  'latency_ms',
  'vmid',
  'upid',
  'approval_id',
  'approval_channel',
  'policy_version',
  'user_groups',
  'user_scopes',
  'cluster',
  'pve_token',
  'upstream_ms',
  'trace_id',
] as const;

export type Row = { [K in (typeof COLUMNS)[number] | 'id']: SqlStorageValue };

/** The INSERT values in COLUMNS order, every field clipped or coerced rather than refused. */
export function rowValues(r: AuditRecord, now: number): SqlStorageValue[] {
  const keys = Array.isArray(r.arg_keys)
    ? r.arg_keys.slice(0, MAX_ARG_KEYS).map((k) => text(k, MAX_ID))
    : [];
  return [
    Number.isSafeInteger(Math.trunc(r.ts)) ? Math.trunc(r.ts) : now, // a cursor holds ts as an integer
    text(r.request_id, MAX_ID),
    text(r.user_id, MAX_ID),
    optText(r.user_email, MAX_ID),
    text(r.client_id, MAX_ID),
    text(r.grant_id, MAX_ID),
    text(r.session, MAX_ID),
    text(r.tool, MAX_ID),
    JSON.stringify(keys),
    text(r.args_hmac, 128),
    argsJson(r.args),
    text(r.decision, 32),
    optText(r.rule, MAX_TEXT),
    text(r.outcome, 32),
    optText(r.error_kind, MAX_ID),
    optNumber(r.upstream_status),
    optNumber(r.latency_ms) ?? 0,
    optNumber(r.vmid),
    optText(r.upid, MAX_TEXT),
    optText(r.approval_id, MAX_ID),
    optText(r.approval_channel, 32),
    optNumber(r.policy_version),
    groupsJson(r.user_groups),
    groupsJson(r.user_scopes),
    optText(r.cluster, MAX_ID),
    optText(r.pve_token, MAX_TEXT),
    optNumber(r.upstream_ms),
    optText(r.trace_id, 64),
  ];
}

/**
 * The groups (or scopes) as JSON, or null when they cannot be kept whole (more than MAX_GROUPS,
 * or a name longer than MAX_ID): a replay treats null as unknown, where a cut list would be a guess.
 */
function groupsJson(groups: unknown): string | null {
  if (!Array.isArray(groups) || groups.length > MAX_GROUPS) return null;
  if (!groups.every((g) => typeof g === 'string' && g.length <= MAX_ID)) return null;
  return JSON.stringify(groups);
}

function text(value: unknown, max: number): string {
  const s =
    typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);
  return s.length > max ? s.slice(0, max) : s;
}

function optText(value: unknown, max: number): string | null {
  return value === null || value === undefined ? null : text(value, max);
}

function optNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The args as JSON text, or a marker when they are too big or not a JSON object. */
function argsJson(args: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(args ?? {});
  } catch {
    json = undefined; // a cycle or a BigInt: the hash in args_hmac still identifies the call
  }
  if (json === undefined || !json.startsWith('{'))
    return JSON.stringify({ _truncated: true, reason: 'not a JSON object' });
  const bytes = new TextEncoder().encode(json).length;
  return bytes <= MAX_ARGS_BYTES ? json : JSON.stringify({ _truncated: true, bytes });
}

export function toRecord(row: Row): StoredAuditRecord {
  const s = (v: SqlStorageValue): string => (typeof v === 'string' ? v : '');
  const ns = (v: SqlStorageValue): string | null => (typeof v === 'string' ? v : null);
  const nn = (v: SqlStorageValue): number | null => (typeof v === 'number' ? v : null);
  const keys = parseJson(s(row.arg_keys));
  const args = parseJson(s(row.args));
  const list = (v: SqlStorageValue): string[] | null => {
    const parsed = typeof v === 'string' ? parseJson(v) : null;
    return Array.isArray(parsed) ? parsed.filter((g): g is string => typeof g === 'string') : null;
  };
  return {
    id: Number(row.id),
    ts: Number(row.ts),
    request_id: s(row.request_id),
    user_id: s(row.user_id),
    user_email: ns(row.user_email),
    client_id: s(row.client_id),
    grant_id: s(row.grant_id),
    session: s(row.session),
    tool: s(row.tool),
    arg_keys: Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : [],
    args_hmac: s(row.args_hmac),
    args:
      args !== null && typeof args === 'object' && !Array.isArray(args)
        ? (args as Record<string, unknown>)
        : {},
    decision: s(row.decision) as StoredAuditRecord['decision'],
    rule: ns(row.rule),
    outcome: s(row.outcome) as StoredAuditRecord['outcome'],
    error_kind: ns(row.error_kind),
    upstream_status: nn(row.upstream_status),
    latency_ms: nn(row.latency_ms) ?? 0,
    vmid: nn(row.vmid),
    upid: ns(row.upid),
    approval_id: ns(row.approval_id),
    approval_channel: ns(row.approval_channel) as StoredAuditRecord['approval_channel'],
    policy_version: nn(row.policy_version),
    user_groups: list(row.user_groups),
    user_scopes: list(row.user_scopes),
    cluster: ns(row.cluster),
    upstream_ms: nn(row.upstream_ms),
    ...(typeof row.trace_id === 'string' ? { trace_id: row.trace_id } : {}),
    // Kept only where a person's token acted (see AuditRecord.pve_token).
    ...(typeof row.pve_token === 'string' ? { pve_token: row.pve_token } : {}),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A from/to bound; anything but a finite number is refused. */
export function bound(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new RangeError(`${name} must be epoch milliseconds`);
  return value;
}

/** The cursor: base64url of `1:<ts>:<id>` of the last record of a page ("1" is the format). */
export function encodeCursor(last: StoredAuditRecord): string {
  return base64Url(`1:${last.ts}:${last.id}`);
}

/** The position a cursor names; throws on anything `encodeCursor` could not have written. */
export function decodeCursor(cursor: string): { ts: number; id: number } {
  const invalid = new Error('Invalid cursor: pass next_cursor from the previous page unchanged.');
  if (typeof cursor !== 'string' || cursor.length > 64 || !/^[A-Za-z0-9_-]+$/.test(cursor))
    throw invalid;
  let plain: string;
  try {
    plain = fromBase64Url(cursor);
  } catch {
    throw invalid;
  }
  const m = /^1:(-?\d{1,16}):(\d{1,16})$/.exec(plain);
  const ts = Number(m?.[1]);
  const id = Number(m?.[2]);
  if (!m || !Number.isSafeInteger(ts) || !Number.isSafeInteger(id)) throw invalid;
  return { ts, id };
}
