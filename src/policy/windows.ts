// Calendar-aligned UTC windows: a minute counter resets at hh:mm:00.000Z, a day counter at
// midnight UTC. Pure: `now` (epoch ms) is always passed in.

import type { Window } from './schema';

const LENGTH_MS: Record<Window, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/** Epoch ms at which the window containing `now` began (UTC days have no leap seconds in JS). */
export function windowStart(window: Window, now: number): number {
  const len = LENGTH_MS[window];
  return Math.floor(now / len) * len;
}

export function windowEnd(window: Window, now: number): number {
  return windowStart(window, now) + LENGTH_MS[window];
}

/** Whole seconds until the window resets, at least 1. */
export function retryAfterSeconds(window: Window, now: number): number {
  return Math.max(1, Math.ceil((windowEnd(window, now) - now) / 1000));
}
