// One isolate serving two hostnames without PUBLIC_URL (a custom domain and workers.dev): each
// hostname's sign-in names its own issuer and resource. The OAuth library caches its helpers on
// the env object, which the isolate shares, so without a per-request copy the first hostname
// asked would serve the other's /authorize and refuse it (invalid_target).

import { describe, expect, it } from 'vitest';
import { workerFetch } from '../support/worker/mcp';

const REDIRECT = 'http://127.0.0.1:33418/oauth/callback';

async function authorize(origin: string): Promise<Response> {
  const reg = await workerFetch(`${origin}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'two hostnames',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    }),
  });
  const { client_id: clientId } = (await reg.json()) as { client_id: string };
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: 's',
    resource: origin,
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });
  return workerFetch(`${origin}/authorize?${params}`, { redirect: 'manual' });
}

describe('the Worker on two hostnames', () => {
  it('shows the consent page on each, for its own resource', async () => {
    for (const origin of [
      'https://mcp.example.test',
      'https://proxmox-mcp.acme.workers.dev',
      'https://mcp.example.test',
    ]) {
      const res = await authorize(origin);
      expect(res.headers.get('location')).toBeNull();
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('name="handle"');
    }
  });
});
