// The whole sign-in through an OpenID Connect provider (the fake issuer: its own keys, discovery
// and JWKS), driven by the MCP SDK client: consent → issuer → our callback (ID token verified)
// → grant → tools/call. A bad signature, a wrong audience or an expired ID token gives a
// "Sign-in failed" page and no grant; so does a user outside ALLOWED_GROUPS=pve-admins.

import { beforeEach, describe, expect, it } from 'vitest';
import {
  Browser,
  connectSignedIn,
  connectWith,
  REDIRECT,
  startAuthorization,
  TestOAuthClient,
} from '../support/worker/oauth';
import { fake, type FakeLogin } from '../support/idp-clients';
import { signInUpstream } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';

async function signInAs(login: FakeLogin) {
  const auth = new TestOAuthClient();
  const url = await startAuthorization('http', auth);
  await fake.nextLogin(login);
  return { auth, result: await signInUpstream(new Browser(), url, REDIRECT) };
}

describe('sign-in through OpenID Connect', () => {
  beforeEach(() => fake.reset());

  it.each(['http', 'sse'] as const)(
    'grants a pve-admins member and calls tools as them (%s)',
    async (kind) => {
      await fake.nextLogin({
        sub: `oidc-${kind}`,
        email: `${kind}@corp.example`,
        groups: ['pve-admins', 'staff'],
      });
      const { client, auth } = await connectSignedIn(kind, 'upstream');
      const listed = await call(client, 'pve_list_vms', { limit: 1 });
      expect(listed.isError, text(listed)).toBeFalsy();
      expect(auth.tokens()!.refresh_token).toBeTruthy();
      await client.close();
      const again = await connectWith(kind, auth);
      expect((await call(again, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
      await again.close();
      const tokenRequests = (await fake.requests()).filter((r) => r.endpoint.includes('token'));
      expect(tokenRequests.at(-1)).toMatchObject({
        clientAuth: 'client_secret_basic',
        pkce: 'verified',
      });
    },
  );

  it.each([
    ['a bad signature', 'badSignature', /signature/i],
    ['a wrong audience', 'wrongAudience', /another application|audience/i],
    ['an expired ID token', 'expired', /expired/i],
    ['a wrong nonce', 'wrongNonce', /nonce|could not be verified/i],
  ] as const)(
    'refuses %s with a "Sign-in failed" page and no grant',
    async (_label, fault, message) => {
      const { auth, result } = await signInAs({ fault });
      expect(result.status).toBe(401);
      expect(result.location).toBeNull();
      expect(result.finalHtml).toContain('Sign-in failed');
      expect(result.finalHtml).toMatch(message);
      expect(auth.tokens()).toBeUndefined();
    },
  );

  it('gives someone outside ALLOWED_GROUPS a "Not allowed" page', async () => {
    const { result } = await signInAs({ email: 'intern@corp.example', groups: ['interns'] });
    expect(result.status).toBe(403);
    expect(result.finalHtml).toContain('intern@corp.example may not use this server');
  });

  it('sends the client access_denied when the user declines at the provider', async () => {
    const { result } = await signInAs({ deny: true });
    expect(new URL(result.location!).searchParams.get('error')).toBe('access_denied');
  });
});
