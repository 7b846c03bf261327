// The audit trail: one row per MCP tools/call in a Durable Object's SQLite storage, read newest
// first with keyset pagination, pruned by age and by a row cap on an alarm. Every method but
// `append` and `alarm` is synchronous SQL, so each runs whole on the object's single thread.

import { errorText, logLine } from '../log';
import { type Clock, systemClock } from '../clock';
import { DurableObject } from 'cloudflare:workers';
import { auditLimits } from './limits';
import {
  bound,
  COLUMNS,
  decodeCursor,
  encodeCursor,
  rowValues,
  toRecord,
  type Row,
} from './audit-row';
import type { RpcOf } from '../stores/stubs';
import {
  type AuditFigures,
  HOUR_MS,
  type HourCounts,
  type LatencyHour,
  lastHours,
  noCalls,
  type Ranked,
  rankOf,
  REFUSING,
  TOP,
} from './figures';
import {
  type AuditDecision,
  type AuditObject,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  type AuditStats,
  POLICY_EVENT_TOOL,
  type StoredAuditRecord,
} from './record';

export interface AuditEnv {
  /** Days a record is kept: 1–3650, default 90. */
  AUDIT_RETENTION_DAYS?: string;
  /** Rows kept at most (the oldest go first): 1,000–50,000,000, default 1,000,000. */
  AUDIT_MAX_ROWS?: string;
}

const DAY_MS = 86_400_000;
/** Time between prunes once caught up. */
export const PRUNE_INTERVAL_MS = 6 * 3_600_000;
/** Time before the next prune when the last one stopped at its budget. */
const CATCH_UP_DELAY_MS = 1_000;
/** Time before the next prune after one failed. */
const RETRY_DELAY_MS = 5 * 60_000;
/** Rows one DELETE removes at most, and how many of those one prune runs, so a prune is bounded. */
const PRUNE_BATCH = 10_000;
const PRUNE_BUDGET = 10 * PRUNE_BATCH;
const MAX_PAGE = 1_000;
/** How long figures once read are answered again, within the same hour. */
export const FIGURES_TTL_MS = 5_000;

/**
 * Audit records in SQLite. Two instances by name (./names.ts): AUDIT_OBJECT holds the records;
 * AUDIT_LOST_OBJECT only counts, through `recordLost`, the records the writer could not append to
 * the first one (an instance that is failing cannot be trusted to count its own failures). So a
 * reader takes records and `count` from AUDIT_OBJECT and `lost` from `stats()` of
 * AUDIT_LOST_OBJECT; AUDIT_OBJECT's own `lost` stays 0.
 *
 * Table audit_records: id INTEGER PRIMARY KEY AUTOINCREMENT (never reused after pruning, so a
 * cursor stays valid), ts INTEGER (epoch ms), request_id, user_id, user_email, client_id,
 * grant_id, session, tool TEXT, arg_keys TEXT (JSON array), args_hmac TEXT, args TEXT (JSON
 * object), decision, rule, outcome, error_kind TEXT, upstream_status INTEGER, latency_ms
 * NUMERIC, vmid INTEGER, upid, approval_id, approval_channel TEXT, policy_version INTEGER,
 * user_groups TEXT (JSON array), user_scopes TEXT (JSON array), cluster TEXT, pve_token TEXT,
 * upstream_ms NUMERIC, trace_id TEXT.
 * Indexes on (ts), (user_id, ts),
 * (user_email, ts), (tool, ts), (decision, ts), (cluster, ts), (ts, decision, tool). Table audit_meta: key TEXT PRIMARY KEY,
 * value INTEGER; key `lost` is the lost counter. Tables are created on first use.
 *
 * Lifecycle: `append` makes sure an alarm is set; the alarm prunes (records older than the
 * retention, then the oldest beyond the row cap) and sets the next one, PRUNE_INTERVAL_MS later,
 * or CATCH_UP_DELAY_MS later while a backlog remains.
 *
 * Limits: strings clipped to 256 (ids) or 1,024 characters, at most 100 arg keys, args JSON at
 * most 16 KiB (else replaced by `{"_truncated":true,"bytes":n}`); a prune deletes at most
 * 100,000 rows, 10,000 per statement. Durable Object storage holds 10 GB: at the default cap,
 * rows must average under 10 KB (`stats().db_bytes` shows the size).
 */
export class AuditLog extends DurableObject<AuditEnv> implements AuditObject {
  /** The time (its alarms, record times); the system clock. */
  private readonly clock: Clock = systemClock;

