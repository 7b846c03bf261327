// The admin page: recent calls (filterable, exportable), pending approvals to act on, counters
// with their reset times, the audit trail's health, and the active policy. Server-rendered,
// accessible (labels, table headers, status text), usable on a phone (tables scroll sideways).

import { html } from 'hono/html';
import type { Approval } from '../approvals/types';
import type { AuditQuery, AuditStats, StoredAuditRecord } from '../audit/record';
import type { GrantRow } from '../auth/grants';
import { layout } from '../auth/pages';

export interface CounterRowView {
  object: string;
  key: string;
  count: number;
  resetsAt: number;
}

export interface AdminView {
  viewer: string;
  csrf: string;
  filters: Omit<AuditQuery, 'limit' | 'cursor'>;
  records: StoredAuditRecord[];
  nextPage: string | null;
  exportQuery: string;
  pending: Approval[];
  counters: CounterRowView[];
  stats: AuditStats | null;
  lost: number;
  policy: { origin: string; valid: boolean; text: string; errors: string[] };
  auditOn: boolean;
  /** Grants, or why they cannot be listed (AUTH_MODE=none has none). */
  grants: { rows: GrantRow[]; more: boolean } | { unavailable: string };
  /** A message after an action (e.g. a revocation). */
  notice?: string;
}

const DECISIONS = ['', 'allow', 'deny', 'limited', 'approval_required', 'none'];
const iso = (ms: number | null | undefined): string =>
  ms ? new Date(ms).toISOString().replace('.000Z', 'Z') : '';
const local = (ms: number | undefined): string =>
  ms ? new Date(ms).toISOString().slice(0, 16) : '';

