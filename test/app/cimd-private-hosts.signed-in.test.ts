// A client_id that is an https URL makes the OAuth library fetch it (a Client ID Metadata
// Document). Naming a loopback, link-local or private host there must not make this server
// connect anywhere: /authorize and /token answer their usual refusal, and the loopback trap
// (test/support/setup/outbound-probe.ts, on 127.0.0.1 and [::1]) sees no connection. Without the outbound
// guard, the loopback rows connect to the trap — which is also what catches a library release
// that stops sending the User-Agent the guard recognises its fetches by.

import { afterEach, beforeEach, describe, expect, it, inject, vi } from 'vitest';
import { workerFetch } from '../support/worker/mcp';
import { ORIGIN, REDIRECT } from '../support/worker/oauth';
import { probeCounts } from '../support/worker/outbound-probe';

const PORT = inject('outboundProbe').trapPort;
/** An S256 challenge; nothing gets far enough to check it. */
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

/** [how the client_id spells the host, the host the guard sees after URL parsing]. */
const HOSTS: [string, string][] = [
  ['127.0.0.1', '127.0.0.1'],
  ['localhost', 'localhost'],
  ['mcp.localhost', 'mcp.localhost'],
  ['[::1]', '[::1]'],
  ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]'],
  ['0x7f.1', '127.0.0.1'],
  ['0177.0.0.1', '127.0.0.1'],
  ['2130706433', '127.0.0.1'],
  ['169.254.169.254', '169.254.169.254'],
  ['10.0.0.1', '10.0.0.1'],
];

/** The client's metadata URL on the trap's port, so that any connection lands in the trap. */
const clientIdAt = (host: string): string => `https://${host}:${PORT}/client.json`;

let warnings: string[] = [];
beforeEach(() => {
  warnings = [];
  vi.spyOn(console, 'warn').mockImplementation(
    (...args: unknown[]) => void warnings.push(args.map(String).join(' ')),
  );
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The guard's own log line for this host: the refusal was the guard's, not a network error. */
function refusedByGuard(host: string): boolean {
  return warnings.some(
    (w) =>
      w.includes('"msg":"oauth_fetch_refused"') && w.includes(`"host":${JSON.stringify(host)}`),
  );
}

/** Nothing a person or client should see: our refusal's wording, a stack, an error class. */
function expectNothingInternal(body: string): void {
  expect(body).not.toMatch(
    /oauth_fetch_refused|non_public|Refused to fetch|TypeError|\bat \S+:\d+|stack/i,
  );
}

describe('a client_id naming a non-public host', () => {
  it.each(HOSTS)(
    '/authorize refuses https://%s:<trap>/client.json without connecting',
    async (spelled, host) => {
      const before = await probeCounts();
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: clientIdAt(spelled),
        redirect_uri: REDIRECT,
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
        state: 'xyz',
      });
      const res = await workerFetch(`${ORIGIN}/authorize?${query}`);
      const body = await res.text();
      expect(res.status, body.slice(0, 300)).toBe(400);
      expect(body).toContain('This app could not be verified');
      expectNothingInternal(body);
      expect((await probeCounts()).trapConnections - before.trapConnections).toBe(0);
      expect(refusedByGuard(host), warnings.join('\n')).toBe(true);
    },
  );

  it.each(HOSTS)(
    '/token answers invalid_client for https://%s:<trap>/client.json without connecting',
    async (spelled, host) => {
      const before = await probeCounts();
      const res = await workerFetch(`${ORIGIN}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'made-up:code:value',
          redirect_uri: REDIRECT,
          code_verifier: 'v'.repeat(43),
          client_id: clientIdAt(spelled),
        }),
      });
      const body = await res.text();
      expect(res.status, body).toBe(401);
      expect(JSON.parse(body)).toMatchObject({ error: 'invalid_client' });
      expectNothingInternal(body);
      expect((await probeCounts()).trapConnections - before.trapConnections).toBe(0);
      expect(refusedByGuard(host), warnings.join('\n')).toBe(true);
    },
  );
});
