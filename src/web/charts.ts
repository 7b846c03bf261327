// Charts for /admin/activity, drawn on the server: no script, no chart library to ship. Hours
// are SVG (<svg role="img"> with a title and a description in words, each bar's total written on
// it, every mark patterned as well as coloured, the legend in HTML below with each series' sum),
// so they read without colour and the legend reflows on a phone; each hour's numbers are also a
// table under the day's chart; counts are HTML rows with a <meter> and the number beside it.
// hono/html escapes every text.

import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { AuditDecision, HourCounts, LatencyHour } from '../audit/record';
import { DECISIONS } from '../audit/figures';

type Svg = HtmlEscapedString | Promise<HtmlEscapedString>;

/** Each decision's colour and pattern (a fill that reads without colour). */
const LOOK: Record<AuditDecision, { label: string; fill: string }> = {
  allow: { label: 'allowed', fill: 'url(#p-allow)' },
  approval_required: { label: 'asked a person', fill: 'url(#p-approval_required)' },
  limited: { label: 'rate-limited', fill: 'url(#p-limited)' },
  deny: { label: 'denied', fill: 'url(#p-deny)' },
  none: { label: 'invalid', fill: 'url(#p-none)' },
};

/** The patterns the decisions' marks are filled with: once per page, in a hidden SVG. */
export function chartPatterns() {
  return html`<svg width="0" height="0" aria-hidden="true" class="defs"><defs>
<pattern id="p-allow" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#2e7d32"/></pattern>
<pattern id="p-approval_required" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#f9a825"/><path d="M0 6L6 0" stroke="#5d4300" stroke-width="1.2"/></pattern>
<pattern id="p-limited" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#ef6c00"/><circle cx="3" cy="3" r="1.2" fill="#3e1c00"/></pattern>
<pattern id="p-deny" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#c62828"/><path d="M0 0L6 6M6 0L0 6" stroke="#fff" stroke-width="1"/></pattern>
<pattern id="p-none" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#eceff1"/><path d="M0 3H6" stroke="#455a64" stroke-width="1.2"/></pattern>
</defs></svg>`;
}

const WIDTH = 720;
const LEFT = 56;
const RIGHT = 12;

/** A round top for an axis: 1, 2 or 5 times a power of ten, at least `max`. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max)!;
}

const hourLabel = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const dayLabel = (ms: number) =>
  new Date(ms).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

/** How wide a time label may be, in the chart's units ("18:00", "30 Nov" at a phone's 22px). */
const TICK_WIDTH = 66;

/**
 * The time axis: a label every `every` hours, from its hour's slot on. One too near the right
 * edge to fit ends where its slot ends instead, so that none is cut off there; one that would
 * then run over the label before it is left out (the current day, an hour old, on the week's).
 */
function timeTicks(
  hours: readonly { start: number }[],
  slot: number,
  base: number,
  every: number,
  label: (ms: number) => string,
) {
  const right = WIDTH - RIGHT;
  let taken = 0;
  return hours
    .map((h, i) => ({ h, i }))
    .filter(({ h }) => Math.floor(h.start / 3_600_000) % every === 0)
    .flatMap(({ h, i }) => {
      const at = LEFT + i * slot;
      if (at + TICK_WIDTH <= right) {
        taken = at + TICK_WIDTH;
        return [html`<text x="${at}" y="${base + 16}" class="tick">${label(h.start)}</text>`];
      }
      const end = Math.min(at + slot, right);
      if (end - TICK_WIDTH < taken) return [];
      taken = end;
      return [
        html`<text x="${end}" y="${base + 16}" class="tick" text-anchor="end">${label(h.start)}</text>`,
      ];
    });
}

function yAxis(top: number, height: number, base: number) {
  // A half-way tick only where it is a whole number.
  return (Number.isInteger(top / 2) ? [0, top / 2, top] : [0, top]).map((v) => {
    const y = base - (v / top) * height;
    return html`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y}" y2="${y}" class="grid"/><text x="${LEFT - 6}" y="${y + 4}" class="tick" text-anchor="end">${String(v)}</text>`;
  });
}

/**
 * Calls per hour, stacked by decision. `perDay`: the x axis names days (a week of hours) rather
 * than hours, and bars carry no total (too narrow to read).
 */
