// /mcp and /sse for a caller whose identity is already known (from the OAuth grant, or the
// anonymous local user with AUTH_MODE=none): admission re-checked, the grant's use noted, then
// each request to its era. A 2026-07-28 request (the server SDK's isLegacyRequest tells: it reads
// the envelope, not the header) is served statelessly; everything else, and all of /sse, goes to
// the 2025 session's McpAgent, after checking the session belongs to this grant.

import { insufficientScope, type OAuthResourceAuth } from '@cloudflare/workers-oauth-provider';
import { DEFAULT_SCOPES, isScope } from '../core/scopes';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { publicOrigin, stillAdmitted } from '../auth/config';
import { noteGrantUse } from '../auth/grants';
import { sessionObjectName, sessionOwnership } from '../auth/sessions';
import { runtimeOf } from '../compose/runtime';
import type { AppEnv } from '../env';
import { parsedBodyOf } from '../http/mcp-body';
import { jsonRpcError } from '../http/refusal';
import { identityFromProps, identityOfToken } from '../core/identity';
import { ProxmoxMcp } from './legacy/agent';
import { serveModern } from './modern/handler';

/** Headers 2026 clients send, which a browser's preflight must be allowed to send too. */
const CORS_HEADERS =
  'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID';
const streamable = ProxmoxMcp.serve('/mcp', { corsOptions: { headers: CORS_HEADERS } });
const sse = ProxmoxMcp.serveSSE('/sse', { corsOptions: { headers: CORS_HEADERS } });

export const mcpApi = {
  async fetch(
    request: Request,
    env: AppEnv,
    ctx: ExecutionContext & { props?: unknown; auth?: OAuthResourceAuth },
  ): Promise<Response> {
    const runtime = runtimeOf(env);
    // The scopes are the token's, as the OAuth library verified it (a refreshed token may hold
    // fewer than its grant); without sign-in (AUTH_MODE=none) the local person's.
    const identity = ctx.auth
      ? identityOfToken(ctx.props, ctx.auth.scope)
      : identityFromProps(ctx.props);
    if (!identity)
      return json(401, {
        error: 'invalid_token',
        message: 'This token carries no usable identity; sign in again.',
      });
    if (!stillAdmitted(runtime.config, identity)) {
      return json(403, {
        error: 'access_denied',
        message: `${identity.email ?? identity.userId} is no longer allowed to use this server.`,
      });
    }
    // A token holding none of the tools' scopes (a grant from before scopes, or one made for the
    // policy API) reaches nothing: a client is told which to ask for, and signs in again.
    if (ctx.auth && !identity.scopes.some(isScope))
      return insufficientScope(
        ctx.auth,
        [...DEFAULT_SCOPES],
        "This token holds none of this server's tool scopes: sign in again and tick what the client may do.",
      );
    noteGrantUse(runtime.stores.kv, identity.grantId, (p) => ctx.waitUntil(p), runtime.clock.now());
    const origin = publicOrigin(runtime.config, request);
    const url = new URL(request.url);
    // The entry has read and parsed the message (mcp-body.ts): neither check reads the body again.
    const message = parsedBodyOf(request);
    if (url.pathname === '/mcp' && !(await isLegacyRequest(request, message)))
      return serveModern(request, message, runtime, identity, origin, ctx, ctx.auth);
    const session = sessionObjectName(request, url);
    const owned = session ? await sessionOwnership(runtime.stores, session, identity) : 'yours';
    if (owned === 'unavailable') {
      return json(
        503,
        jsonRpcError(-32001, 'The session could not be checked in time; try again.'),
      );
    }
    if (owned === 'not_found') return json(404, jsonRpcError(-32001, 'Session not found'));
    // The session keeps its public origin, to link approval pages.
    ctx.props = { ...identity, publicOrigin: origin };
    if (url.pathname === '/mcp') return streamable.fetch(request, env, ctx);
    if (url.pathname === '/sse' || url.pathname.startsWith('/sse/'))
      return sse.fetch(request, env, ctx);
    return json(404, { error: 'not_found', message: 'Try /mcp or /sse.' });
  },
};

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
