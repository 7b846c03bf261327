// What the audit trail says of recent activity, for /admin's charts and /admin/metrics.json:
// calls per hour by decision over the last day and week, the tools and rules that refuse most,
// and per hour the calls' and their Proxmox requests' latency (median and 95th percentile).
// AuditLog (./audit-log.ts) reads them with SQL; the hours and the percentile rule are here.

import type { AuditDecision } from './record';

export type { AuditFigures, HourCounts, LatencyHour, Ranked } from './record';

export const HOUR_MS = 3_600_000;

/** Decisions in the order charts stack them: let through first, then asked, then refused. */
export const DECISIONS: readonly AuditDecision[] = [
  'allow',
  'approval_required',
  'limited',
  'deny',
  'none',
];

/** Decisions that refuse a call (`none`: invalid arguments, never judged). */
export const REFUSING: readonly AuditDecision[] = ['deny', 'limited'];

/** How many tools and rules `refusing` names. */
export const TOP = 8;

/** The starts of the `n` hours up to and including the one `now` is in. */
export function lastHours(now: number, n: number): number[] {
  const current = Math.floor(now / HOUR_MS) * HOUR_MS;
  return Array.from({ length: n }, (_, i) => current - (n - 1 - i) * HOUR_MS);
}

export function noCalls(): Record<AuditDecision, number> {
  return Object.fromEntries(DECISIONS.map((d) => [d, 0])) as Record<AuditDecision, number>;
}

/** The 0-based position of the `q` percentile of `n` sorted values (nearest rank). */
export function rankOf(q: number, n: number): number {
  return Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
}
