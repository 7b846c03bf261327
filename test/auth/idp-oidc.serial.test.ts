// The OpenID Connect sign-in, run in Node against the fake IdP: identity from verified claims,
// client authentication, caching, key rotation, and one IdpError per failed check.
import { beforeEach, describe, expect, it } from 'vitest';
import { IdpError, type UpstreamIdp } from '../../src/auth/idp';
import { endpointProblem, providerUrlProblem } from '../../src/auth/idp-http';
import { claimAt, identityFromClaims, oidcIdp, type OidcConfig } from '../../src/auth/idp-oidc';
import {
  authorize,
  CALLBACK,
  CLIENT,
  fake,
  fakeUrl,
  signIn,
  type Fault,
} from '../support/idp-clients';

const oidc = (overrides: Partial<OidcConfig> = {}): UpstreamIdp =>
  oidcIdp({
    issuer: `${fakeUrl()}/oidc`,
    clientId: CLIENT.id,
    clientSecret: CLIENT.secret,
    scopes: ['openid', 'email', 'profile'],
    groupsClaim: 'groups',
    ...overrides,
  });

/** The IdpError a sign-in ends in (fails the test when it succeeds or throws something else). */
async function failure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IdpError);
  return (err as IdpError).message;
}

beforeEach(() => fake.reset());

describe('oidcIdp: the authorization request', () => {
  it('asks for a code with PKCE S256, a nonce, the state and the scopes', async () => {
    const { data, url } = await authorize(oidc());
    expect(`${url.origin}${url.pathname}`).toBe(`${fakeUrl()}/oidc/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: CLIENT.id,
      redirect_uri: CALLBACK,
      scope: 'openid email profile',
      nonce: data.nonce,
      code_challenge_method: 'S256',
    });
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(data.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,}$/);
  });
});

describe('oidcIdp: a sign-in', () => {
  it('returns the identity from the verified ID token, authenticating with client_secret_basic', async () => {
    expect(await signIn(oidc())).toEqual({
      userId: 'user-0001',
      login: 'alice',
      email: 'alice@example.com',
      name: 'Alice Example',
      groups: ['pve-admins'],
    });
    const token = (await fake.requests()).find((r) => r.endpoint === '/oidc/token');
    expect(token).toMatchObject({
      status: 200,
      clientAuth: 'client_secret_basic',
      pkce: 'verified',
    });
  });

  it('uses client_secret_post when discovery says basic is not supported', async () => {
    const identity = await signIn(oidc({ issuer: `${fakeUrl()}/oidc-post` }));
    expect(identity.userId).toBe('user-0001');
    expect((await fake.requests()).find((r) => r.endpoint === '/oidc-post/token')).toMatchObject({
      status: 200,
      clientAuth: 'client_secret_post',
    });
  });

  it('keeps a ":" out of the userId and leaves out an unverified email', async () => {
    const identity = await signIn(oidc(), {
      sub: 'auth0|abc:1',
      email_verified: false,
      preferred_username: null,
    });
    expect(identity).toEqual({
      userId: 'auth0%7Cabc%3A1',
      name: 'Alice Example',
      groups: ['pve-admins'],
    });
  });

  it('reads groups from a dotted path (Keycloak realm roles)', async () => {
    const keycloak = oidc({ groupsClaim: 'realm_access.roles' });
    const identity = await signIn(keycloak, {
      claims: { realm_access: { roles: ['pve-admin', 'offline_access'] } },
    });
    expect(identity.groups).toEqual(['pve-admin', 'offline_access']);
  });

  it('fills in groups from userinfo when the ID token has none', async () => {
    expect((await signIn(oidc(), { userinfoOnly: ['groups'] })).groups).toEqual(['pve-admins']);
    expect((await fake.requests()).some((r) => r.endpoint === '/oidc/userinfo')).toBe(true);
  });

  it('reuses the discovery document and JWKS, and picks up a rotated key at once', async () => {
    await signIn(oidc());
    await fake.reset();
    await signIn(oidc());
    await signIn(oidc());
    const fetched = (await fake.requests())
      .map((r) => r.endpoint)
      .filter((e) => !e.endsWith('/token') && !e.endsWith('/authorize'));
    expect(fetched).toEqual([]);
    await fake.rotateKey();
    expect((await signIn(oidc())).userId).toBe('user-0001');
    expect((await fake.requests()).filter((r) => r.endpoint === '/oidc/jwks')).toHaveLength(1);
  });
});

describe('oidcIdp: refusals', () => {
  it.each<[Fault, RegExp]>([
    ['badSignature', /could not be verified: the ID token's signature is invalid/],
    [
      'wrongAudience',
      /could not be verified: the ID token was issued for another application \(audience\)/,
    ],
    ['expired', /could not be verified: the ID token has expired/],
    ['wrongNonce', /could not be verified: the ID token does not belong to this sign-in \(nonce\)/],
    [
      'wrongIssuer',
      /could not be verified: the ID token was issued by another identity provider \(issuer\)/,
    ],
  ])('refuses an ID token with the %s fault', async (fault, message) => {
    expect(await failure(signIn(oidc(), { fault }))).toMatch(message);
  });

  it('reports a sign-in declined at the IdP', async () => {
    expect(await failure(signIn(oidc(), { deny: true }))).toBe(
      'The identity provider refused the sign-in: access_denied.',
    );
  });

  it('refuses a code used twice and names no secret', async () => {
    const idp = oidc();
    const { data, callback } = await authorize(idp);
    await idp.finish(callback.clone(), data, CALLBACK);
    const message = await failure(idp.finish(callback, data, CALLBACK));
    expect(message).toMatch(/did not accept the authorization code \(invalid_grant\)/);
    expect(message).not.toContain(new URL(callback.url).searchParams.get('code'));
  });

  it('refuses wrong client credentials without echoing them', async () => {
    const message = await failure(signIn(oidc({ clientSecret: 'wrong-secret' })));
    expect(message).toMatch(/rejected this server's client credentials \(invalid_client\)/);
    expect(message).not.toContain('wrong-secret');
  });

  it('refuses an answer claiming to come from another issuer (RFC 9207 iss)', async () => {
    const idp = oidc();
    const { data, callback } = await authorize(idp);
    const forged = new URL(callback.url);
    forged.searchParams.set('iss', 'https://evil.example');
    expect(await failure(idp.finish(new Request(forged), data, CALLBACK))).toMatch(
      /came from another identity provider/,
    );
  });

  it('refuses a discovery document that names another issuer', async () => {
    const message = await failure(
      oidc({ issuer: `${fakeUrl()}/oidc-mismatch` }).authorizeUrl(
        { code_verifier: 'v', nonce: 'n' },
        's',
        CALLBACK,
      ),
    );
    expect(message).toBe(
      `The identity provider's discovery document names the issuer ${fakeUrl()}/oidc, not ${fakeUrl()}/oidc-mismatch; set OIDC_ISSUER to exactly that.`,
    );
  });

  it('says when the IdP cannot be reached, and when its transaction data is missing', async () => {
    const down = oidc({ issuer: 'http://127.0.0.1:9/oidc' });
    expect(
      await failure(down.authorizeUrl({ code_verifier: 'v', nonce: 'n' }, 's', CALLBACK)),
    ).toBe('The identity provider at 127.0.0.1:9 could not be reached.');
    expect(await failure(oidc().finish(new Request(`${CALLBACK}?code=x`), {}, CALLBACK))).toMatch(
      /transaction is incomplete/,
    );
  });

  it('refuses plain http to anything but loopback', async () => {
    const message = await failure(
      oidc({ issuer: 'http://idp.example.com' }).authorizeUrl(
        { code_verifier: 'v', nonce: 'n' },
        's',
        CALLBACK,
      ),
    );
    expect(message).toMatch(/OIDC_ISSUER must be an https URL/);
  });
});

