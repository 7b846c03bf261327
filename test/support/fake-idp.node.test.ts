// The fake identity provider itself: discovery, JWKS, the code flow with PKCE and client auth,
// faults, the control API, and the GitHub endpoints the GitHub sign-in calls.
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { get } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  FAKE_IDP_CLIENT,
  startFakeIdp,
  type FakeIdp,
  type LogEntry,
  type NextLogin,
} from './fake-idp.ts';

let idp: FakeIdp;
beforeAll(async () => {
  idp = await startFakeIdp();
});
afterAll(() => idp.close());
beforeEach(() => control('POST', '/reset'));

const REDIRECT = 'https://mcp.example.com/oauth/callback';
const BASIC = `Basic ${Buffer.from(`${FAKE_IDP_CLIENT.id}:${FAKE_IDP_CLIENT.secret}`).toString('base64')}`;

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${idp.url}/control${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return text ? (JSON.parse(text) as unknown) : null;
}
const nextLogin = (login: NextLogin) => control('POST', '/next-login', login);
const requests = async () =>
  ((await control('GET', '/requests')) as { requests: LogEntry[] }).requests;

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Calls an authorize endpoint and returns where its 302 points. */
async function authorize(path: string, params: Record<string, string>): Promise<URL> {
  const query = new URLSearchParams({
    client_id: FAKE_IDP_CLIENT.id,
    redirect_uri: REDIRECT,
    state: 'st-1',
    ...params,
  });
  const res = await fetch(`${idp.url}${path}?${query}`, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') ?? '');
}

async function oidcCode(issuer = 'oidc', challenge = pkce().challenge): Promise<string> {
  const back = await authorize(`/${issuer}/authorize`, {
    response_type: 'code',
    scope: 'openid email',
    nonce: 'n-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return back.searchParams.get('code') ?? '';
}

function tokenRequest(
  params: Record<string, string>,
  headers: Record<string, string> = { authorization: BASIC },
  issuer = 'oidc',
) {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    redirect_uri: REDIRECT,
    ...params,
  });
  return fetch(`${idp.url}/${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
}

function decode(jwt: string): {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  signed: Buffer;
  signature: Buffer;
} {
  const [h = '', p = '', s = ''] = jwt.split('.');
  const json = (part: string) =>
    JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  return {
    header: json(h),
    claims: json(p),
    signed: Buffer.from(`${h}.${p}`),
    signature: Buffer.from(s, 'base64url'),
  };
}

async function signatureValid(jwt: string): Promise<boolean> {
  const { header, signed, signature } = decode(jwt);
  const { keys } = (await (await fetch(`${idp.url}/oidc/jwks`)).json()) as {
    keys: Record<string, unknown>[];
  };
  const jwk = keys.find((k) => k.kid === header.kid);
  return (
    jwk !== undefined &&
    verify('sha256', signed, createPublicKey({ key: jwk, format: 'jwk' }), signature)
  );
}

/** A full OIDC code flow; returns the ID token. */
async function signIn(login?: NextLogin): Promise<string> {
  if (login) await nextLogin(login);
  const { verifier, challenge } = pkce();
  const res = await tokenRequest({
    code: await oidcCode('oidc', challenge),
    code_verifier: verifier,
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id_token: string }).id_token;
}

describe('fake IdP: OpenID Connect', () => {
  it('publishes discovery documents for its three issuers', async () => {
    const get = async (issuer: string) =>
      (await (
        await fetch(`${idp.url}/${issuer}/.well-known/openid-configuration`)
      ).json()) as Record<string, unknown>;
    const main = await get('oidc');
    expect(main).toMatchObject({
      issuer: `${idp.url}/oidc`,
      authorization_endpoint: `${idp.url}/oidc/authorize`,
      token_endpoint: `${idp.url}/oidc/token`,
      jwks_uri: `${idp.url}/oidc/jwks`,
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
    });
    expect((await get('oidc-post')).token_endpoint_auth_methods_supported).toEqual([
      'client_secret_post',
    ]);
    expect((await get('oidc-mismatch')).issuer).toBe(`${idp.url}/oidc`);
  });

  it('publishes a public RS256 key with a kid', async () => {
    const { keys } = (await (await fetch(`${idp.url}/oidc/jwks`)).json()) as {
      keys: Record<string, unknown>[];
    };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: 'key-1' });
    expect(keys[0]).not.toHaveProperty('d');
  });

  it('redirects with code, state and iss, then issues a signed ID token for a verified PKCE', async () => {
    const back = await authorize('/oidc/authorize', {
      response_type: 'code',
      nonce: 'n-1',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(`${idp.url}/oidc`);
    const token = await signIn();
    expect(await signatureValid(token)).toBe(true);
    expect(decode(token).claims).toMatchObject({
      iss: `${idp.url}/oidc`,
      aud: FAKE_IDP_CLIENT.id,
      sub: 'user-0001',
      nonce: 'n-1',
      email: 'alice@example.com',
      email_verified: true,
      groups: ['pve-admins'],
    });
    expect((await requests()).filter((r) => r.endpoint === '/oidc/token')).toEqual([
      expect.objectContaining({
        status: 200,
        clientAuth: 'client_secret_basic',
        pkce: 'verified',
        clientId: FAKE_IDP_CLIENT.id,
      }),
    ]);
  });

  it('accepts client_secret_post, and only that on /oidc-post', async () => {
    const post = { client_id: FAKE_IDP_CLIENT.id, client_secret: FAKE_IDP_CLIENT.secret };
    const a = pkce();
    expect(
      (
        await tokenRequest(
          { code: await oidcCode('oidc', a.challenge), code_verifier: a.verifier, ...post },
          {},
        )
      ).status,
    ).toBe(200);
    const b = pkce();
    const basic = await tokenRequest(
      { code: await oidcCode('oidc-post', b.challenge), code_verifier: b.verifier },
      { authorization: BASIC },
      'oidc-post',
    );
    expect(basic.status).toBe(401);
    const c = pkce();
    expect(
      (
        await tokenRequest(
          { code: await oidcCode('oidc-post', c.challenge), code_verifier: c.verifier, ...post },
          {},
          'oidc-post',
        )
      ).status,
    ).toBe(200);
    expect(
      (await requests())
        .filter((r) => r.endpoint.endsWith('/token'))
        .map((r) => [r.clientAuth, r.status]),
    ).toEqual([
      ['client_secret_post', 200],
      ['client_secret_basic', 401],
      ['client_secret_post', 200],
    ]);
  });

  it('refuses a wrong verifier, a reused code, a wrong secret and another redirect_uri', async () => {
    const { challenge } = pkce();
    const code = await oidcCode('oidc', challenge);
    const wrong = await tokenRequest({ code, code_verifier: pkce().verifier });
    expect([wrong.status, ((await wrong.json()) as { error: string }).error]).toEqual([
      400,
      'invalid_grant',
    ]);
    expect((await requests()).at(-1)).toMatchObject({ pkce: 'mismatch', error: 'invalid_grant' });
    expect((await tokenRequest({ code, code_verifier: 'x'.repeat(43) })).status).toBe(400);
    const badSecret = `Basic ${Buffer.from(`${FAKE_IDP_CLIENT.id}:nope`).toString('base64')}`;
    expect(
      (
        await tokenRequest(
          { code: await oidcCode(), code_verifier: 'x' },
          { authorization: badSecret },
        )
      ).status,
    ).toBe(401);
    const p = pkce();
    expect(
      (
        await tokenRequest({
          code: await oidcCode('oidc', p.challenge),
          code_verifier: p.verifier,
          redirect_uri: 'https://elsewhere.example/cb',
        })
      ).status,
    ).toBe(400);
  });

  it.each([
    ['wrongAudience', (c: Record<string, unknown>) => expect(c.aud).toBe('some-other-client')],
    [
      'expired',
      (c: Record<string, unknown>) => expect(Number(c.exp)).toBeLessThan(Date.now() / 1000 - 60),
    ],
    ['wrongNonce', (c: Record<string, unknown>) => expect(c.nonce).toBe('not-the-nonce-you-sent')],
    ['wrongIssuer', (c: Record<string, unknown>) => expect(c.iss).toBe('https://evil.example')],
  ] as const)('applies the %s fault to the next token only', async (fault, check) => {
    check(decode(await signIn({ fault })).claims);
    expect(decode(await signIn()).claims).toMatchObject({
      aud: FAKE_IDP_CLIENT.id,
      nonce: 'n-1',
      iss: `${idp.url}/oidc`,
    });
  });

  it('signs with another key under the same kid for badSignature', async () => {
    const token = await signIn({ fault: 'badSignature' });
    expect(decode(token).header.kid).toBe('key-1');
    expect(await signatureValid(token)).toBe(false);
  });

  it('uses the next login once, drops null claims and serves userinfo-only claims from userinfo', async () => {
    const token = await signIn({
      sub: 'kc-7',
      email: null,
      groups: 'solo',
      claims: { realm_access: { roles: ['admin'] } },
      userinfoOnly: ['groups'],
    });
    expect(decode(token).claims).toMatchObject({ sub: 'kc-7', realm_access: { roles: ['admin'] } });
    expect(decode(token).claims).not.toHaveProperty('email');
    expect(decode(token).claims).not.toHaveProperty('groups');
    expect(decode(await signIn()).claims.sub).toBe('user-0001');
  });

  it('answers userinfo for its access tokens only', async () => {
    await nextLogin({ userinfoOnly: ['groups'] });
    const p = pkce();
    const body = (await (
      await tokenRequest({ code: await oidcCode('oidc', p.challenge), code_verifier: p.verifier })
    ).json()) as { access_token: string };
    const info = await fetch(`${idp.url}/oidc/userinfo`, {
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    expect(await info.json()).toMatchObject({ sub: 'user-0001', groups: ['pve-admins'] });
    expect(
      (await fetch(`${idp.url}/oidc/userinfo`, { headers: { authorization: 'Bearer nope' } }))
        .status,
    ).toBe(401);
  });

  it('redirects with access_denied when told to deny', async () => {
    await nextLogin({ deny: true });
    const back = await authorize('/oidc/authorize', { response_type: 'code' });
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      error: 'access_denied',
      state: 'st-1',
    });
    expect(back.searchParams.has('code')).toBe(false);
  });

  it('registers clients with redirect URIs and refuses unknown ones without redirecting', async () => {
    await control('POST', '/clients', {
      client_id: 'other',
      client_secret: 's3cret',
      redirect_uris: ['https://a.example/cb'],
    });
    const ok = await fetch(
      `${idp.url}/oidc/authorize?client_id=other&redirect_uri=${encodeURIComponent('https://a.example/cb')}&response_type=code`,
      { redirect: 'manual' },
    );
    expect(ok.status).toBe(302);
    const bad = await fetch(
      `${idp.url}/oidc/authorize?client_id=other&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code`,
      { redirect: 'manual' },
    );
    expect(bad.status).toBe(400);
    expect(
      (
        await fetch(
          `${idp.url}/oidc/authorize?client_id=ghost&redirect_uri=${encodeURIComponent(REDIRECT)}`,
          { redirect: 'manual' },
        )
      ).status,
    ).toBe(400);
  });

  it('rotates its signing key and keeps publishing the old one', async () => {
    expect(await control('POST', '/rotate-key')).toEqual({ kid: 'key-2' });
    const token = await signIn();
    expect(decode(token).header.kid).toBe('key-2');
    expect(await signatureValid(token)).toBe(true);
    const { keys } = (await (await fetch(`${idp.url}/oidc/jwks`)).json()) as {
      keys: { kid: string }[];
    };
    expect(keys.map((k) => k.kid)).toEqual(['key-2', 'key-1']);
  });
});

describe('fake IdP: GitHub', () => {
  async function githubToken(login?: NextLogin): Promise<string> {
    if (login) await nextLogin(login);
    const { verifier, challenge } = pkce();
    const back = await authorize('/github/login/oauth/authorize', {
      scope: 'read:user user:email read:org',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const res = await fetch(`${idp.url}/github/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: FAKE_IDP_CLIENT.id,
        client_secret: FAKE_IDP_CLIENT.secret,
        code: back.searchParams.get('code') ?? '',
        code_verifier: verifier,
        redirect_uri: REDIRECT,
      }),
    });
    const body = (await res.json()) as { access_token: string; scope: string };
    expect(body.scope).toBe('read:user,user:email,read:org');
    return body.access_token;
  }
  const api = (token: string, path: string, headers: Record<string, string> = {}) =>
    fetch(`${idp.url}/github-api${path}`, {
      headers: { authorization: `Bearer ${token}`, 'user-agent': 'vitest', ...headers },
    });

  it('exchanges a code with PKCE and serves user, emails, teams and membership', async () => {
    const token = await githubToken();
    expect(await (await api(token, '/user')).json()).toMatchObject({
      id: 1001,
      login: 'Alice-GH',
      name: 'Alice Example',
    });
    expect(await (await api(token, '/user/emails')).json()).toEqual([
      expect.objectContaining({ email: 'alice@example.com', primary: true, verified: true }),
      expect.objectContaining({ primary: false, verified: true }),
    ]);
    expect(await (await api(token, '/user/teams')).json()).toEqual([
      expect.objectContaining({ slug: 'ops', organization: { login: 'acme' } }),
    ]);
    expect(await (await api(token, '/user/memberships/orgs/ACME')).json()).toMatchObject({
      state: 'active',
    });
    expect((await api(token, '/user/memberships/orgs/other')).status).toBe(404);
    expect((await requests()).find((r) => r.endpoint.endsWith('/access_token'))).toMatchObject({
      pkce: 'verified',
      clientAuth: 'client_secret_post',
    });
  });

  it('tells pending and restricted orgs apart and pages teams with a Link header', async () => {
    const teams = Array.from({ length: 3 }, (_, i) => ({ org: 'acme', slug: `t${i}` }));
    const token = await githubToken({
      github: { orgs: [], pendingOrgs: ['acme'], restrictedOrgs: ['locked'], teams },
    });
    expect(await (await api(token, '/user/memberships/orgs/acme')).json()).toMatchObject({
      state: 'pending',
    });
    expect((await api(token, '/user/memberships/orgs/locked')).status).toBe(403);
    const first = await api(token, '/user/teams?per_page=2');
    expect(((await first.json()) as unknown[]).length).toBe(2);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
    expect(
      await (
        await fetch(next, { headers: { authorization: `Bearer ${token}`, 'user-agent': 'vitest' } })
      ).json(),
    ).toEqual([expect.objectContaining({ slug: 't2' })]);
  });

  it('answers token errors with HTTP 200 and API errors like GitHub', async () => {
    const res = await fetch(`${idp.url}/github/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: FAKE_IDP_CLIENT.id,
        client_secret: FAKE_IDP_CLIENT.secret,
        code: 'nope',
      }),
    });
    expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([
      200,
      'bad_verification_code',
    ]);
    expect((await api('nope', '/user')).status).toBe(401);
    // fetch always sends a User-Agent; node:http sends none unless told.
    const token = await githubToken();
    const status = await new Promise<number | undefined>((resolve, reject) => {
      get(`${idp.url}/github-api/user`, { headers: { authorization: `Bearer ${token}` } }, (res) =>
        resolve(res.resume().statusCode),
      ).on('error', reject);
    });
    expect(status).toBe(403);
  });
});
