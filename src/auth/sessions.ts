// A 2025 MCP session belongs to the grant that opened it, with the scopes of the token that
// opened it (the session keeps them for its life): a request naming someone else's session, or
// its own with a token of other scopes (a narrowed refresh, a step-up), is answered as if the
// session did not exist, so the client opens a new one; a session object that cannot say whose
// it is in time refuses the request (fail closed). Owners never change, so each isolate
// remembers the ones it has checked.

import { errorText, logLine } from '../log';
import type { Stores } from '../compose/runtime';
import type { Identity } from '../core/identity';

/** Sessions already checked in this isolate, by Durable Object name → owning grant and scopes. */
const owners = new Map<string, string>();
const MAX_OWNERS = 10_000;

/** Whether two scope lists hold the same scopes (in any order). */
export function sameScopes(a: readonly string[], b: readonly string[]): boolean {
  return ownerKey('', a) === ownerKey('', b);
}

function ownerKey(grantId: string, scopes: readonly string[]): string {
  return `${grantId}\u0000${[...new Set(scopes)].sort().join(' ')}`;
}

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
  const mine = ownerKey(identity.grantId, identity.scopes);
  const known = owners.get(name);
  if (known !== undefined) return known === mine ? 'yours' : 'not_found';
  let owner;
  try {
    owner = await stores.session(name).owner();
  } catch (err) {
    logLine('error', 'session_owner_unavailable', { error: errorText(err, 200) });
    return 'unavailable';
  }
  if (owner === null) return 'yours'; // no such session: the transport answers 404 itself
  if (owners.size >= MAX_OWNERS) owners.clear();
  const theirs = ownerKey(owner.grantId, owner.scopes);
  owners.set(name, theirs);
  return theirs === mine ? 'yours' : 'not_found';
}
