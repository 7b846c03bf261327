// The interactive part of the authorization server (everything else — metadata, /register,
// /token — is the OAuth library's): /authorize shows the consent page; approving sends the
// browser to the upstream identity provider; /oauth/callback checks who signed in, admits them
// or not, and completes the grant. CSRF and browser binding come from the library's consent and
// upstream transactions (a single-use handle or state bound to a __Host- cookie).

import { logLine } from '../log';
import {
  AuthorizationError,
  CimdFetchError,
  authorizationErrorRedirect,
  type OAuthHelpers,
} from '@cloudflare/workers-oauth-provider';
import { Hono, type Context } from 'hono';
import { type AppBindings, oauthHelpers, type Runtime } from '../compose/runtime';
import { refusedOutright } from '../policy/evaluate';
import { TOOLS } from '../tools';
import { admit } from './admission';
import { type AuthConfig, publicOrigin, signInFor } from './config';
import { DEV_LOGIN_PATH, devIdentity } from './idp-dev';
import { CALLBACK_PATH, IdpError, type UpstreamData } from './idp';
import { consentPage, devLoginPage, messageResponse, type ScopeOffer } from './pages';
import { own } from '../core/own';
import { isScope, POLICY_SCOPES, preTicked, SCOPE_INFO, SCOPES } from '../core/scopes';
import { finishWebLogin } from './web-login';
import { readForm } from '../http/form';
import { htmlResponse } from '../http/html';

type Ctx = Context<AppBindings>;

export const authRoutes = new Hono<AppBindings>();

/** The OAuth library's helpers: every route here is served through it. */
function oauthOf(c: Ctx): OAuthHelpers {
  const helpers = oauthHelpers(c.env);
  if (!helpers) throw new Error('the sign-in routes are served without the OAuth provider');
  return helpers;
}

function signIn(c: Ctx): AuthConfig {
  const { config, clock } = c.var.runtime;
  return signInFor(config, c.req.raw, clock);
}

authRoutes.get('/authorize', async (c) => {
  signIn(c); // nobody is offered consent where nobody could then sign in
  const oauth = oauthOf(c);
  return handleAuthErrors(c, async () => {
    const request = await oauth.parseAuthRequest(c.req.raw);
    const details = await oauth.describeConsent(request);
    const consent = await oauth.beginConsent(request);
    const { offers, unreadable } = await scopesOffered(c.var.runtime, request.scope);
    const body = await consentPage(details, consent.handle, offers, 'Proxmox VE', unreadable);
    // The library's headers (its consent cookie) go out with the page's own.
    return htmlResponse(body, 200, consent.headers);
  });
});

