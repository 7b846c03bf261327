// The MCP endpoints behind authentication: /mcp (streamable HTTP) and /sse (+ /sse/message).
// Called with the caller's identity in ctx.props (from the OAuth grant, or the anonymous local
// user with AUTH_MODE=none). A session belongs to the grant that opened it: a request naming
// someone else's session is answered as if the session did not exist.

import { publicOrigin, stillAdmitted } from '../auth/config';
import { noteGrantUse } from '../auth/grants';
import type { AppEnv } from '../env';
import { identityFromProps, type Identity } from '../identity';
import { timedStub } from '../stores/deadline';
import { ProxmoxMcp } from './agent';

const streamable = ProxmoxMcp.serve('/mcp');
const sse = ProxmoxMcp.serveSSE('/sse');

/** Sessions already checked in this isolate, by DO name → owning grant. Owners never change. */
const owners = new Map<string, string>();
const MAX_OWNERS = 10_000;

export const mcpApi = {
  async fetch(request: Request, env: AppEnv, ctx: ExecutionContext & { props?: unknown }): Promise<Response> {
    const identity = identityFromProps(ctx.props);
    if (!identity) return json(401, { error: 'invalid_token', message: 'This token carries no usable identity; sign in again.' });
    if (!stillAdmitted(env, identity)) {
      return json(403, { error: 'access_denied', message: `${identity.email ?? identity.userId} is no longer allowed to use this server.` });
    }
    noteGrantUse(env, identity.grantId, (p) => ctx.waitUntil(p));
    // The session keeps its public origin, to link approval pages.
    ctx.props = { ...identity, publicOrigin: publicOrigin(env, request) };
    const url = new URL(request.url);
    const session = sessionObjectName(request, url);
    const owned = session ? await ownedBy(env, session, identity) : true;
    if (owned === 'unavailable') {
      return json(503, { jsonrpc: '2.0', error: { code: -32001, message: 'The session could not be checked in time; try again.' }, id: null });
    }
    if (!owned) return json(404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    if (url.pathname === '/mcp') return streamable.fetch(request, env, ctx);
    if (url.pathname === '/sse' || url.pathname.startsWith('/sse/')) return sse.fetch(request, env, ctx);
    return json(404, { error: 'not_found', message: 'Try /mcp or /sse.' });
  },
};

/** The session a request names: the Mcp-Session-Id header on /mcp, the sessionId query on any /sse path. */
function sessionObjectName(request: Request, url: URL): string | null {
  if (url.pathname === '/mcp') {
    const id = request.headers.get('mcp-session-id');
    return id ? `streamable-http:${id}` : null;
  }
  if (url.pathname === '/sse' || url.pathname.startsWith('/sse/')) {
    // GET /sse?sessionId= reattaches to an existing session, so it is checked like a message.
    const id = url.searchParams.get('sessionId');
    return id ? `sse:${id}` : null;
  }
  return null;
}

async function ownedBy(env: AppEnv, name: string, identity: Identity): Promise<boolean | 'unavailable'> {
  const known = owners.get(name);
  if (known !== undefined) return known === identity.grantId;
  const stub = timedStub(env.MCP_OBJECT.get(env.MCP_OBJECT.idFromName(name)) as unknown as DurableObjectStub<ProxmoxMcp>, 'session');
  let owner;
  try {
    owner = await stub.owner();
  } catch (err) {
    console.error(JSON.stringify({ msg: 'session_owner_unavailable', error: err instanceof Error ? err.message.slice(0, 200) : 'unknown' }));
    return 'unavailable'; // fail closed: the request is refused
  }
  if (owner === null) return true; // no such session: the transport answers 404 itself
  if (owners.size >= MAX_OWNERS) owners.clear();
  owners.set(name, owner.grantId);
  return owner.grantId === identity.grantId;
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}