  private readonly problems: string[] = [];
  private readonly limits = auditLimits(this.env, this.problems);
  private readonly sql = this.ctx.storage.sql;
  private ready = false;
  private alarmSet = false;
  /** The figures last read (see figures()). */
  private kept: AuditFigures | null = null;

  private ensure(): void {
    if (this.ready) return;
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS audit_records (
         id INTEGER PRIMARY KEY AUTOINCREMENT, ts INTEGER NOT NULL,
         request_id TEXT NOT NULL, user_id TEXT NOT NULL, user_email TEXT, client_id TEXT NOT NULL,
         grant_id TEXT NOT NULL, session TEXT NOT NULL, tool TEXT NOT NULL, arg_keys TEXT NOT NULL,
         args_hmac TEXT NOT NULL, args TEXT NOT NULL, decision TEXT NOT NULL, rule TEXT,
         outcome TEXT NOT NULL, error_kind TEXT, upstream_status INTEGER, latency_ms NUMERIC NOT NULL,
         vmid INTEGER, upid TEXT, approval_id TEXT, approval_channel TEXT, policy_version INTEGER,
         user_groups TEXT, user_scopes TEXT, cluster TEXT, pve_token TEXT,
         upstream_ms NUMERIC, trace_id TEXT)`,
    );
    const columns = this.sql
      .exec<{ name: string }>('PRAGMA table_info(audit_records)')
      .toArray()
      .map((c) => c.name);
    // Tables from before a column existed gain it (SQLite adds a column in place).
    for (const [column, type] of [
      ['approval_channel', 'TEXT'],
      ['policy_version', 'INTEGER'],
      ['user_groups', 'TEXT'],
      ['user_scopes', 'TEXT'],
      ['cluster', 'TEXT'],
      ['pve_token', 'TEXT'],
      ['upstream_ms', 'NUMERIC'],
      ['trace_id', 'TEXT'],
    ] as const) {
      if (!columns.includes(column))
        this.sql.exec(`ALTER TABLE audit_records ADD COLUMN ${column} ${type}`);
    }
    // The argument hash is an HMAC, and is named so since: older tables are renamed in place.
    if (columns.includes('args_sha256'))
      this.sql.exec('ALTER TABLE audit_records RENAME COLUMN args_sha256 TO args_hmac');
    for (const cols of [
      'ts',
      'user_id, ts',
      'user_email, ts',
      'tool, ts',
      'decision, ts',
      'cluster, ts',
      // The figures' hours by decision, read from the index alone.
      'ts, decision, tool',
    ]) {
      const name = `audit_records_${cols.replaceAll(', ', '_')}`;
      this.sql.exec(`CREATE INDEX IF NOT EXISTS ${name} ON audit_records (${cols})`);
    }
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS audit_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)',
    );
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS audit_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL)',
    );
    this.ready = true;
  }

  /**
   * The server key an older deployment kept here (before ../keys/server-keys.ts held them), or
   * null: ServerKeys takes it over once, so argument HMACs stay comparable across the upgrade.
   * Makes none.
   */
  legacyServerKey(name: string): string | null {
    this.ensure();
    const stored = this.sql
      .exec<{ value: string }>('SELECT value FROM audit_keys WHERE name = ?', name)
      .toArray()[0];
    return stored?.value ?? null;
  }

  /**
   * Stores one record (clipped to the size caps, never refused) and makes sure a prune is
   * scheduled. Throws only when storage itself fails (e.g. full): the writer then counts a loss.
   */
  async append(record: AuditRecord): Promise<void> {
    this.ensure();
    const row = rowValues(record, this.clock.now());
    this.sql.exec(
      `INSERT INTO audit_records (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
      ...row,
    );
    if (this.alarmSet) return;
    try {
      if ((await this.ctx.storage.getAlarm()) === null)
        await this.ctx.storage.setAlarm(this.clock.now() + PRUNE_INTERVAL_MS);
      this.alarmSet = true;
    } catch (err) {
      // The record is stored: failing the call would count it as lost. The next append retries.
      logError('audit_alarm_failed', err);
    }
  }