export function callsChart(id: string, title: string, hours: HourCounts[], perDay: boolean): Svg {
  const height = 180;
  const base = 40 + height;
  const totals = hours.map((h) => DECISIONS.reduce((n, d) => n + h.counts[d], 0));
  const top = niceMax(Math.max(0, ...totals));
  const slot = (WIDTH - LEFT - RIGHT) / hours.length;
  const bar = Math.max(1, slot * 0.8);
  const sums = DECISIONS.map((d) => [d, hours.reduce((n, h) => n + h.counts[d], 0)] as const);
  const all = totals.reduce((a, b) => a + b, 0);
  const bars = hours.map((h, i) => {
    const x = LEFT + i * slot + (slot - bar) / 2;
    let y = base;
    const range = `${perDay ? `${dayLabel(h.start)} ` : ''}${hourLabel(h.start)}–${hourLabel(h.start + 3_600_000)} UTC`;
    const parts = DECISIONS.filter((d) => h.counts[d] > 0).map((d) => {
      const tall = (h.counts[d] / top) * height;
      y -= tall;
      return html`<rect x="${x}" y="${y}" width="${bar}" height="${tall}" fill="${LOOK[d].fill}" class="mark"><title>${range}: ${LOOK[d].label} ${h.counts[d]}</title></rect>`;
    });
    const total =
      !perDay && totals[i]! > 0
        ? html`<text x="${x + bar / 2}" y="${y - 3}" class="total" text-anchor="middle">${totals[i]}</text>`
        : '';
    return html`${parts}${total}`;
  });
  const ticks = timeTicks(hours, slot, base, perDay ? 24 : 6, perDay ? dayLabel : hourLabel);
  const legend = sums.map(
    ([d, n]) =>
      html`<li><svg width="14" height="14" aria-hidden="true"><rect width="14" height="14" fill="${LOOK[d].fill}" class="mark"/></svg> ${LOOK[d].label} <strong>${n}</strong></li>`,
  );
  return html`<figure>
<svg id="${id}" viewBox="0 0 ${WIDTH} ${base + 24}" role="img" aria-labelledby="${id}-t" aria-describedby="${id}-d" class="chart">
<title id="${id}-t">${title}</title>
<desc id="${id}-d">${all} calls: ${sums.map(([d, n]) => `${LOOK[d].label} ${n}`).join(', ')}. Hours in UTC.</desc>
${yAxis(top, height, base)}${bars}${ticks}
<text x="${LEFT}" y="24" class="tick">calls per hour</text>
</svg>
<figcaption>${title}: <strong>${all}</strong> calls (hours in UTC).<ul class="legend">${legend}</ul>
${perDay ? '' : hoursTable(hours)}</figcaption>
</figure>`;
}

/** The hours that had calls, each with its calls by decision: the chart's numbers as text. */
function hoursTable(hours: HourCounts[]) {
  const busy = hours.filter((h) => DECISIONS.some((d) => h.counts[d] > 0));
  if (!busy.length) return '';
  return html`<details><summary>Each hour's calls</summary><div class="scroll"><table class="hours"><thead><tr><th scope="col">Hour (UTC)</th>${DECISIONS.map((d) => html`<th scope="col">${LOOK[d].label}</th>`)}</tr></thead><tbody>${busy.map(
    (h) =>
      html`<tr><th scope="row">${hourLabel(h.start)}</th>${DECISIONS.map((d) => html`<td>${h.counts[d]}</td>`)}</tr>`,
  )}</tbody></table></div></details>`;
}

/**
 * Counts as rows: a name, a <meter> against `of` (its own limit) or the largest count, and the
 * number written beside it. `empty`: what is said when there are no rows.
 */
export function countRows(
  id: string,
  title: string,
  rows: { name: string; count: number; of?: number; note?: string }[],
  empty: string,
): Svg {
  if (!rows.length) return html`<p class="muted" id="${id}">${title}: ${empty}</p>`;
  const top = Math.max(1, ...rows.map((r) => r.count));
  return html`<table class="counts" id="${id}"><caption>${title}</caption><tbody>${rows.map(
    (r) =>
      html`<tr><th scope="row"><code>${r.name}</code></th><td class="meter"><meter min="0" max="${r.of ?? top}" value="${r.count}">${r.count}</meter></td><td class="count"><strong>${r.count}</strong>${r.of !== undefined ? ` / ${r.of}` : ''}${r.note ? html` <small>${r.note}</small>` : ''}</td></tr>`,
  )}</tbody></table>`;
}

