// /admin/activity: what the gateway did lately, at a glance — calls per hour by decision over
// the last day and week, the tools and rules that refuse most, how long Proxmox took per call,
// what became of approvals and how long people took, and the rate-limit counters against their
// limits. Read from the audit trail, the approvals store and the counters (/admin/metrics.json
// gives the same figures as JSON). Server-rendered, no script (charts.ts).

import { html } from 'hono/html';
import type { ApprovalFigures } from '../approvals/types';
import type { AuditFigures } from '../audit/record';
import { layout } from '../auth/pages';
import type { CounterRowView } from './admin-page';
import { ADMIN_STYLE } from './admin-style';
import { callsChart, CHART_STYLE, chartPatterns, countRows, latencyChart } from './charts';

export interface ActivityView {
  viewer: string;
  /** Null where the audit store did not answer. */
  calls: AuditFigures | null;
  /** Null where the approvals store did not answer. */
  approvals: { day: ApprovalFigures; week: ApprovalFigures } | null;
  /** The live counters that count for a limit of the policy in force. */
  limits: CounterRowView[];
  auditOn: boolean;
}

const seconds = (ms: number | null) =>
  ms === null ? '—' : ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;

function approvalsSection(label: string, id: string, a: ApprovalFigures) {
  return html`${countRows(
    id,
    `Approvals asked in the last ${label}: what became of them`,
    [
      { name: 'asked', count: a.asked },
      { name: 'given', count: a.given },
      { name: 'refused', count: a.refused },
      { name: 'expired', count: a.expired },
      { name: 'revoked', count: a.revoked },
      { name: 'withdrawn (asked again)', count: a.withdrawn },
      { name: 'waiting', count: a.waiting },
    ],
    'none.',
  )}
<p>People took <strong>${seconds(a.decide_p50_ms)}</strong> to decide (median), <strong>${seconds(a.decide_p95_ms)}</strong> (95th percentile).</p>`;
}

export function activityPage(v: ActivityView) {
  const c = v.calls;
  return layout(
    'Proxmox MCP — activity',
    html`<h1>Activity</h1>
<nav class="top"><span>Signed in as ${v.viewer}</span> <a href="/admin">Admin</a> <a href="/admin/metrics.json">These figures as JSON</a></nav>
${v.auditOn ? '' : html`<p role="alert"><strong>Auditing is off (AUDIT_ENABLED=false): new calls are not recorded or counted here.</strong></p>`}
${chartPatterns()}
<h2 id="calls">Calls</h2>
${
  c
    ? html`${callsChart('calls-day', 'Calls per hour by decision, last 24 hours', c.day, false)}
${callsChart('calls-week', 'Calls per hour by decision, last 7 days', c.week, true)}`
    : html`<p role="alert">The audit trail did not answer: no figures of calls.</p>`
}
<h2 id="refusals">What refuses most</h2>
${
  c
    ? html`${countRows('refusing-tools', 'Tools with the most calls refused (denied or rate-limited), last 7 days', c.refusing.tools, 'no call was refused.')}
${countRows('refusing-rules', 'Rules that refused the most calls, last 7 days', c.refusing.rules, 'no rule refused a call.')}`
    : ''
}
<h2 id="latency">Proxmox latency</h2>
${c ? latencyChart('latency-chart', 'Time in Proxmox requests per call, last 24 hours', c.latency) : ''}
<h2 id="approvals">Approvals</h2>
${
  v.approvals
    ? html`${approvalsSection('24 hours', 'approvals-day', v.approvals.day)}${approvalsSection('7 days', 'approvals-week', v.approvals.week)}`
    : html`<p role="alert">The approvals store did not answer.</p>`
}
<h2 id="limits">Rate limits</h2>
${countRows(
  'limit-counters',
  'Live counters against their limits',
  v.limits.map((r) => ({
    name: `${r.object} ${r.key}`,
    count: r.count,
    of: r.limit!.max,
    note: `per ${r.limit!.window}`,
  })),
  'no counter of a limit in the policy is counting now.',
)}`,
    true,
    ADMIN_STYLE + CHART_STYLE,
  );
}