  /** One page, newest first (ts, then id, descending). Throws on a bad limit or cursor. */
  query(q: AuditQuery): AuditPage {
    this.ensure();
    const limit = q.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw new RangeError(
        `limit must be an integer from 1 to ${MAX_PAGE}, got ${String(limit).slice(0, 20)}`,
      );
    }
    const where: string[] = [];
    const params: SqlStorageValue[] = [];
    const filter = (clause: string, ...values: SqlStorageValue[]): void => {
      where.push(clause);
      params.push(...values);
    };
    // Empty strings mean "no filter": a blank form field on the admin page. A user is named by
    // id or by email, whichever the admin knows; both columns are indexed with ts.
    if (q.user) filter('(user_id = ? OR user_email = ?)', q.user, q.user);
    if (q.tool) filter('tool = ?', q.tool);
    if (q.decision) filter('decision = ?', q.decision);
    if (q.outcome) filter('outcome = ?', q.outcome);
    if (q.cluster) filter('cluster = ?', q.cluster);
    if (q.from !== undefined) filter('ts >= ?', bound('from', q.from));
    if (q.to !== undefined) filter('ts <= ?', bound('to', q.to));
    if (q.cursor) {
      const after = decodeCursor(q.cursor);
      filter('(ts < ? OR (ts = ? AND id < ?))', after.ts, after.ts, after.id);
    }
    const rows = this.sql
      .exec<Row>(
        `SELECT * FROM audit_records ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY ts DESC, id DESC LIMIT ?`,
        ...params,
        limit + 1, // one more than asked, to know whether a next page exists
      )
      .toArray();
    const records = rows.slice(0, limit).map(toRecord);
    const last = records[records.length - 1];
    return { records, next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
  }

  /** One record by id, or null (also for an id that is not an integer). */
  get(id: number): StoredAuditRecord | null {
    this.ensure();
    if (!Number.isSafeInteger(id)) return null;
    const row = this.sql.exec<Row>('SELECT * FROM audit_records WHERE id = ?', id).toArray()[0];
    return row ? toRecord(row) : null;
  }

  /** Deletes records older than the retention, then the oldest beyond the row cap (bounded). */
  prune(now: number): { deleted: number } {
    return { deleted: this.pruneBounded(now).deleted };
  }

  /** The scheduled prune, with the real clock; always sets the next alarm. */
  override async alarm(): Promise<void> {
    let delay = PRUNE_INTERVAL_MS;
    try {
      if (!this.pruneBounded(this.clock.now()).done) delay = CATCH_UP_DELAY_MS;
    } catch (err) {
      // Not rethrown: our own retry keeps the prune schedule alive whatever went wrong.
      logError('audit_prune_failed', err);
      delay = RETRY_DELAY_MS;
    }
    await this.ctx.storage.setAlarm(this.clock.now() + delay);
    this.alarmSet = true;
  }

  stats(): AuditStats {
    this.ensure();
    const row = this.sql
      .exec<{ n: number; oldest: number | null; newest: number | null }>(
        'SELECT count(*) AS n, min(ts) AS oldest, max(ts) AS newest FROM audit_records',
      )
      .one();
    const lost = this.sql
      .exec<{ value: number }>("SELECT value FROM audit_meta WHERE key = 'lost'")
      .toArray()[0];
    return {
      count: row.n,
      oldest_ts: row.oldest,
      newest_ts: row.newest,
      lost: lost?.value ?? 0,
      retention_days: this.limits.retentionDays,
      max_rows: this.limits.maxRows,
      db_bytes: this.sql.databaseSize,
      config_problems: [...this.problems],
    };
  }

  /**
   * Recent activity (./figures.ts). Read at most once per FIGURES_TTL_MS in an hour (pages and
   * scripts polling /admin/metrics.json share it), so that appends never queue behind a busy
   * reader: the week's counts come from one index-only scan ((ts, decision, tool)), the day's
   * latencies from one scan of the day, sorted here per hour.
   */
  figures(now: number): AuditFigures {
    this.ensure();
    if (!Number.isFinite(now)) throw new RangeError('figures need a finite epoch ms');
    const kept = this.kept;
    if (
      kept &&
      now >= kept.at &&
      now - kept.at < FIGURES_TTL_MS &&
      Math.floor(now / HOUR_MS) === Math.floor(kept.at / HOUR_MS)
    )
      return kept;
    const week = lastHours(now, 168);
    const since = week[0]!;
    // Calls only: a policy change is a record too (tool POLICY_EVENT_TOOL), never a call.
    const calls = `tool <> '${POLICY_EVENT_TOOL}'`;
    const byHour = new Map<number, Record<AuditDecision, number>>();
    for (const row of this.sql.exec<{ h: number; decision: string; n: number }>(
      `SELECT ts / ${HOUR_MS} AS h, decision, count(*) AS n FROM audit_records
       WHERE ts >= ? AND ${calls} GROUP BY h, decision`,
      since,
    )) {
      const start = row.h * HOUR_MS;
      const counts = byHour.get(start) ?? noCalls();
      if (Object.hasOwn(counts, row.decision)) counts[row.decision as AuditDecision] += row.n;
      byHour.set(start, counts);
    }
    const hours = (starts: number[]): HourCounts[] =>
      starts.map((start) => ({ start, counts: { ...(byHour.get(start) ?? noCalls()) } }));
    const refused = `ts >= ? AND ${calls} AND decision IN (${REFUSING.map((d) => `'${d}'`).join(', ')})`;
    const ranked = (column: 'tool' | 'rule'): Ranked[] =>
      this.sql
        .exec<{ name: string; count: number }>(
          `SELECT ${column} AS name, count(*) AS count FROM audit_records
           WHERE ${refused} AND ${column} IS NOT NULL GROUP BY ${column}
           ORDER BY count DESC, name LIMIT ${TOP}`,
          since,
        )
        .toArray();
    const day = week.slice(-24);
    const figures: AuditFigures = {
      at: now,
      day: hours(day),
      week: hours(week),
      refusing: { tools: ranked('tool'), rules: ranked('rule') },
      latency: this.latencies(day, calls),
    };
    this.kept = figures;
    return figures;
  }

