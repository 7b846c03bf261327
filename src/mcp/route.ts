// /mcp and /sse for a caller whose identity is already known (from the OAuth grant, or the
// anonymous local user with AUTH_MODE=none): admission re-checked, the grant's use noted, then
// each request to its era. A 2026-07-28 request (the server SDK's isLegacyRequest tells: it reads
// the envelope, not the header) is served statelessly; everything else, and all of /sse, goes to
// the 2025 session's McpAgent, after checking the session belongs to this grant.
//
// A 2026-07-28 request whose token this isolate has seen the OAuth library accept does not wait
// for the library before its work starts: the library confirms the token meanwhile, the call
// acts for nobody before the answer (CallHost.admitted), and the reply leaves only after it. A
// token no longer valid gets the library's own 401. See ../auth/remembered-tokens.ts.

import type { TokenSummary } from '@cloudflare/workers-oauth-provider';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { publicOrigin, stillAdmitted } from '../auth/config';
import { noteGrantUse } from '../auth/grants';
import { forgetToken, recallToken, rememberedKey, rememberToken } from '../auth/remembered-tokens';
import { sessionObjectName, sessionOwnership } from '../auth/sessions';
import { ToolFailure } from '../calls/tool-spec';
import type { AppEnv } from '../env';
import { parsedBodyOf } from '../http/mcp-body';
import { identityFromProps } from '../identity';
import { STORE_DEADLINE_MS, withDeadline } from '../stores/deadline';
import { ProxmoxMcp } from './legacy/agent';
import { serveModern } from './modern/handler';

/** Headers 2026 clients send, which a browser's preflight must be allowed to send too. */
const CORS_HEADERS = 'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID';
const streamable = ProxmoxMcp.serve('/mcp', { corsOptions: { headers: CORS_HEADERS } });
const sse = ProxmoxMcp.serveSSE('/sse', { corsOptions: { headers: CORS_HEADERS } });

type McpContext = ExecutionContext & { props?: unknown; auth?: { token?: unknown; expiresAt?: unknown } };

/** A token the OAuth layer has already confirmed for this request. */
const CONFIRMED = Promise.resolve();

/** The OAuth library's API handler: it calls this once it has accepted the request's token. */
export const mcpApi = {
  fetch(request: Request, env: AppEnv, ctx: McpContext): Promise<Response> {
    return serveMcp(request, env, ctx, ctx.props, CONFIRMED);
  },
};

/**
 * Serves a 2026-07-28 request on a token this isolate remembers, while the library confirms it;
 * null when the request is not such a one (the caller then hands it to the library as usual).
 * Browsers (requests with an Origin) always go through the library, which also adds their CORS
 * headers. `unwrapToken` is the library's (its helpers'); `libraryAnswer` is the library's own
 * answer for the request, asked only when the token turns out to be no longer valid.
 */
export async function serveRemembered(
  request: Request,
  env: AppEnv,
  ctx: ExecutionContext,
  origin: string,
  unwrapToken: (token: string) => Promise<TokenSummary | null>,
  libraryAnswer: () => Promise<Response>,
): Promise<Response | null> {
  if (request.method !== 'POST' || request.headers.has('origin') || new URL(request.url).pathname !== '/mcp') return null;
  const token = bearerToken(request);
  const message = parsedBodyOf(request);
  if (!token || message === undefined || (await isLegacyRequest(request, message))) return null;
  const key = await rememberedKey(origin, token);
  const known = recallToken(key);
  if (!known) return null;
  const confirmed = withDeadline(unwrapToken(token), STORE_DEADLINE_MS, 'token check').then(
    (summary) => summary !== null && summary.grantId === known.grantId && summary.expiresAt >= Math.floor(Date.now() / 1000),
  );
  const admitted = confirmed.then(
    (valid) => {
      if (!valid) throw new ToolFailure('unauthorized', 'This access token is no longer valid (revoked or expired); sign in again.');
    },
    () => {
      throw new ToolFailure('unavailable', 'The access token could not be checked in time, so nothing was done. Try again shortly.');
    },
  );
  admitted.catch(() => undefined);
  const response = await serveMcp(request, env, ctx, known.props, admitted, true);
  const verdict = await confirmed.catch(() => 'unchecked' as const);
  if (verdict === true) return response;
  await response.body?.cancel().catch(() => undefined);
  if (verdict === 'unchecked') {
    return json(503, { jsonrpc: '2.0', error: { code: -32001, message: 'The access token could not be checked in time; try again.' }, id: null });
  }
  forgetToken(key);
  return libraryAnswer();
}

/**
 * `admitted` settles when the token is confirmed (at once on the library's path); `modern` is
 * set when the caller already knows the request is a 2026-07-28 one.
 */
async function serveMcp(request: Request, env: AppEnv, ctx: McpContext, props: unknown, admitted: Promise<void>, modern = false): Promise<Response> {
  const identity = identityFromProps(props);
  if (!identity) return json(401, { error: 'invalid_token', message: 'This token carries no usable identity; sign in again.' });
  if (!stillAdmitted(env, identity)) {
    return json(403, { error: 'access_denied', message: `${identity.email ?? identity.userId} is no longer allowed to use this server.` });
  }
  admitted.then(() => noteGrantUse(env, identity.grantId, (p) => ctx.waitUntil(p)), () => undefined);
  const origin = publicOrigin(env, request);
  const url = new URL(request.url);
  // The entry has read and parsed the message (mcp-body.ts): neither check reads the body again.
  const message = parsedBodyOf(request);
  if (modern || (url.pathname === '/mcp' && !(await isLegacyRequest(request, message)))) {
    await rememberAccepted(request, ctx, origin, props, identity.grantId);
    return serveModern(request, message, env, identity, origin, ctx, admitted);
  }
  const session = sessionObjectName(request, url);
  const owned = session ? await sessionOwnership(env, session, identity) : 'yours';
  if (owned === 'unavailable') {
    return json(503, { jsonrpc: '2.0', error: { code: -32001, message: 'The session could not be checked in time; try again.' }, id: null });
  }
  if (owned === 'not_found') return json(404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
  // The session keeps its public origin, to link approval pages.
  ctx.props = { ...identity, publicOrigin: origin };
  if (url.pathname === '/mcp') return streamable.fetch(request, env, ctx);
  if (url.pathname === '/sse' || url.pathname.startsWith('/sse/')) return sse.fetch(request, env, ctx);
  return json(404, { error: 'not_found', message: 'Try /mcp or /sse.' });
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/**
 * Remembers a token the library has just accepted for a 2026-07-28 request (it set ctx.auth), so
 * this client's next requests start sooner. Tokens of other requests are not kept.
 */
async function rememberAccepted(request: Request, ctx: McpContext, origin: string, props: unknown, grantId: string): Promise<void> {
  const token = ctx.auth?.token;
  const expiresAt = ctx.auth?.expiresAt;
  if (typeof token !== 'string' || typeof expiresAt !== 'number' || bearerToken(request) !== token || !props || typeof props !== 'object') return;
  rememberToken(await rememberedKey(origin, token), { props: Object.freeze({ ...(props as Record<string, unknown>) }), grantId, expiresAt });
}

/** The bearer token, read as strictly as the OAuth library reads it. */
function bearerToken(request: Request): string | null {
  const match = /^Bearer[\t ]+([^\s,]+)$/i.exec(request.headers.get('authorization') ?? '');
  return match ? match[1]! : null;
}
