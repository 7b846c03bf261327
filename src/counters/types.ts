// What the counters' Durable Object answers (its class: ./policy-counters.ts, which implements
// it): a module of types, so that the env module types the binding without importing code.

import type { LimitedDecision } from '../policy/evaluate';
import type { CounterRow, ReserveItem } from './window-counters';

/** The rate-limit counters of one scope key. */
export interface CountersObject {
  reserve(items: ReserveItem[], now: number): LimitedDecision | null;
  release(items: Pick<ReserveItem, 'key' | 'windowStart'>[]): void;
  list(now: number): CounterRow[];
}