/** The calls' Proxmox time per hour, median (solid) and 95th percentile (dashed), in ms. */
export function latencyChart(id: string, title: string, hours: LatencyHour[]): Svg {
  const height = 160;
  const base = 40 + height;
  const seen = hours.filter((h) => h.upstream_p95_ms !== null);
  if (!seen.length)
    return html`<p class="muted" id="${id}">${title}: no call sent Proxmox anything in these hours.</p>`;
  const top = niceMax(Math.max(...seen.map((h) => h.upstream_p95_ms!)));
  const slot = (WIDTH - LEFT - RIGHT) / hours.length;
  const at = (i: number, v: number) =>
    `${(LEFT + i * slot + slot / 2).toFixed(1)},${(base - (v / top) * height).toFixed(1)}`;
  const line = (pick: (h: LatencyHour) => number | null, cls: string) => {
    const points = hours
      .map((h, i) => ({ v: pick(h), i }))
      .filter((p): p is { v: number; i: number } => p.v !== null);
    return html`<polyline points="${points.map((p) => at(p.i, p.v)).join(' ')}" class="${cls}"/>${points.map(
      (p) =>
        html`<circle cx="${at(p.i, p.v).split(',')[0]}" cy="${at(p.i, p.v).split(',')[1]}" r="3" class="${cls}"><title>${hourLabel(hours[p.i]!.start)} UTC: ${Math.round(p.v)} ms</title></circle>`,
    )}`;
  };
  const last = seen[seen.length - 1]!;
  const ticks = timeTicks(hours, slot, base, 6, hourLabel);
  const latest = `${hourLabel(last.start)} UTC: median ${Math.round(last.upstream_p50_ms!)} ms, 95th percentile ${Math.round(last.upstream_p95_ms!)} ms over ${last.upstream_calls} calls`;
  return html`<figure>
<svg id="${id}" viewBox="0 0 ${WIDTH} ${base + 24}" role="img" aria-labelledby="${id}-t" aria-describedby="${id}-d" class="chart">
<title id="${id}-t">${title}</title>
<desc id="${id}-d">Latest hour ${latest}.</desc>
${yAxis(top, height, base)}${line((h) => h.upstream_p95_ms, 'p95')}${line((h) => h.upstream_p50_ms, 'p50')}${ticks}
<text x="${LEFT}" y="24" class="tick">ms per call in Proxmox requests</text>
</svg>
<figcaption>${title} (hours in UTC).<ul class="legend"><li><svg width="24" height="10" aria-hidden="true"><line x1="0" x2="24" y1="5" y2="5" class="p50"/></svg> median, solid</li><li><svg width="24" height="10" aria-hidden="true"><line x1="0" x2="24" y1="5" y2="5" class="p95"/></svg> 95th percentile, dashed</li></ul><span class="latest">Latest hour ${latest}.</span></figcaption>
</figure>`;
}

/** The charts' own rules: they scale to the page, and marks keep an outline in any colours. */
export const CHART_STYLE = `
figure{margin:1rem 0}
svg.chart{width:100%;height:auto;display:block}
svg .grid{stroke:#ddd;stroke-width:1}
svg .tick,svg .legend,svg .name,svg .count,svg .total{font:12px system-ui,sans-serif;fill:#1b1b1b}
svg .total,svg .count{font-weight:600}
svg .mark{stroke:#1b1b1b;stroke-width:.5}
svg .frame{fill:none;stroke:#888}
svg polyline{fill:none;stroke-width:2}
svg .p50{stroke:#0b57d0;fill:#0b57d0}
svg polyline.p95,svg line.p95{stroke:#6a1b9a;stroke-dasharray:5 3}
svg circle.p95{fill:#6a1b9a;stroke:none}
svg line.p50,svg line.p95{stroke-width:2}
figcaption{font-size:.9rem;color:#333}
ul.legend{list-style:none;padding:0;margin:.25rem 0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
ul.legend svg{vertical-align:middle}
svg.defs{position:absolute}
table.counts{margin:1rem 0}
table.counts caption{text-align:left;font-weight:600;padding:.25rem 0}
table.counts th{font-weight:normal;overflow-wrap:anywhere}
table.counts td.meter{width:40%}
table.counts meter{width:100%}
table.counts td.count{white-space:nowrap}
.muted{color:#555}
table.hours{font-size:.85rem;width:auto}
table.hours td{text-align:right}
@media (max-width:600px){svg .tick,svg .total{font-size:22px}}`;
