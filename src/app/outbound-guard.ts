// Keeps the OAuth library's own outbound fetches (Client ID Metadata Documents, a client's
// jwks_uri) on public https hosts and off redirects, in every environment. Any client may name
// such a URL as its client_id, so without this an attacker makes the server fetch loopback,
// 169.254.169.254 (cloud metadata) or the LAN wherever global_fetch_strictly_public does not
// apply (wrangler dev, a self-hosted workerd).
//
// How: the library calls the global fetch and takes no fetch option, so we wrap globalThis.fetch
// once, at module load, and act only on requests carrying the library's User-Agent
// (`workers-oauth-provider/<version> ...`, which it sets on both of its fetches). Those get the
// host check (refused → a TypeError, as a network failure, which the library turns into its
// usual invalid_client / "could not be fetched") and `redirect: 'manual'`, so a 3xx comes back
// as a non-ok response the library refuses instead of a hop to a host nobody checked. Every
// other fetch (Proxmox, the identity provider, tests) passes through with the very same
// arguments. Why not elsewhere: checking client_id in our routes would miss the library's other
// paths (refresh, revocation, lookups, jwks_uri from a document); patching node_modules is lost on
// upgrade; a request-scoped flag would also cover our own handlers, which run inside the library.
// The cost: a library release that stopped sending that User-Agent would slip past the guard,
// so test/app/cimd-private-hosts.signed-in.test.ts drives the real library at a loopback trap and fails
// if it gets a single connection.

import { logLine } from '../log';
import { checkPublicHttpsUrl, type HostCheck } from './public-host';

/** What the OAuth library's outbound User-Agent starts with (its OUTBOUND_USER_AGENT). */
export const LIBRARY_USER_AGENT_PREFIX = 'workers-oauth-provider/';

type Fetch = typeof fetch;
type FetchInput = Parameters<Fetch>[0];
type FetchInit = Parameters<Fetch>[1];

/** Marks a wrapped fetch, so that loading this module twice still wraps only once. */
const GUARDED = Symbol.for('proxmox-mcp.outbound-guard');

/** `original`, except for the library's requests: `check`ed, and never following redirects. */
export function guardedFetch(
  original: Fetch,
  check: (url: string) => HostCheck = checkPublicHttpsUrl,
): Fetch {
  const guarded = (input: FetchInput, init?: FetchInit): Promise<Response> => {
    if (!isLibraryRequest(input, init)) return original(input, init);
    const verdict = check(urlOf(input));
    if (!verdict.ok) {
      const { ok: _, ...why } = verdict;
      logLine('warn', 'oauth_fetch_refused', why);
      return Promise.reject(new TypeError(`Refused to fetch a non-public URL (${verdict.reason})`));
    }
    return original(input, { ...init, redirect: 'manual' });
  };
  return Object.assign(guarded, { [GUARDED]: true });
}

/** Wraps `target.fetch` (the global one by default) once; later calls change nothing. */
export function installOutboundGuard(target: { fetch: Fetch } = globalThis): void {
  if ((target.fetch as Fetch & { [GUARDED]?: true })[GUARDED]) return;
  target.fetch = guardedFetch(target.fetch.bind(target));
}

/**
 * As fetch reads it: init's headers, if given, replace the Request's. Reads no body, and copies
 * no `Headers` (our Proxmox client's requests come with one).
 */
function isLibraryRequest(input: FetchInput, init: FetchInit): boolean {
  const given = init?.headers;
  const headers =
    given !== undefined
      ? given instanceof Headers
        ? given
        : new Headers(given)
      : input instanceof Request
        ? input.headers
        : null;
  return headers?.get('user-agent')?.startsWith(LIBRARY_USER_AGENT_PREFIX) ?? false;
}

function urlOf(input: FetchInput): string {
  return input instanceof Request ? input.url : input instanceof URL ? input.href : String(input);
}
