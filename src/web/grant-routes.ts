// /admin/grants/revoke: asks before it revokes a grant. A GET, or a POST without confirm=yes,
// shows the question (revoke-page.ts) and changes nothing; only the question's own form
// (POST, the session's CSRF token, confirm=yes) revokes, through auth/grants.ts.

import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import { Refusal } from '../http/refusal';
import { Hono, type Context } from 'hono';
import { findGrant, type GrantRow, revokeGrant } from '../auth/grants';
import { type AppBindings, oauthHelpers } from '../compose/runtime';
import { logLine } from '../log';
import { adminViewer, checkPost, html, type Viewer } from './common';
import { revokePage } from './revoke-page';

type Ctx = Context<AppBindings>;

export const grantRoutes = new Hono<AppBindings>();

/** The grant a revoke form names, as listed; without one, the page that says why is thrown. */
async function grantNamed(
  c: Ctx,
  form: Record<string, string | undefined>,
): Promise<{ oauth: OAuthHelpers; grant: GrantRow }> {
  const oauth = oauthHelpers(c.env);
  if (!oauth)
    throw Refusal.page(
      400,
      'Nothing to revoke',
      'Sign-in is off (AUTH_MODE=none): there are no grants.',
    );
  const user = form.user ?? '';
  const grantId = form.grant ?? '';
  if (!user || !/^[A-Za-z0-9_-]{1,128}$/.test(grantId))
    throw Refusal.page(400, 'Nothing to revoke', 'The form names no grant.');
  const grant = await findGrant(c.var.runtime.stores, oauth, user, grantId);
  if (!grant)
    throw Refusal.page(
      404,
      'No such grant',
      'This grant does not exist: it may have been revoked already.',
    );
  return { oauth, grant };
}

/** The question: whose grant, which client, what revoking does. Changes nothing. */
async function askToRevoke(c: Ctx, v: Viewer, grant: GrantRow): Promise<Response> {
  const { stores, clock } = c.var.runtime;
  const pending = await stores
    .approvals()
    .pending(clock.now())
    .then((all) => all.filter((a) => a.grant_id === grant.grantId).length)
    .catch(() => null);
  return html(revokePage({ grant, csrf: v.csrf, pending }));
}

grantRoutes.get('/revoke', async (c) => {
  const v = await adminViewer(c);
  const named = await grantNamed(c, { user: c.req.query('user'), grant: c.req.query('grant') });
  return askToRevoke(c, v, named.grant);
});

grantRoutes.post('/revoke', async (c) => {
  const v = await adminViewer(c);
  const form = await checkPost(c, v);
  const named = await grantNamed(c, form);
  // Only the question's own form says confirm=yes; any other post is asked the question first.
  if (form.confirm !== 'yes') return askToRevoke(c, v, named.grant);
  const { userId: user, grantId: grant } = named.grant;
  const runtime = c.var.runtime;
  const result = await revokeGrant(runtime.stores, named.oauth, user, grant, {
    who: v.identity.email ?? v.identity.userId,
    now: runtime.clock.now(),
  });
  logLine('log', 'grant_revoked', {
    grant,
    user,
    by: v.identity.userId,
    sessions_ended: result.ended,
    sessions_unreachable: result.unreachable,
    approvals_cancelled: result.cancelled,
  });
  const cancelled = result.cancelled ? `&cancelled=${result.cancelled}` : '';
  return c.redirect(`/admin?revoked=${result.ended}${cancelled}#grants`, 303);
});
