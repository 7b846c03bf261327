// The question before a grant is revoked: whose grant, through which client, since when, and
// what revoking it does. Its form is what revokes (POST, the session's CSRF token, confirm=yes);
// opening this page changes nothing. Plain HTML, no script, so it works under the page CSP.

import { html } from 'hono/html';
import type { GrantRow } from '../auth/grants';
import { layout } from '../auth/pages';
import { iso } from './admin-calls';
import { ADMIN_STYLE } from './admin-style';

export interface RevokeView {
  grant: GrantRow;
  csrf: string;
  /** Approvals the grant is still waiting for (they are cancelled with it); null: unknown. */
  pending: number | null;
}

export function revokePage(v: RevokeView) {
  const g = v.grant;
  return layout(
    `Revoke ${g.clientName} for ${g.who}?`,
    html`<h1>Revoke ${g.clientName} for ${g.who}?</h1>
<div class="box warn">
<dl class="facts">
<dt>Person</dt><dd>${g.who}${g.who !== g.userId ? html` <small>(<code class="uri">${g.userId}</code>)</small>` : ''}</dd>
<dt>Client</dt><dd>${g.clientName} <small>(<code class="uri">${g.clientId}</code>)</small></dd>
<dt>Grant</dt><dd><code class="uri">${g.grantId}</code>, created ${iso(g.createdAt)}, last used ${iso(g.lastUsed) || 'never'}</dd>
</dl>
<p>Its tokens stop working at once, the MCP sessions it opened end, and ${v.pending === null ? 'the approvals it is waiting for are cancelled' : v.pending === 0 ? 'no approvals are waiting for it' : html`<strong>${v.pending} pending approval${v.pending === 1 ? '' : 's'}</strong> of it ${v.pending === 1 ? 'is' : 'are'} cancelled`}. ${g.who} can sign in again unless you also remove them from ALLOWED_USERS / ALLOWED_GROUPS.</p>
</div>
<form method="post" action="/admin/grants/revoke">
<input type="hidden" name="csrf" value="${v.csrf}"><input type="hidden" name="user" value="${g.userId}"><input type="hidden" name="grant" value="${g.grantId}"><input type="hidden" name="confirm" value="yes">
<div class="actions">
<button class="primary" type="submit">Revoke this grant</button>
<a href="/admin#grants">Cancel</a>
</div>
</form>`,
    false,
    ADMIN_STYLE,
  );
}
