// The web pages for people (not agents): /approvals/:id to approve or deny a call, /admin for
// administrators, /admin/audit to export the audit trail, /login and /logout. With
// AUTH_MODE=none the one local person needs no sign-in (the loopback guard is the boundary, and
// also refuses cross-site form posts by their Origin); otherwise a web session is required.

import { logLine } from '../log';
import { Hono } from 'hono';
import { GRANT_REVOKED, mayDecide, mayView, NO_SUCH_APPROVAL } from '../approvals/rules';
import type { Decider } from '../approvals/types';
import { publicOrigin, signInFor } from '../auth/config';
import type { Config } from '../config';
import { type AppBindings, oauthHelpers } from '../compose/runtime';
import type { Identity } from '../core/identity';
import { approvalPage } from './approval-page';
import { adminRoutes } from './admin-routes';
import { policyApi } from './policy-api';
import { policyConsole } from './policy-console';
import { isAdmin } from './admins';
import { beginWebLogin, safeNext } from '../auth/web-login';
import { endSession } from '../auth/web-session';
import { CALLBACK_PATH } from '../auth/idp';
import { checkPost, html, page, viewer } from './common';
import { grantExists } from '../auth/grants';

export const webRoutes = new Hono<AppBindings>();

webRoutes.get('/login', async (c) => {
  const next = safeNext(c.req.query('next'));
  const { config, stores } = c.var.runtime;
  if (config.authMode === 'none') return c.redirect(next, 302);
  const cfg = signInFor(config, c.req.raw, c.var.runtime.clock);
  return beginWebLogin(stores.kv, cfg, next, `${publicOrigin(config, c.req.raw)}${CALLBACK_PATH}`);
});

webRoutes.post('/logout', async (c) => {
  await checkPost(c, await viewer(c));
  return new Response(null, {
    status: 303,
    headers: { Location: '/', 'Set-Cookie': await endSession(c.var.runtime.stores.kv, c.req.raw) },
  });
});

function decider(config: Config, identity: Identity): Decider {
  return {
    userId: identity.userId,
    login: identity.login,
    email: identity.email,
    groups: identity.groups,
    isAdmin: isAdmin(config, identity),
  };
}

webRoutes.get('/approvals/:id', async (c) => {
  const v = await viewer(c);
  const { config, stores, clock } = c.var.runtime;
  const approval = await stores.approvals().get(c.req.param('id'));
  if (!approval) return page(404, 'No such approval', 'This approval link is not valid.');
  const who = decider(config, v.identity);
  if (!mayView(approval, who)) {
    return page(
      403,
      'Not yours to see',
      'Only the person who asked, the named approvers and administrators can see this approval.',
    );
  }
  const now = clock.now();
  const grantLive = await grantExists(stores.kv, approval.user_id, approval.grant_id);
  const check = mayDecide(approval, who, now, grantLive);
  const done = c.req.query('done');
  const clientName = await oauthHelpers(c.env)
    ?.lookupClient(approval.client_id)
    .then((client) => client?.clientName ?? null)
    .catch(() => null);
  return html(
    approvalPage({
      approval,
      clientName,
      grantLive,
      viewer: v.identity.email ?? v.identity.userId,
      cannotDecide: check.ok ? null : check.reason,
      csrf: v.csrf,
      now,
      notice:
        done === 'approve'
          ? approval.status === 'approved'
            ? 'Approved. The agent can now make this call once.'
            : `Your approval is recorded; ${approval.approvals_required - approval.approved_by.length} more needed from other people.`
          : done === 'deny'
            ? 'Denied.'
            : undefined,
    }),
  );
});

webRoutes.post('/approvals/:id', async (c) => {
  const v = await viewer(c);
  const form = await checkPost(c, v);
  const decision = form.decision === 'approve' ? 'approve' : 'deny';
  const id = c.req.param('id');
  const { config, stores, clock } = c.var.runtime;
  const now = clock.now();
  const who = decider(config, v.identity);
  const approval = await stores.approvals().get(id);
  if (!approval) return page(404, 'No such approval', 'This approval link is not valid.');
  // The grant that asked is gone (revoked, expired): the call can never be made. What it waited
  // for is cancelled, as revoking it through /admin does, and nothing is decided.
  if (
    approval.status === 'pending' &&
    mayView(approval, who) &&
    !(await grantExists(stores.kv, approval.user_id, approval.grant_id))
  ) {
    await stores
      .approvals()
      .cancelForGrant(approval.grant_id, v.identity.email ?? v.identity.userId, now)
      .catch(() => 0);
    return page(403, 'Not decided', GRANT_REVOKED);
  }
  const result = await stores.approvals().decide(id, decision, who, now);
  if (!result.ok && result.reason === NO_SUCH_APPROVAL)
    return page(404, 'No such approval', 'This approval link is not valid.');
  if (!result.ok)
    return page(403, 'Not decided', result.reason ?? 'This approval cannot be decided.');
  logLine('log', 'approval_decided', { approval_id: id, decision, by: v.identity.userId });
  const back = form.back === '/admin' ? '/admin#approvals' : `/approvals/${id}?done=${decision}`;
  return c.redirect(back, 303);
});

webRoutes.route('/admin/api/policy', policyApi);
webRoutes.route('/admin/policy', policyConsole);
webRoutes.route('/admin', adminRoutes);
