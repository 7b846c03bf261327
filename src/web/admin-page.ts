// The admin page: pending approvals to act on, people's grants to revoke, recent calls
// (filterable, exportable; admin-calls.ts), counters against their limits, the audit trail's
// health, and the active policy folded to one line (policy-panel.ts). Server-rendered, no
// script; accessible (labels, table headers, status text); on a phone the tables become cards.

import { html } from 'hono/html';
import type { Approval } from '../approvals/types';
import type { AuditQuery, AuditStats, StoredAuditRecord } from '../audit/record';
import type { GrantRow } from '../auth/grants';
import { layout } from '../auth/pages';
import type { Window } from '../policy/schema';
import { callSummary, callsTable, iso, slashBreaks } from './admin-calls';
import { ADMIN_STYLE } from './admin-style';
import { type PolicyPanel, policyPanel } from './policy-panel';

export interface CounterRowView {
  object: string;
  key: string;
  count: number;
  resetsAt: number;
  /** The limit it counts for, from the active policy; null when the policy has none now. */
  limit: { max: number; window: Window } | null;
}

export interface PendingView {
  approval: Approval;
  /** Its grant no longer exists: the call can never be made, so it is not offered. */
  grantRevoked: boolean;
}

export interface AdminView {
  viewer: string;
  csrf: string;
  filters: Omit<AuditQuery, 'limit' | 'cursor'>;
  records: StoredAuditRecord[];
  nextPage: string | null;
  exportQuery: string;
  pending: PendingView[];
  counters: CounterRowView[];
  stats: AuditStats | null;
  lost: number;
  /** Approval notifications: receivers configured, and deliveries given up (null: unknown). */
  notifications: { receivers: number; undelivered: number | null } | null;
  policy: PolicyPanel;
  auditOn: boolean;
  /** Grants, or why they cannot be listed (AUTH_MODE=none has none). */
  grants: { rows: GrantRow[]; more: boolean } | { unavailable: string };
  /** A message after an action (e.g. a revocation). */
  notice?: string;
  /** The clusters the server reaches: with several, calls are filtered by cluster too. */
  clusters: readonly string[];
}

const DECISIONS = ['', 'allow', 'deny', 'limited', 'approval_required', 'none'];
const local = (ms: number | undefined): string =>
  ms ? new Date(ms).toISOString().slice(0, 16) : '';

function pendingSection(v: AdminView) {
  const offered = v.pending.filter((p) => !p.grantRevoked).length;
  const rows = v.pending.map(({ approval: a, grantRevoked }) => {
    const who = a.user_email ?? a.user_id;
    const decide = grantRevoked
      ? html`<strong class="bad">grant revoked</strong><br><small>Its client lost access: this call can never be made.</small>`
      : html`<form method="post" action="/approvals/${a.id}"><input type="hidden" name="csrf" value="${v.csrf}"><input type="hidden" name="back" value="/admin">
<button type="submit" name="decision" value="approve" aria-label="Approve ${a.tool} for ${who}">Approve</button>
<button type="submit" name="decision" value="deny" aria-label="Deny ${a.tool} for ${who}">Deny</button></form>`;
    return html`<tr><td data-label="Asked" class="nowrap"><small>${iso(a.created_at)}</small></td><td data-label="By" class="who">${who}</td><td data-label="Tool" class="tool"><code>${a.tool}</code></td>
<td data-label="Call" class="args">${callSummary(a.args)} <a href="/approvals/${a.id}">details</a>${a.approvals_required > 1 ? html`<br><small>approvals ${a.approved_by.length} of ${a.approvals_required}${a.approved_by.length ? ` (by ${a.approved_by.map((g) => g.by).join(', ')})` : ''}</small>` : ''}</td><td data-label="Expires" class="nowrap"><small>${iso(a.expires_at)}</small></td>
<td data-label="Decide">${decide}</td></tr>`;
  });
  return html`<h2 id="approvals">Pending approvals (${offered})</h2>
${v.pending.length ? html`<div class="scroll"><table class="cards"><thead><tr><th scope="col">Asked (UTC)</th><th scope="col">By</th><th scope="col">Tool</th><th scope="col">Call</th><th scope="col">Expires (UTC)</th><th scope="col">Decide</th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p>None.</p>`}`;
}

function grantsSection(v: AdminView) {
  const body =
    'unavailable' in v.grants
      ? html`<p>${v.grants.unavailable}</p>`
      : v.grants.rows.length === 0
        ? html`<p>No grants.</p>`
        : html`<div class="scroll"><table class="cards"><thead><tr><th scope="col">Person</th><th scope="col">Client</th><th scope="col">Scopes</th><th scope="col">Created (UTC)</th><th scope="col">Last used (UTC)</th><th scope="col">Revoke</th></tr></thead><tbody>${v.grants.rows.map(
            (
              g,
            ) => html`<tr><td data-label="Person" class="who">${g.who}${g.who !== g.userId ? html`<br><small><code>${g.userId}</code></small>` : ''}</td><td data-label="Client" class="id">${g.clientName}<br><small><code>${g.clientId}</code></small></td><td data-label="Scopes" class="id">${g.scopes.length ? html`<code>${g.scopes.join(' ')}</code>` : html`<span class="bad">none</span>`}</td><td data-label="Created">${iso(g.createdAt)}</td><td data-label="Last used">${iso(g.lastUsed) || '—'}</td>
<td><form method="get" action="/admin/grants/revoke"><input type="hidden" name="user" value="${g.userId}"><input type="hidden" name="grant" value="${g.grantId}">
<button type="submit" aria-label="Revoke ${g.clientName} for ${g.who}…">Revoke…</button></form></td></tr>`,
          )}</tbody></table></div>${v.grants.more ? html`<p><small>Only the first grants are listed.</small></p>` : ''}`;
  return html`<h2 id="grants">People's grants</h2>
<p><small>Each client a person signs in with holds a grant. Revoking one (you are asked first) stops its tokens at once, ends the MCP sessions it opened and cancels the approvals it was waiting for; the person can sign in again unless you also remove them from ALLOWED_USERS / ALLOWED_GROUPS.</small></p>
${body}`;
}

