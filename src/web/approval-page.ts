// The approval page: the exact call (tool, Proxmox parameters, arguments), who asked and when,
// and Approve / Deny when the viewer may decide. Plain HTML, escaped, no JavaScript.

import { html } from 'hono/html';
import { approvalState, GRANT_REVOKED } from '../approvals/rules';
import type { Approval } from '../approvals/types';
import { layout } from '../auth/pages';
import { approvalTitle, relativeTime } from './approval-title';

export interface ApprovalView {
  approval: Approval;
  /** Whether the grant that asked still exists (a revoked grant's call can never be made). */
  grantLive: boolean;
  viewer: string;
  /** Why the viewer may not decide, or null when they may. */
  cannotDecide: string | null;
  csrf: string;
  now: number;
  /** A message after deciding. */
  notice?: string;
  /** The name the client registered with (unverified), when known. */
  clientName?: string | null;
}

export function approvalPage(view: ApprovalView) {
  const a = view.approval;
  const state = approvalState(a, view.now, view.grantLive);
  const status = state === 'revoked' ? 'grant revoked' : state;
  const params =
    a.upstream ??
    Object.fromEntries(
      Object.entries(a.args).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
  const rows = Object.entries(params).map(
    ([k, v]) =>
      html`<tr><th scope="row"><code>${k}</code></th><td><code class="uri">${v}</code></td></tr>`,
  );
  const decision =
    status === 'pending' && !view.cannotDecide
      ? html`<form method="post" action="/approvals/${a.id}">
<input type="hidden" name="csrf" value="${view.csrf}">
<div class="actions">
<button class="primary" type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`
      : status === 'pending'
        ? html`<p role="alert">${view.cannotDecide}</p>`
        : state === 'revoked'
          ? html`<p role="alert">${GRANT_REVOKED}</p>`
          : '';
  const title = approvalTitle(a.tool, a.args);
  const minute = (ms: number): string => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
  return layout(
    `${title}?`,
    html`<h1 id="approval-title">${title}?</h1>
<p><small>Tool <code>${a.tool}</code></small></p>
${view.notice ? html`<p role="status"><strong>${view.notice}</strong></p>` : ''}
<div class="box">
<p><strong>${a.user_email ?? a.user_id}</strong> asked ${relativeTime(a.created_at, view.now)} (${minute(a.created_at)} UTC), through ${view.clientName ? html`<strong>${view.clientName}</strong> <small>(a name the client gave itself; id <code>${a.client_id}</code>)</small>` : html`client <code>${a.client_id}</code>`}.</p>
<p>${a.reason}</p>
<p id="approval-status">Status: <strong>${status}</strong>${status === 'pending' ? html` — expires ${relativeTime(a.expires_at, view.now)} (${minute(a.expires_at)} UTC)` : ''}${a.decided_by ? html` — by ${a.decided_by}` : ''}</p>
${
  a.approvals_required > 1
    ? html`<p id="quorum">Approvals: <strong>${a.approved_by.length} of ${a.approvals_required}</strong>${a.approved_by.length ? html` — by ${a.approved_by.map((g) => g.by).join(', ')}` : ''}. ${a.approvals_required} different people must approve (the person who asked does not count); one denial ends it.</p>`
    : ''
}
</div>
<h2>${a.upstream ? 'Proxmox parameters' : 'Arguments'}</h2>
<div style="overflow-x:auto"><table><tbody>${rows}</tbody></table></div>
<p><small>Approving allows this exact call once, from the same client, until the approval expires. You are signed in as ${view.viewer}.</small></p>
${decision}`,
  );
}