export function adminPage(v: AdminView) {
  const f = v.filters;
  const records = v.records.map(
    (r) => html`<tr>
<td>${iso(r.ts)}</td><td>${r.user_email ?? r.user_id}</td><td><code>${r.tool}</code></td>
<td>${r.decision}${r.rule ? html`<br><small><code>${r.rule}</code></small>` : ''}</td><td>${r.outcome}${r.error_kind ? html`<br><small>${r.error_kind}</small>` : ''}</td>
<td>${r.upstream_status ?? ''}</td><td>${r.latency_ms}</td><td>${r.vmid ?? ''}</td>
<td><small><code>${r.arg_keys.join(', ')}</code></small></td></tr>`,
  );
  const pending = v.pending.map(
    (
      a,
    ) => html`<tr><td>${iso(a.created_at)}</td><td>${a.user_email ?? a.user_id}</td><td><code>${a.tool}</code></td>
<td><a href="/approvals/${a.id}">details</a></td><td>${iso(a.expires_at)}</td>
<td><form method="post" action="/approvals/${a.id}"><input type="hidden" name="csrf" value="${v.csrf}"><input type="hidden" name="back" value="/admin">
<button type="submit" name="decision" value="approve" aria-label="Approve ${a.tool} for ${a.user_email ?? a.user_id}">Approve</button>
<button type="submit" name="decision" value="deny" aria-label="Deny ${a.tool} for ${a.user_email ?? a.user_id}">Deny</button></form></td></tr>`,
  );
  const grants =
    'unavailable' in v.grants
      ? html`<p>${v.grants.unavailable}</p>`
      : v.grants.rows.length === 0
        ? html`<p>No grants.</p>`
        : html`<div style="overflow-x:auto"><table><thead><tr><th scope="col">Person</th><th scope="col">Client</th><th scope="col">Created (UTC)</th><th scope="col">Last used (UTC)</th><th scope="col">Revoke</th></tr></thead><tbody>${v.grants.rows.map(
            (
              g,
            ) => html`<tr><td>${g.who}${g.who !== g.userId ? html`<br><small><code>${g.userId}</code></small>` : ''}</td><td>${g.clientName}<br><small><code>${g.clientId}</code></small></td>
<td>${iso(g.createdAt)}</td><td>${iso(g.lastUsed) || '—'}</td>
<td><form method="post" action="/admin/grants/revoke"><input type="hidden" name="csrf" value="${v.csrf}"><input type="hidden" name="user" value="${g.userId}"><input type="hidden" name="grant" value="${g.grantId}">
<button type="submit" aria-label="Revoke ${g.clientName} for ${g.who}">Revoke</button></form></td></tr>`,
          )}</tbody></table></div>${v.grants.more ? html`<p><small>Only the first grants are listed.</small></p>` : ''}`;
  const counters = v.counters.map(
    (c) =>
      html`<tr><td><code>${c.object}</code></td><td><code>${c.key}</code></td><td>${c.count}</td><td>${iso(c.resetsAt)}</td></tr>`,
  );
  return layout(
    'Proxmox MCP — admin',
    html`<h1>Proxmox MCP — admin</h1>
${v.notice ? html`<p role="status"><strong>${v.notice}</strong></p>` : ''}
<nav><span>Signed in as ${v.viewer}</span> ${v.csrf === 'local' ? '(no sign-in: AUTH_MODE=none)' : html`<form method="post" action="/logout" style="display:inline"><input type="hidden" name="csrf" value="${v.csrf}"><button type="submit">Sign out</button></form>`}</nav>
<h2 id="approvals">Pending approvals (${v.pending.length})</h2>
${v.pending.length ? html`<div style="overflow-x:auto"><table><thead><tr><th scope="col">Asked</th><th scope="col">By</th><th scope="col">Tool</th><th scope="col">Call</th><th scope="col">Expires</th><th scope="col">Decide</th></tr></thead><tbody>${pending}</tbody></table></div>` : html`<p>None.</p>`}
<h2 id="grants">People's grants</h2>
<p><small>Each client a person signs in with holds a grant. Revoking one stops its tokens at once and ends the MCP sessions it opened; the person can sign in again unless you also remove them from ALLOWED_USERS / ALLOWED_GROUPS.</small></p>
${grants}
<h2 id="calls">Recent calls</h2>
<form method="get" action="/admin"><fieldset><legend>Filter</legend>
<label>User <input name="user" value="${f.user ?? ''}" placeholder="id or email"></label>
<label>Tool <input name="tool" value="${f.tool ?? ''}"></label>
<label>Decision <select name="decision">${DECISIONS.map((d) => html`<option value="${d}"${f.decision === d ? ' selected' : ''}>${d || 'any'}</option>`)}</select></label>
<label>From (UTC) <input type="datetime-local" name="from" value="${local(f.from)}"></label>
<label>To (UTC) <input type="datetime-local" name="to" value="${local(f.to)}"></label>
<button type="submit">Apply</button></fieldset></form>
<p>Export these: <a href="/admin/audit?${v.exportQuery}&amp;format=jsonl">JSON Lines</a> · <a href="/admin/audit?${v.exportQuery}&amp;format=csv">CSV</a></p>
<div style="overflow-x:auto"><table><thead><tr><th scope="col">Time (UTC)</th><th scope="col">User</th><th scope="col">Tool</th><th scope="col">Decision</th><th scope="col">Outcome</th><th scope="col">Upstream</th><th scope="col">ms</th><th scope="col">VM</th><th scope="col">Arguments</th></tr></thead>
<tbody>${records.length ? records : html`<tr><td colspan="9">No calls match.</td></tr>`}</tbody></table></div>
${v.nextPage ? html`<p><a href="/admin?${v.nextPage}">Older calls</a></p>` : ''}
<h2 id="counters">Rate-limit counters</h2>
${v.counters.length ? html`<div style="overflow-x:auto"><table><thead><tr><th scope="col">Object</th><th scope="col">Counter</th><th scope="col">Count</th><th scope="col">Resets at (UTC)</th></tr></thead><tbody>${counters}</tbody></table></div>` : html`<p>No live counters.</p>`}
<p><small>Grant, user and global counters of the users and grants in recent calls; session counters live with each session.</small></p>
<h2 id="audit">Audit trail</h2>
${v.auditOn ? '' : html`<p role="alert"><strong>Auditing is off (AUDIT_ENABLED=false): new calls are not recorded.</strong></p>`}
<p>${v.stats ? html`${v.stats.count} records, oldest ${iso(v.stats.oldest_ts) || '—'}; kept ${v.stats.retention_days} days (at most ${v.stats.max_rows} records).` : 'The audit store did not answer.'} Records lost: <strong>${v.lost}</strong>.</p>
<h2 id="policy">Active policy (${v.policy.origin})</h2>
<p>${v.policy.valid ? html`<strong>Valid.</strong>` : html`<strong role="alert">Invalid — every tool call is denied.</strong>`}</p>
${v.policy.errors.length ? html`<ul>${v.policy.errors.map((e) => html`<li><code>${e}</code></li>`)}</ul>` : ''}
<pre>${v.policy.text}</pre>`,
    true,
  );
}
