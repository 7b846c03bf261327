// The GitHub sign-in, run in Node against the fake IdP's GitHub face: identity, the primary
// verified email, org membership and teams as groups, and one IdpError per refusal.
import { beforeEach, describe, expect, it } from 'vitest';
import { IdpError, type UpstreamIdp } from '../../src/auth/idp';
import { githubConfigProblem, githubIdp, type GithubConfig } from '../../src/auth/idp-github';
import { authorize, CALLBACK, CLIENT, fake, fakeUrl, signIn } from '../support/idp-clients';

const github = (overrides: Partial<GithubConfig> = {}): UpstreamIdp =>
  githubIdp({
    clientId: CLIENT.id,
    clientSecret: CLIENT.secret,
    org: 'acme',
    webUrl: `${fakeUrl()}/github`,
    apiUrl: `${fakeUrl()}/github-api`,
    ...overrides,
  });

async function failure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IdpError);
  return (err as IdpError).message;
}

beforeEach(() => fake.reset());

describe('githubIdp: the authorization request', () => {
  it('asks for read:org only when an org is configured, with PKCE S256', async () => {
    const { url } = await authorize(github());
    expect(`${url.origin}${url.pathname}`).toBe(`${fakeUrl()}/github/login/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: CLIENT.id,
      redirect_uri: CALLBACK,
      scope: 'read:user user:email read:org',
      code_challenge_method: 'S256',
    });
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { url: plain } = await authorize(github({ org: undefined }));
    expect(plain.searchParams.get('scope')).toBe('read:user user:email');
  });
});

describe('githubIdp: a sign-in', () => {
  it('returns the numeric-id user, the primary verified email, and org and team groups', async () => {
    expect(await signIn(github())).toEqual({
      userId: 'github-1001',
      login: 'Alice-GH',
      email: 'alice@example.com',
      name: 'Alice Example',
      groups: ['acme', 'acme/ops'],
    });
    const log = await fake.requests();
    const exchange = log.find((r) => r.endpoint.endsWith('/access_token'));
    expect(exchange).toMatchObject({ pkce: 'verified', clientAuth: 'client_secret_post' });
    expect(exchange).not.toHaveProperty('error');
    const api = log.filter((r) => r.endpoint.startsWith('/github-api/'));
    expect(api.map((r) => r.endpoint).sort()).toEqual([
      '/github-api/user',
      '/github-api/user/emails',
      '/github-api/user/memberships/orgs/acme',
      '/github-api/user/teams',
    ]);
    for (const r of api)
      expect(r).toMatchObject({
        status: 200,
        userAgent: 'proxmox-mcp-workers',
        apiVersion: '2022-11-28',
      });
  });

  it('keeps only the configured org’s teams, matching the org case-insensitively, across pages', async () => {
    const many = Array.from({ length: 130 }, (_, i) => ({ org: 'ACME', slug: `team-${i}` }));
    const identity = await signIn(github(), {
      github: { teams: [{ org: 'other', slug: 'x' }, ...many] },
    });
    expect(identity.groups).toHaveLength(131);
    expect(identity.groups.slice(0, 3)).toEqual(['acme', 'acme/team-0', 'acme/team-1']);
    expect(identity.groups).not.toContain('acme/x');
    expect(
      (await fake.requests()).filter((r) => r.endpoint === '/github-api/user/teams'),
    ).toHaveLength(2);
  });

  it.each([
    ['not a member', { orgs: [] }],
    ['invited but not yet a member', { orgs: [], pendingOrgs: ['acme'] }],
  ])('gives no org groups to someone %s', async (_, gh) => {
    const identity = await signIn(github(), {
      github: { ...gh, teams: [{ org: 'acme', slug: 'ops' }] },
    });
    expect(identity.groups).toEqual([]);
    expect(identity.userId).toBe('github-1001');
  });

  it('asks no org questions without an org, and leaves out an unverified email', async () => {
    const identity = await signIn(github({ org: undefined }), {
      github: { email_verified: false, name: null },
    });
    expect(identity).toEqual({ userId: 'github-1001', login: 'Alice-GH', groups: [] });
    expect(
      (await fake.requests()).some(
        (r) => r.endpoint.includes('/memberships/') || r.endpoint.endsWith('/teams'),
      ),
    ).toBe(false);
  });
});

describe('githubIdp: refusals', () => {
  it('refuses a code used twice (bad_verification_code)', async () => {
    const idp = github();
    const { data, callback } = await authorize(idp);
    await idp.finish(callback.clone(), data, CALLBACK);
    const message = await failure(idp.finish(callback, data, CALLBACK));
    expect(message).toMatch(
      /GitHub did not accept the authorization code \(bad_verification_code\)/,
    );
    expect(message).not.toContain(new URL(callback.url).searchParams.get('code'));
  });

  it('reports a sign-in declined at GitHub', async () => {
    expect(await failure(signIn(github(), { deny: true }))).toBe(
      'GitHub refused the sign-in: access_denied.',
    );
  });

  it('refuses wrong client credentials without echoing them', async () => {
    const message = await failure(signIn(github({ clientSecret: 'wrong-secret' })));
    expect(message).toMatch(/rejected this server's client credentials/);
    expect(message).not.toContain('wrong-secret');
  });

  it('says when the org restricts OAuth apps', async () => {
    const message = await failure(
      signIn(github({ org: 'locked' }), { github: { restrictedOrgs: ['locked'] } }),
    );
    expect(message).toMatch(/restricts OAuth app access/);
  });

  it('reports an API failure with its status', async () => {
    const broken = github({ apiUrl: `${fakeUrl()}/github-api/nowhere` });
    expect(await failure(signIn(broken))).toMatch(
      /GitHub's API answered GET \/user(\/emails)? with HTTP 404/,
    );
  });

  it('says when GitHub cannot be reached', async () => {
    const idp = github();
    const { data, callback } = await authorize(idp);
    const down = github({ webUrl: 'http://127.0.0.1:9' });
    expect(await failure(down.finish(callback, data, CALLBACK))).toBe(
      'GitHub (token exchange) could not be reached.',
    );
  });

  it('refuses plain http to anything but loopback', () => {
    expect(
      githubConfigProblem({
        clientId: 'a',
        clientSecret: 'b',
        webUrl: 'http://github.example.com',
        apiUrl: 'https://api.github.com',
      }),
    ).toMatch(/GITHUB_URL must be an https URL/);
    expect(
      githubConfigProblem({
        clientId: 'a',
        clientSecret: 'b',
        webUrl: 'https://github.com',
        apiUrl: 'https://api.github.com',
      }),
    ).toBeUndefined();
  });
});
