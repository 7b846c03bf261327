// Signing in to the web pages (admin, approvals) with the same identity provider as MCP clients,
// through the same callback URL: /login keeps the provider's per-sign-in secrets in KV under the
// SHA-256 of a random state, binds the state to this browser with a __Host- cookie, and sends
// the browser to the provider; the callback recognises a web sign-in by that KV entry.

import { logLine } from '../log';
import type { AuthConfig } from './config';
import { admit } from './admission';
import type { UpstreamData } from './idp';
import type { Identity } from '../core/identity';
import { randomToken, sha256Hex } from '../encoding';
import { createSession, readCookie } from './web-session';

const LOGIN_TTL_S = 600;
const COOKIE_PREFIX = '__Host-pve-mcp-login-';

interface LoginTransaction {
  data: UpstreamData;
  next: string;
}

/** Only same-site paths: never an absolute URL an attacker could send the browser to. */
export function safeNext(next: string | null | undefined): string {
  return next && /^\/(?!\/)[A-Za-z0-9/_\-.?=&%]*$/.test(next) ? next : '/admin';
}

export async function beginWebLogin(
  kv: KVNamespace,
  cfg: AuthConfig,
  next: string,
  callbackUrl: string,
): Promise<Response> {
  const state = randomToken(32);
  const hash = await sha256Hex(state);
  const data = await cfg.idp.prepare();
  const transaction: LoginTransaction = { data, next: safeNext(next) };
  await kv.put(`weblogin:${hash}`, JSON.stringify(transaction), {
    expirationTtl: LOGIN_TTL_S,
  });
  const headers = new Headers({
    'Cache-Control': 'no-store',
    Location: await cfg.idp.authorizeUrl(data, state, callbackUrl),
  });
  headers.append(
    'Set-Cookie',
    `${COOKIE_PREFIX}${hash.slice(0, 16)}=${hash}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${LOGIN_TTL_S}`,
  );
  return new Response(null, { status: 302, headers });
}

export type WebLoginResult =
  | { kind: 'not_web' }
  | { kind: 'refused'; status: number; title: string; message: string }
  | { kind: 'signed_in'; response: Response };

/** At the shared callback: finishes a web sign-in, or says this state is not one. */
export async function finishWebLogin(
  kv: KVNamespace,
  cfg: AuthConfig,
  request: Request,
  callbackUrl: string,
): Promise<WebLoginResult> {
  const state = new URL(request.url).searchParams.get('state');
  if (!state) return { kind: 'not_web' };
  const hash = await sha256Hex(state);
  const stored = await kv.get(`weblogin:${hash}`);
  if (!stored) return { kind: 'not_web' };
  const cookieName = `${COOKIE_PREFIX}${hash.slice(0, 16)}`;
  if (readCookie(request, cookieName) !== hash) {
    return {
      kind: 'refused',
      status: 400,
      title: 'This sign-in cannot continue',
      message: 'It was not started in this browser. Start again.',
    };
  }
  await kv.delete(`weblogin:${hash}`);
  const transaction = JSON.parse(stored) as LoginTransaction;
  if (new URL(request.url).searchParams.has('error')) {
    return {
      kind: 'refused',
      status: 401,
      title: 'Sign-in cancelled',
      message: 'The identity provider did not sign you in.',
    };
  }
  const upstream = await cfg.idp.finish(request, transaction.data, callbackUrl);
  const admission = admit(upstream, cfg.allowedUsers, cfg.allowedGroups, cfg.idp.kind === 'dev');
  if (!admission.admitted) {
    const who = upstream.email ?? upstream.login ?? upstream.userId;
    return {
      kind: 'refused',
      status: 403,
      title: 'Not allowed',
      message: `${who} may not use this server. ${admission.reason}`,
    };
  }
  const identity: Identity = {
    userId: upstream.userId,
    ...(upstream.login ? { login: upstream.login } : {}),
    ...(upstream.email ? { email: upstream.email } : {}),
    ...(upstream.name ? { name: upstream.name } : {}),
    groups: upstream.groups,
    clientId: 'web',
    grantId: 'web',
    // A browser session holds no token: no scope (it reaches pages, never tools).
    scopes: [],
  };
  const { cookie } = await createSession(kv, identity);
  const headers = new Headers({ 'Cache-Control': 'no-store', Location: transaction.next });
  headers.append('Set-Cookie', cookie);
  headers.append('Set-Cookie', `${cookieName}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0`);
  logLine('log', 'web_sign_in', { user: identity.userId });
  return { kind: 'signed_in', response: new Response(null, { status: 302, headers }) };
}
