// A 2025 MCP session belongs to the grant that opened it: a request naming someone else's
// session is answered as if the session did not exist, and a session object that cannot say
// whose it is in time refuses the request (fail closed). Owners never change, so each isolate
// remembers the ones it has checked.

import { errorText, logLine } from '../log';
import type { Stores } from '../compose/runtime';
import type { Identity } from '../identity';

/** Sessions already checked in this isolate, by Durable Object name → owning grant. */
const owners = new Map<string, string>();
const MAX_OWNERS = 10_000;

export type Ownership = 'yours' | 'not_found' | 'unavailable';

/** The session a request names: the Mcp-Session-Id header on /mcp, the sessionId query on any /sse path. */
export function sessionObjectName(request: Request, url: URL): string | null {
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

/** Whether `identity`'s grant may use the session named `name` (a session not yet created is theirs to create). */
export async function sessionOwnership(
  stores: Pick<Stores, 'session'>,
  name: string,
  identity: Identity,
): Promise<Ownership> {
  const known = owners.get(name);
  if (known !== undefined) return known === identity.grantId ? 'yours' : 'not_found';
  let owner;
  try {
    owner = await stores.session(name).owner();
  } catch (err) {
    logLine('error', 'session_owner_unavailable', { error: errorText(err, 200) });
    return 'unavailable';
  }
  if (owner === null) return 'yours'; // no such session: the transport answers 404 itself
  if (owners.size >= MAX_OWNERS) owners.clear();
  owners.set(name, owner.grantId);
  return owner.grantId === identity.grantId ? 'yours' : 'not_found';
}
