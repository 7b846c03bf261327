// The fake IdP's GitHub face (see fake-idp.ts): /github is the web side (authorize redirects at
// once; access_token answers errors with HTTP 200 like GitHub), /github-api the REST calls a
// sign-in needs. API calls need a bearer token and a User-Agent, as on api.github.com.

import { authorize, checkPkce, clientAuth } from './fake-idp-oidc.ts';
import {
  randomToken,
  type FakeRequest,
  type FakeState,
  type GithubLogin,
  type LogEntry,
  type Reply,
} from './fake-idp.ts';

export function handleGithub(state: FakeState, req: FakeRequest): Reply | undefined {
  if (req.method === 'GET' && req.path === '/github/login/oauth/authorize') {
    return authorize(state, req, 'github', `${state.url}/github`);
  }
  if (req.method === 'POST' && req.path === '/github/login/oauth/access_token')
    return accessToken(state, req);
  if (req.path.startsWith('/github-api/')) return api(state, req);
  return undefined;
}

function accessToken(state: FakeState, req: FakeRequest): Reply {
  const auth = clientAuth(state, req);
  const entry: LogEntry = {
    endpoint: req.path,
    status: 200,
    clientId: auth.id,
    clientAuth: auth.method,
  };
  state.log.push(entry);
  const json = (req.headers.accept ?? '').includes('application/json');
  const answer = (body: Record<string, string>): Reply =>
    json
      ? { status: 200, body }
      : {
          status: 200,
          body: new URLSearchParams(body).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        };
  const fail = (error: string): Reply => {
    entry.error = error;
    return answer({
      error,
      error_description: `fake GitHub: ${error}`,
      error_uri: 'https://docs.github.com/apps',
    });
  };
  if (!auth.ok) return fail('incorrect_client_credentials');
  const code = req.form.get('code') ?? '';
  const grant = state.codes.get(code);
  state.codes.delete(code);
  if (grant?.kind !== 'github' || grant.clientId !== auth.id) return fail('bad_verification_code');
  const redirectUri = req.form.get('redirect_uri');
  if (redirectUri !== null && redirectUri !== grant.redirectUri)
    return fail('redirect_uri_mismatch');
  entry.pkce = checkPkce(grant, req.form.get('code_verifier'));
  if (entry.pkce === 'mismatch' || entry.pkce === 'missing') return fail('bad_verification_code');
  const token = `gho_${randomToken(18)}`;
  state.tokens.set(token, grant);
  return answer({
    access_token: token,
    token_type: 'bearer',
    scope: grant.scope.split(' ').filter(Boolean).join(','),
  });
}

const has = (list: string[] | undefined, org: string): boolean =>
  (list ?? []).some((o) => o.toLowerCase() === org.toLowerCase());

function api(state: FakeState, req: FakeRequest): Reply {
  const entry: LogEntry = {
    endpoint: req.path,
    status: 200,
    userAgent: req.headers['user-agent'],
    apiVersion: String(req.headers['x-github-api-version'] ?? ''),
  };
  state.log.push(entry);
  const reply = (status: number, body: unknown, headers?: Record<string, string>): Reply => {
    entry.status = status;
    return { status, body, headers };
  };
  if (!req.headers['user-agent'])
    return reply(403, {
      message:
        'Request forbidden by administrative rules. Please make sure your request has a User-Agent header',
    });
  const token = /^(?:bearer|token) (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const grant = state.tokens.get(token);
  if (grant?.kind !== 'github') return reply(401, { message: 'Bad credentials' });
  const gh: GithubLogin = grant.login.github;
  const path = req.path.slice('/github-api'.length);
  if (req.method !== 'GET') return reply(404, { message: 'Not Found' });
  if (path === '/user') {
    return reply(200, {
      login: gh.login,
      id: gh.id,
      node_id: `U_${gh.id}`,
      type: 'User',
      name: gh.name ?? null,
      email: null,
    });
  }
  if (path === '/user/emails') {
    const noreply = {
      email: `${gh.id}+${gh.login}@users.noreply.github.com`,
      primary: false,
      verified: true,
      visibility: null,
    };
    const primary = gh.email
      ? [
          {
            email: gh.email,
            primary: true,
            verified: gh.email_verified ?? true,
            visibility: 'private',
          },
        ]
      : [];
    return reply(200, [...primary, noreply]);
  }
  if (path === '/user/teams') {
    const perPage = Number(req.query.get('per_page') ?? 30);
    const page = Number(req.query.get('page') ?? 1);
    const all = (gh.teams ?? []).map((t, i) => ({
      id: i + 1,
      slug: t.slug,
      name: t.slug,
      organization: { login: t.org },
    }));
    const next =
      page * perPage < all.length
        ? `${state.url}/github-api/user/teams?per_page=${perPage}&page=${page + 1}`
        : undefined;
    return reply(
      200,
      all.slice((page - 1) * perPage, page * perPage),
      next ? { link: `<${next}>; rel="next"` } : undefined,
    );
  }
  const org = /^\/user\/memberships\/orgs\/([^/]+)$/.exec(path)?.[1];
  if (org !== undefined) {
    const name = decodeURIComponent(org);
    if (has(gh.restrictedOrgs, name))
      return reply(403, {
        message: `the \`${name}\` organization has enabled OAuth App access restrictions`,
      });
    const pending = has(gh.pendingOrgs, name);
    if (!pending && !has(gh.orgs, name)) return reply(404, { message: 'Not Found' });
    return reply(200, {
      state: pending ? 'pending' : 'active',
      role: 'member',
      organization: { login: name },
      user: { login: gh.login },
    });
  }
  return reply(404, { message: 'Not Found' });
}
