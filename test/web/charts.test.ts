// The time axis of /admin/activity's charts (src/web/charts.ts) at every hour of the day: a label
// that would run past the chart's right edge (the current hour at 18:00, say, on a phone's font)
// ends where its slot ends instead, so no hour of the day cuts one off. The page itself, in
// Chromium at two sizes, is test/web/activity-page.browser.test.ts.

import { describe, expect, it } from 'vitest';
import type { AuditDecision, HourCounts } from '../../src/audit/record';
import { callsChart } from '../../src/web/charts';

const WIDTH = 720;
const HOUR = 3_600_000;
/** As wide as a label may be at a phone's font (5 characters of 22px, in the chart's units). */
const TICK_WIDTH = 66;
const NONE: Record<AuditDecision, number> = {
  allow: 1,
  deny: 0,
  limited: 0,
  approval_required: 0,
  none: 0,
};

/** The hours up to `last` (its start), `n` of them. */
const hoursTo = (last: number, n: number): HourCounts[] =>
  Array.from({ length: n }, (_, i) => ({ start: last - (n - 1 - i) * HOUR, counts: NONE }));

/** Each time label's extent, as its x and anchor place it. */
async function labels(svg: string): Promise<{ text: string; from: number; to: number }[]> {
  return [
    ...svg.matchAll(/<text x="([\d.]+)" y="[\d.]+" class="tick"( text-anchor="end")?>([^<]+)</g),
  ]
    .filter((m) => /\d/.test(m[3]!) && !/^\d+$/.test(m[3]!))
    .map((m) => {
      const x = Number(m[1]);
      return m[2]
        ? { text: m[3]!, from: x - TICK_WIDTH, to: x }
        : { text: m[3]!, from: x, to: x + TICK_WIDTH };
    });
}

describe('the time axis', () => {
  it.each(Array.from({ length: 24 }, (_, h) => h))(
    'keeps every label inside the chart when the current hour is %i:00',
    async (hour) => {
      const last = Date.UTC(2026, 11, 6, hour);
      for (const [hours, perDay] of [
        [hoursTo(last, 24), false],
        [hoursTo(last, 168), true],
      ] as const) {
        const svg = String(await callsChart('c', 'Calls', [...hours], perDay));
        const found = await labels(svg);
        expect(found.length).toBeGreaterThan(0);
        for (const label of found) {
          expect(label.from, label.text).toBeGreaterThanOrEqual(0);
          expect(label.to, label.text).toBeLessThanOrEqual(WIDTH);
        }
        // In time order, none over the next.
        for (const [a, b] of found.slice(1).map((l, i) => [found[i]!, l] as const))
          expect(a.to, `${a.text} then ${b.text}`).toBeLessThanOrEqual(b.from);
      }
    },
  );
});
