// The approval page, read as a decision: what is asked in words ("Destroy VM 104 (win11-lab) on
// pve2?"), who asked through which client and when it expires, warnings, what the call would
// hit (the blast radius read when it was asked), its arguments in words, what they hide from the
// viewer and why, the exact Proxmox request, and Approve / Deny when the viewer may decide. Plain
// HTML, escaped, no JavaScript.

import { html } from 'hono/html';
import { approvalState, GRANT_REVOKED } from '../approvals/rules';
import type { Approval } from '../approvals/types';
import { layout } from '../auth/pages';
import { approvalTitle, relativeTime } from '../core/approval-title';
import { blastGuestLabel, blastRadiusRows } from '../proxmox/blast-radius-text';
import { hiddenFields } from '../audit/hidden-fields';
import { argsInWords } from './args-in-words';

/** The decision bar: at the window's foot while the page scrolls above it. */
const APPROVAL_STYLE = `
html{scroll-padding-bottom:7rem}
form.decision{position:sticky;bottom:0;background:#fff;border-top:1px solid #ddd;padding:.5rem 0 .75rem;margin-top:1rem}
form.decision p{margin:0 0 .25rem;font-size:.92rem}
form.decision .actions{margin-top:.25rem}`;

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
  const words = argsInWords(a.tool, a.args).map(
    (w) =>
      html`<tr><th scope="row">${w.name}</th><td><strong class="uri">${w.value}</strong>${w.about ? html`<br><small>${w.about}</small>` : ''}</td></tr>`,
  );
  const quorum =
    a.approvals_required > 1
      ? html`Approvals: <strong>${a.approved_by.length} of ${a.approvals_required}</strong>${a.approved_by.length ? html` — by ${a.approved_by.map((g) => g.by).join(', ')}` : ''}`
      : '';
  // The decision stays in view at the foot of the window however long the page (sticky in
  // <main>, which holds all of it), with the quorum state beside the buttons.
  const decision =
    status === 'pending' && !view.cannotDecide
      ? html`<form method="post" action="/approvals/${a.id}" class="decision" aria-label="Decision">
<input type="hidden" name="csrf" value="${view.csrf}">
${quorum ? html`<p id="decision-quorum">${quorum}</p>` : ''}
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
  // What the arguments hide from the person deciding (a call that hides what it is judged by
  // never gets this far: ../audit/hidden-fields.ts).
  const hidden = hiddenFields(a.args);
  const hiddenBox = hidden.length
    ? html`<div class="box" id="hidden-values"><p><strong>Hidden from you</strong> (shown as <code>[redacted]</code> or cut below):</p>
<ul>${hidden.map((h) => html`<li><code>${h.field}</code>: ${h.why}</li>`)}</ul></div>`
    : '';
  const radius = a.blast_radius ?? null;
  const title = approvalTitle(a.tool, a.args, radius?.guest.name);
  const touches = radius
    ? html`<h2>What it touches</h2>
${radius.warnings.length ? html`<div class="box warn" role="alert" id="warnings">${radius.warnings.map((w) => html`<p><strong>Warning:</strong> ${w}</p>`)}</div>` : ''}
<p>${blastGuestLabel(radius)}, as read ${relativeTime(Date.parse(radius.read_at), view.now)}:</p>
<div style="overflow-x:auto"><table id="blast-radius"><tbody>${blastRadiusRows(
        radius,
        view.now,
      ).map(
        (r) =>
          html`<tr data-fact="${r.fact}"${r.unreadable ? html` class="unreadable"` : ''}><th scope="row">${r.label}</th><td class="uri">${r.unreadable ? html`<em>${r.value}</em>` : r.value}</td></tr>`,
      )}</tbody></table></div>`
    : '';
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
    ? html`<p id="quorum">${quorum}. ${a.approvals_required} different people must approve (the person who asked does not count); one denial ends it.</p>`
    : ''
}
</div>
${touches}
${words.length ? html`<h2>What it asks</h2><div style="overflow-x:auto"><table id="arguments"><tbody>${words}</tbody></table></div>` : ''}
${hiddenBox}
<details><summary>${a.upstream ? 'The exact Proxmox request' : 'The exact arguments'}</summary>
<div style="overflow-x:auto"><table id="request"><tbody>${rows}</tbody></table></div></details>
<p><small>Approving allows this exact call once, from the same client, until the approval expires. You are signed in as ${view.viewer}.</small></p>
${decision}`,
    false,
    APPROVAL_STYLE,
  );
}
