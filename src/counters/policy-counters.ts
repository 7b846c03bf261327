// A Durable Object holding the counters of one scope key: `grant:<grantId>`, `user:<userId>`,
// `guest:<vmid>` or `global`. Session counters live in the session's own MCP agent instead.

import { DurableObject } from 'cloudflare:workers';
import type { LimitedDecision } from '../policy/evaluate';
import type { CountersObject } from './types';
import { WindowCounters, type CounterRow, type ReserveItem } from './window-counters';

export class PolicyCounters extends DurableObject implements CountersObject {
  private counters!: WindowCounters;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    // No call is served before the stored counters are back in memory.
    void ctx.blockConcurrencyWhile(async () => {
      this.counters = await WindowCounters.load(ctx.storage);
    });
  }

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
