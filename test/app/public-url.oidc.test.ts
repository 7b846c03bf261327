// With PUBLIC_URL set, sign-in and the web pages live on that origin (its callback is the one
// registered with the identity provider): a browser GET of one of them on another hostname the
// Worker answers on (workers.dev) is redirected there, path and query kept. Nothing else is:
// not a POST (a redirect would turn it into a GET and drop the form), not the MCP endpoints or
// metadata, which clients fetch on the hostname they were given.
// The Worker as deployed with PUBLIC_URL=https://mcp.example.test (workerFetchWith); sign-in
// through the fake OpenID Connect provider.

import { describe, expect, it } from 'vitest';
import { fakeUrl } from '../support/idp-clients';
import { workerFetchWith } from '../support/worker/mcp';

const PUBLIC = 'https://mcp.example.test';
const workerFetch = workerFetchWith({ PUBLIC_URL: PUBLIC });
const OTHER = 'https://proxmox-mcp.acme.workers.dev';
const REDIRECT = 'http://127.0.0.1:33418/oauth/callback';

async function authorizeQuery(): Promise<string> {
  const reg = await workerFetch(`${PUBLIC}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'public url',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    }),
  });
  const { client_id: clientId } = (await reg.json()) as { client_id: string };
  return new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: 'a b&c',
    resource: PUBLIC,
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }).toString();
}

describe('PUBLIC_URL for the pages a person opens', () => {
  it.each([
    '/authorize?response_type=code&client_id=abc&state=a%20b',
    '/login?next=%2Fadmin',
    '/admin',
    '/admin/audit?format=csv&tool=pve_list_vms',
    '/approvals/AAAAAAAAAAAAAAAAAAAAAA?done=approve',
    '/dev-idp/login?state=s',
  ])(
    'redirects GET %s on another hostname to PUBLIC_URL, path and query kept',
    async (pathAndQuery) => {
      const res = await workerFetch(`${OTHER}${pathAndQuery}`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(`${PUBLIC}${pathAndQuery}`);
    },
  );

  it('sends a sign-in started on another hostname to the consent page on PUBLIC_URL', async () => {
    const query = await authorizeQuery();
    const res = await workerFetch(`${OTHER}/authorize?${query}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location).toBe(`${PUBLIC}/authorize?${query}`);
    const consent = await workerFetch(location, { redirect: 'manual' });
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain('name="handle"');
  });

  it('serves the page on PUBLIC_URL itself (no redirect loop): /login goes on to the identity provider', async () => {
    const res = await workerFetch(`${PUBLIC}/login?next=%2Fadmin`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')!.startsWith(`${fakeUrl()}/oidc/`)).toBe(true);
  });

  it.each(['/authorize', '/approvals/AAAAAAAAAAAAAAAAAAAAAA'])(
    'does not redirect a POST to %s (it would lose the form)',
    async (path) => {
      const res = await workerFetch(`${OTHER}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'decision=approve',
        redirect: 'manual',
      });
      expect(res.status).not.toBe(302);
      expect(res.headers.get('location')).toBeNull();
      await res.body?.cancel();
    },
  );

  it.each([
    ['/health', 200],
    ['/.well-known/oauth-authorization-server', 200],
    ['/mcp', 401],
  ])('answers GET %s on another hostname itself (%d)', async (path, status) => {
    const res = await workerFetch(`${OTHER}${path}`, {
      headers: { accept: 'application/json, text/event-stream' },
      redirect: 'manual',
    });
    expect(res.status).toBe(status);
    expect(res.headers.get('location')).toBeNull();
    await res.body?.cancel();
  });
});