describe('endpointProblem', () => {
  it('allows a query (Entra B2C) and plain http only to loopback when the issuer is loopback', () => {
    expect(
      endpointProblem(
        'https://t.b2clogin.com/t/oauth2/v2.0/authorize?p=b2c_1_signin',
        'authorization_endpoint',
        false,
      ),
    ).toBeUndefined();
    expect(endpointProblem('http://127.0.0.1:1/token', 'token_endpoint', true)).toBeUndefined();
    expect(endpointProblem('http://127.0.0.1:1/token', 'token_endpoint', false)).toBe(
      'token_endpoint is not an https URL',
    );
    expect(endpointProblem('http://idp.example.com/token', 'token_endpoint', true)).toBe(
      'token_endpoint is not an https URL',
    );
    expect(endpointProblem(undefined, 'jwks_uri', false)).toBe('jwks_uri is missing or not a URL');
  });
});

describe('providerUrlProblem', () => {
  it.each([
    ['https://auth.example.com/realms/pve', undefined],
    ['http://127.0.0.1:8080/oidc', undefined],
    ['http://localhost/oidc', undefined],
    ['http://[::1]:9000', undefined],
    ['http://auth.example.com', /must be an https URL/],
    ['http://127.0.0.1.example.com', /must be an https URL/],
    ['https://user:pw@auth.example.com', /credentials, a query or a fragment/],
    ['not a url', /is not a URL/],
  ])('%s', (url, problem) => {
    const found = providerUrlProblem(url, 'OIDC_ISSUER');
    if (problem) expect(found).toMatch(problem);
    else expect(found).toBeUndefined();
  });
});

describe('identityFromClaims', () => {
  const base = { sub: 's-1', email: 'a@example.com', name: 'A', preferred_username: 'a' };
  it.each<[string, Record<string, unknown>, string, string[]]>([
    ['an array', { groups: ['x', 'y', 'x', 3, ''] }, 'groups', ['x', 'y']],
    ['a single string', { groups: 'x' }, 'groups', ['x']],
    ['a number', { groups: 42 }, 'groups', []],
    ['an object', { groups: { a: 1 } }, 'groups', []],
    ['a missing claim', {}, 'groups', []],
    ['a dotted path', { realm_access: { roles: ['r'] } }, 'realm_access.roles', ['r']],
    [
      'a literal name with dots (Auth0)',
      { 'https://example.com/groups': ['g'] },
      'https://example.com/groups',
      ['g'],
    ],
  ])('reads groups from %s', (_, claims, claim, groups) => {
    expect(identityFromClaims({ ...base, ...claims }, claim).groups).toEqual(groups);
  });

  it.each([
    [{ email_verified: true }, false, 'a@example.com', 'a'],
    [{ email_verified: 'true' }, false, 'a@example.com', 'a'],
    [{}, false, undefined, 'a'],
    [{}, true, 'a@example.com', 'a'],
    [{ email_verified: false }, true, undefined, 'a'],
    [{ email_verified: 'false' }, false, undefined, 'a'],
    [{ email_verified: false, preferred_username: undefined }, false, undefined, undefined],
    [
      { email_verified: true, preferred_username: undefined },
      false,
      'a@example.com',
      'a@example.com',
    ],
  ])('takes email and login from %j (trust unstated: %s)', (claims, trust, email, login) => {
    const identity = identityFromClaims({ ...base, ...claims }, 'groups', trust);
    expect([identity.email, identity.login]).toEqual([email, login]);
  });

  it('does not walk into prototype properties', () => {
    expect(claimAt({}, 'constructor.name')).toBeUndefined();
  });
});