function callsSection(v: AdminView) {
  const f = v.filters;
  return html`<h2 id="calls">Recent calls</h2>
<form method="get" action="/admin"><fieldset><legend>Filter</legend>
<label>User <input name="user" value="${f.user ?? ''}" placeholder="id or email"></label>
<label>Tool <input name="tool" value="${f.tool ?? ''}"></label>
<label>Decision <select name="decision">${DECISIONS.map((d) => html`<option value="${d}"${f.decision === d ? ' selected' : ''}>${d || 'any'}</option>`)}</select></label>
${v.clusters.length > 1 ? html`<label>Cluster <select name="cluster">${['', ...v.clusters].map((c) => html`<option value="${c}"${f.cluster === c || (!f.cluster && !c) ? ' selected' : ''}>${c || 'any'}</option>`)}</select></label>` : ''}
<label>From (UTC) <input type="datetime-local" name="from" value="${local(f.from)}"></label>
<label>To (UTC) <input type="datetime-local" name="to" value="${local(f.to)}"></label>
<button type="submit">Apply</button></fieldset></form>
<p>Export these: <a href="/admin/audit?${v.exportQuery}&amp;format=jsonl">JSON Lines</a> · <a href="/admin/audit?${v.exportQuery}&amp;format=csv">CSV</a></p>
${callsTable(v.records)}
${v.nextPage ? html`<p><a href="/admin?${v.nextPage}">Older calls</a></p>` : ''}`;
}

function used(c: CounterRowView) {
  return c.limit
    ? html`<strong>${c.count}</strong> / ${c.limit.max} per ${c.limit.window}`
    : html`<strong>${c.count}</strong> <small class="muted">(no such limit in the policy now)</small>`;
}

function countersSection(v: AdminView) {
  const rows = v.counters.map(
    (c) =>
      html`<tr><td data-label="Scope" class="id"><code>${c.object}</code></td><td data-label="Counter"><code>${slashBreaks(c.key)}</code></td><td data-label="Used" class="nowrap">${used(c)}</td><td data-label="Resets" class="nowrap"><small>${iso(c.resetsAt)}</small></td></tr>`,
  );
  return html`<h2 id="counters">Rate-limit counters</h2>
${v.counters.length ? html`<div class="scroll"><table class="cards"><thead><tr><th scope="col">Scope</th><th scope="col">Counter</th><th scope="col">Used</th><th scope="col">Resets at (UTC)</th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p>No live counters.</p>`}
<p><small>Grant, user and guest counters of the users, grants and guests in recent calls, and the global ones; session counters live with each session.</small></p>`;
}

export function adminPage(v: AdminView) {
  return layout(
    'Proxmox MCP — admin',
    html`<h1>Proxmox MCP — admin</h1>
<nav class="top"><span>Signed in as ${v.viewer}</span> ${v.csrf === 'local' ? '(no sign-in: AUTH_MODE=none)' : html`<form method="post" action="/logout"><input type="hidden" name="csrf" value="${v.csrf}"><button type="submit">Sign out</button></form>`}</nav>
<nav class="sections" aria-label="Sections"><a href="#approvals">Approvals</a><a href="#grants">Grants</a><a href="#calls">Calls</a><a href="#counters">Counters</a><a href="#audit">Audit trail</a><a href="#policy">Policy</a><a href="/admin/activity">Activity charts</a></nav>
${v.notice ? html`<p role="status" class="notice"><strong>${v.notice}</strong></p>` : ''}
${v.policy.valid ? '' : html`<p role="alert" class="alert"><strong>The policy is invalid: every tool call is denied.</strong> <a href="#policy">See its errors.</a></p>`}
${pendingSection(v)}
${grantsSection(v)}
${callsSection(v)}
${countersSection(v)}
<h2 id="audit">Audit trail</h2>
${v.auditOn ? '' : html`<p role="alert"><strong>Auditing is off (AUDIT_ENABLED=false): new calls are not recorded.</strong></p>`}
<p>${v.stats ? html`${v.stats.count} records, oldest ${iso(v.stats.oldest_ts) || '—'}; kept ${v.stats.retention_days} days (at most ${v.stats.max_rows} records).` : 'The audit store did not answer.'} Records lost: <strong>${v.lost}</strong>.</p>
${v.notifications ? html`<p id="notifications">Approval notifications: ${v.notifications.receivers} receiver${v.notifications.receivers === 1 ? '' : 's'}; undelivered after every retry: <strong>${v.notifications.undelivered ?? 'unknown (the approvals store did not answer)'}</strong>.</p>` : ''}
<h2 id="policy">Active policy</h2>
${policyPanel(v.policy)}
<p><a href="/admin/policy">Policy console</a>: versions and their diffs, the shadow, drafts checked and replayed over recorded calls, activation and rollback.</p>`,
    true,
    ADMIN_STYLE,
  );
}