  /** Each hour's call and upstream latency, median and 95th percentile (nearest rank). */
  private latencies(hours: number[], calls: string): LatencyHour[] {
    const of = new Map(hours.map((h) => [h, { call: [] as number[], upstream: [] as number[] }]));
    for (const row of this.sql.exec<{ h: number; l: number; u: number | null }>(
      `SELECT ts / ${HOUR_MS} AS h, latency_ms AS l, upstream_ms AS u FROM audit_records
       WHERE ts >= ? AND ${calls}`,
      hours[0]!,
    )) {
      const hour = of.get(row.h * HOUR_MS);
      if (!hour) continue;
      hour.call.push(row.l);
      if (row.u !== null) hour.upstream.push(row.u);
    }
    const at = (values: number[], q: number): number | null =>
      values.length ? values[rankOf(q, values.length)]! : null;
    return hours.map((start) => {
      const { call, upstream } = of.get(start)!;
      call.sort((a, b) => a - b);
      upstream.sort((a, b) => a - b);
      return {
        start,
        calls: call.length,
        p50_ms: at(call, 0.5),
        p95_ms: at(call, 0.95),
        upstream_calls: upstream.length,
        upstream_p50_ms: at(upstream, 0.5),
        upstream_p95_ms: at(upstream, 0.95),
      };
    });
  }

  /** Adds `n` (a non-negative integer) to this instance's lost counter. */
  recordLost(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0)
      throw new RangeError('recordLost takes a non-negative integer');
    if (n === 0) return;
    this.ensure();
    this.sql.exec(
      `INSERT INTO audit_meta (key, value) VALUES ('lost', ?)
       ON CONFLICT (key) DO UPDATE SET value = value + excluded.value`,
      n,
    );
  }

  private pruneBounded(now: number): { deleted: number; done: boolean } {
    this.ensure();
    if (!Number.isFinite(now)) throw new RangeError('prune needs a finite epoch ms');
    const cutoff = now - this.limits.retentionDays * DAY_MS;
    let deleted = 0;
    while (deleted < PRUNE_BUDGET) {
      const n = this.deleteOldest(
        'WHERE ts < ?',
        [cutoff],
        Math.min(PRUNE_BATCH, PRUNE_BUDGET - deleted),
      );
      deleted += n;
      if (n === 0) break;
    }
    while (deleted < PRUNE_BUDGET) {
      const excess =
        this.sql.exec<{ n: number }>('SELECT count(*) AS n FROM audit_records').one().n -
        this.limits.maxRows;
      if (excess <= 0) return { deleted, done: true };
      deleted += this.deleteOldest('', [], Math.min(excess, PRUNE_BATCH, PRUNE_BUDGET - deleted));
    }
    return { deleted, done: false };
  }

  /** Deletes up to `n` of the oldest rows matching `where`; returns how many went. */
  private deleteOldest(where: string, params: SqlStorageValue[], n: number): number {
    return this.sql
      .exec(
        `DELETE FROM audit_records WHERE id IN (SELECT id FROM audit_records ${where} ORDER BY ts, id LIMIT ?) RETURNING id`,
        ...params,
        n,
      )
      .toArray().length;
  }
}

/** The RPC surface as a caller sees it (each method answering a promise). */
export type AuditLogRpc = RpcOf<
  AuditLog,
  'append' | 'query' | 'get' | 'prune' | 'stats' | 'figures' | 'recordLost' | 'legacyServerKey'
>;

function logError(msg: string, err: unknown): void {
  logLine('error', msg, { error: errorText(err, 300, true) });
}