authRoutes.post('/authorize', async (c) => {
  const cfg = signIn(c);
  const oauth = oauthOf(c);
  const form = await readForm(c.req.raw);
  if (!form)
    return messageResponse(
      400,
      'This form could not be read',
      'Send the consent form from its page (application/x-www-form-urlencoded).',
    );
  return handleAuthErrors(c, async () => {
    const handle = String(form.get('handle') ?? '');
    // The grant holds what the person ticked, whatever the client asked for.
    const ticked = [...new Set(form.getAll('scope').map(String))].filter(
      (s) => isScope(s) || POLICY_SCOPES.includes(s),
    );
    if (form.get('decision') !== 'approve' || ticked.length === 0) {
      const denied = await oauth.denyConsent(
        c.req.raw,
        handle,
        ticked.length === 0 && form.get('decision') === 'approve'
          ? { description: 'The person ticked no scope.' }
          : {},
      );
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const approved = await oauth.approveConsent(c.req.raw, handle, { scope: ticked });
    const data = await cfg.idp.prepare();
    const { state, headers } = await oauth.beginUpstream(approved.request, {
      data,
      headers: approved.headers,
    });
    headers.set('Location', await cfg.idp.authorizeUrl(data, state, callbackUrl(c)));
    return new Response(null, { status: 302, headers });
  });
});

authRoutes.get(DEV_LOGIN_PATH, async (c) => {
  const cfg = signIn(c);
  if (cfg.idp.kind !== 'dev') return c.notFound();
  return htmlResponse(await devLoginPage(c.req.query('state') ?? '', CALLBACK_PATH), 200);
});

authRoutes.get(CALLBACK_PATH, async (c) => {
  const cfg = signIn(c);
  const oauth = oauthOf(c);
  const url = new URL(c.req.url);
  if (cfg.idp.kind === 'dev') {
    // Check the typed name before the single-use state is spent, so a typo can be corrected.
    try {
      devIdentity(url.searchParams);
    } catch (err) {
      if (err instanceof IdpError)
        return htmlResponse(
          await devLoginPage(url.searchParams.get('state') ?? '', CALLBACK_PATH, err.message),
          400,
        );
      throw err;
    }
  }
  return handleAuthErrors(c, async () => {
    // The same callback serves browser sign-ins to the admin and approval pages.
    let web;
    try {
      web = await finishWebLogin(c.var.runtime.stores.kv, cfg, c.req.raw, callbackUrl(c));
    } catch (err) {
      if (!(err instanceof IdpError)) throw err;
      return messageResponse(401, 'Sign-in failed', err.message);
    }
    if (web.kind === 'signed_in') return web.response;
    if (web.kind === 'refused') return messageResponse(web.status, web.title, web.message);
    const { request, data, headers } = await oauth.finishUpstream<UpstreamData>(c.req.raw);
    if (url.searchParams.has('error')) {
      headers.set('Location', authorizationErrorRedirect(request, 'access_denied'));
      return new Response(null, { status: 302, headers });
    }
    let identity;
    try {
      identity = await cfg.idp.finish(c.req.raw, data ?? {}, callbackUrl(c));
    } catch (err) {
      if (!(err instanceof IdpError)) throw err;
      logAuth('sign_in_failed', { client: request.clientId, reason: err.message });
      return messageResponse(401, 'Sign-in failed', err.message, undefined, headers);
    }
    const admission = admit(identity, cfg.allowedUsers, cfg.allowedGroups, cfg.idp.kind === 'dev');
    if (!admission.admitted) {
      logAuth('sign_in_refused', { user: identity.userId, client: request.clientId });
      const who = identity.email ?? identity.login ?? identity.userId;
      return messageResponse(
        403,
        'Not allowed',
        `${who} may not use this server. ${admission.reason}`,
        'No access was granted. Ask the administrator to add you to ALLOWED_USERS or ALLOWED_GROUPS.',
        headers,
      );
    }
    const props = {
      userId: identity.userId,
      ...(identity.email ? { email: identity.email } : {}),
      ...(identity.name ? { name: identity.name } : {}),
      ...(identity.login ? { login: identity.login } : {}),
      groups: identity.groups,
      clientId: request.clientId,
    };
    const { redirectTo } = await oauth.completeAuthorization({
      request,
      userId: identity.userId,
      metadata: { login: identity.login ?? null, email: identity.email ?? null, idp: cfg.idp.kind },
      scope: request.scope,
      props,
    });
    logAuth('sign_in', { user: identity.userId, client: request.clientId, idp: cfg.idp.kind });
    headers.set('Location', redirectTo);
    return new Response(null, { status: 302, headers });
  });
});

/** Every scope, ticked as preTicked says, with the tools the policy in force lets through in it. */
async function scopesOffered(
  runtime: Runtime,
  requested: readonly string[],
): Promise<{ offers: ScopeOffer[]; unreadable: boolean }> {
  const active = await runtime.policy.active();
  const ticked = preTicked(requested);
  const offers = SCOPES.map((scope): ScopeOffer => {
    const inScope = TOOLS.filter((t) => t.scope === scope);
    // A policy that cannot be read lets nothing through (the page says so).
    const through = active.ok ? inScope.filter((t) => !refusedOutright(active.policy, t.name)) : [];
    return {
      scope,
      label: SCOPE_INFO[scope].label,
      allows: SCOPE_INFO[scope].allows,
      ticked: ticked.includes(scope),
      asked: requested.includes(scope),
      tools: through.map((t) => ({
        title: t.annotations.title,
        approval: active.ok && own(active.policy.doc.tools, t.name)?.action === 'require_approval',
      })),
      refused: inScope.length - through.length,
      // What is never ticked for the person is what reaches furthest.
      ...(SCOPE_INFO[scope].preTicked
        ? {}
        : { warn: 'Tick it only for a client you trust with that much.' }),
    };
  });
  return { offers, unreadable: !active.ok };
}

function callbackUrl(c: Ctx): string {
  return `${publicOrigin(c.var.runtime.config, c.req.raw)}${CALLBACK_PATH}`;
}

/** The library's refusals: redirect to the client only when it validated the redirect URI. */
async function handleAuthErrors(_c: Ctx, run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AuthorizationError && err.redirectTo)
      return Response.redirect(err.redirectTo, 302);
    if (err instanceof AuthorizationError)
      return messageResponse(
        400,
        'This sign-in cannot continue',
        err.description ?? 'The request is invalid.',
        'Start again from your app.',
      );
    if (err instanceof CimdFetchError)
      return messageResponse(
        400,
        'This app could not be verified',
        'Its client metadata document could not be fetched.',
      );
    throw err;
  }
}

function logAuth(event: string, fields: Record<string, string>): void {
  logLine('log', event, fields);
}
