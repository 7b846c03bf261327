// Window counters in a Durable Object's SQLite storage. Every method is synchronous, so a
// reservation (read every counter, check, increment) runs without an await in between: the
// Durable Object's single thread makes it exact under any concurrency.
//
// Table policy_counters: key TEXT (`<tool>/<counter>` or `*\/<counter>`), window_start INTEGER
// (epoch ms), expires_at INTEGER (window end), count INTEGER; primary key (key, window_start).
// Rows of windows that have ended are deleted on the next reservation.

import { checkLimits, readingKey, type AppliedLimit, type LimitedDecision } from '../policy/evaluate';

export type ReserveItem = Pick<AppliedLimit, 'key' | 'windowStart' | 'windowEnd' | 'max' | 'rule' | 'counter' | 'window' | 'scope'> & { reason?: string };

export interface CounterRow {
  key: string;
  windowStart: number;
  expiresAt: number;
  count: number;
}

export class SqlCounters {
  private ready = false;

  constructor(private readonly sql: SqlStorage) {}

  private ensure(): void {
    if (this.ready) return;
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS policy_counters (
         key TEXT NOT NULL, window_start INTEGER NOT NULL, expires_at INTEGER NOT NULL,
         count INTEGER NOT NULL, PRIMARY KEY (key, window_start))`,
    );
    this.sql.exec('CREATE INDEX IF NOT EXISTS policy_counters_expiry ON policy_counters (expires_at)');
    this.ready = true;
  }

  /** Takes one slot in every counter, or none: returns the `limited` decision of the first full one. */
  reserve(items: readonly ReserveItem[], now: number): LimitedDecision | null {
    this.ensure();
    this.sql.exec('DELETE FROM policy_counters WHERE expires_at <= ?', now);
    const readings = new Map<string, number>();
    for (const item of items) readings.set(readingKey(item), this.count(item.key, item.windowStart));
    const over = checkLimits(items, readings, now);
    if (over) return over;
    for (const item of items) {
      this.sql.exec(
        `INSERT INTO policy_counters (key, window_start, expires_at, count) VALUES (?, ?, ?, 1)
         ON CONFLICT (key, window_start) DO UPDATE SET count = count + 1`,
        item.key,
        item.windowStart,
        item.windowEnd,
      );
    }
    return null;
  }

  /** Gives back slots taken by `reserve` (never below zero). */
  release(items: readonly Pick<ReserveItem, 'key' | 'windowStart'>[]): void {
    this.ensure();
    for (const item of items) {
      this.sql.exec(
        'UPDATE policy_counters SET count = max(count - 1, 0) WHERE key = ? AND window_start = ?',
        item.key,
        item.windowStart,
      );
    }
  }

  /** Every live counter, for the admin page and tests. */
  list(now: number): CounterRow[] {
    this.ensure();
    return this.sql
      .exec<{ key: string; window_start: number; expires_at: number; count: number }>(
        'SELECT key, window_start, expires_at, count FROM policy_counters WHERE expires_at > ? ORDER BY key',
        now,
      )
      .toArray()
      .map((r) => ({ key: r.key, windowStart: r.window_start, expiresAt: r.expires_at, count: r.count }));
  }

  private count(key: string, windowStart: number): number {
    const row = this.sql
      .exec<{ count: number }>('SELECT count FROM policy_counters WHERE key = ? AND window_start = ?', key, windowStart)
      .toArray()[0];
    return row?.count ?? 0;
  }
}
