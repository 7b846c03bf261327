// A Durable Object holding the counters of one scope key: `grant:<grantId>`, `user:<userId>` or
// `global`. Session counters live in the session's own MCP agent instead.

import { DurableObject } from 'cloudflare:workers';
import type { LimitedDecision } from '../policy/evaluate';
import { SqlCounters, type CounterRow, type ReserveItem } from './sql-counters';

export class PolicyCounters extends DurableObject {
  private readonly counters = new SqlCounters(this.ctx.storage.sql);

  reserve(items: ReserveItem[], now: number): LimitedDecision | null {
    return this.counters.reserve(items, now);
  }

  release(items: Pick<ReserveItem, 'key' | 'windowStart'>[]): void {
    this.counters.release(items);
  }

  list(now: number): CounterRow[] {
    return this.counters.list(now);
  }
}
