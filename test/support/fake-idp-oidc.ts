// The fake IdP's OpenID Connect issuers (see fake-idp.ts): discovery, JWKS, an authorize endpoint
// that redirects at once (no page), a token endpoint that checks client auth, code, redirect URI
// and PKCE before it signs an ID token (or a faulty one), and userinfo.

import {
  randomToken,
  s256,
  signJwt,
  takeLogin,
  type FakeRequest,
  type FakeState,
  type Grant,
  type LogEntry,
  type Login,
  type Reply,
} from './fake-idp.ts';

const ISSUERS = ['oidc', 'oidc-post', 'oidc-mismatch'];

export function handleOidc(state: FakeState, req: FakeRequest): Reply | undefined {
  const match = /^\/([a-z-]+)(\/.*)$/.exec(req.path);
  const name = match?.[1] ?? '';
  if (!ISSUERS.includes(name)) return undefined;
  const base = `${state.url}/${name}`;
  const issuer = name === 'oidc-mismatch' ? `${state.url}/oidc` : base;
  switch (`${req.method} ${match?.[2]}`) {
    case 'GET /.well-known/openid-configuration':
      state.log.push({ endpoint: req.path, status: 200 });
      return { status: 200, body: discovery(issuer, base, name) };
    case 'GET /jwks':
      state.log.push({ endpoint: req.path, status: 200 });
      return { status: 200, body: { keys: state.keys.map((k) => k.jwk) } };
    case 'GET /authorize':
      return authorize(state, req, 'oidc', issuer);
    case 'POST /token':
      return token(state, req, issuer, name === 'oidc-post');
    case 'GET /userinfo':
    case 'POST /userinfo':
      return userinfo(state, req);
  }
  return { status: 404, body: { error: 'not_found' } };
}

function discovery(issuer: string, base: string, name: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    jwks_uri: `${base}/jwks`,
    userinfo_endpoint: `${base}/userinfo`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    scopes_supported: ['openid', 'email', 'profile', 'groups'],
    token_endpoint_auth_methods_supported:
      name === 'oidc-post' ? ['client_secret_post'] : ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    grant_types_supported: ['authorization_code'],
    authorization_response_iss_parameter_supported: true,
  };
}

/** Both faces' authorize: no page, a 302 straight back with a code (or access_denied). */
export function authorize(
  state: FakeState,
  req: FakeRequest,
  kind: Grant['kind'],
  issuer: string,
): Reply {
  const q = req.query;
  const clientId = q.get('client_id') ?? '';
  const client = state.clients.get(clientId);
  const redirectUri = q.get('redirect_uri') ?? '';
  const entry: LogEntry = {
    endpoint: req.path,
    status: 400,
    clientId,
    scope: q.get('scope') ?? '',
    redirectUri,
  };
  state.log.push(entry);
  // Like a real IdP: a bad client or redirect URI gets an error page, never a redirect.
  if (!client) return { status: 400, body: `unknown client_id ${clientId}` };
  if (
    !URL.canParse(redirectUri) ||
    (client.redirectUris && !client.redirectUris.includes(redirectUri))
  ) {
    return { status: 400, body: 'redirect_uri is not registered' };
  }
  const target = new URL(redirectUri);
  if (q.has('state')) target.searchParams.set('state', q.get('state') ?? '');
  if (kind === 'oidc') target.searchParams.set('iss', issuer);
  const challenge = q.get('code_challenge');
  const login = takeLogin(state);
  if (kind === 'oidc' && q.get('response_type') !== 'code') {
    target.searchParams.set('error', 'unsupported_response_type');
  } else if (challenge && q.get('code_challenge_method') !== 'S256') {
    target.searchParams.set('error', 'invalid_request');
  } else if (login.deny) {
    target.searchParams.set('error', 'access_denied');
    target.searchParams.set('error_description', 'The user declined.');
  } else {
    const code = randomToken();
    state.codes.set(code, {
      kind,
      issuer,
      clientId,
      redirectUri,
      challenge,
      nonce: q.get('nonce'),
      scope: entry.scope ?? '',
      login,
    });
    target.searchParams.set('code', code);
  }
  entry.status = 302;
  return { status: 302, headers: { location: target.href } };
}

/** RFC 6749 2.3.1: Basic credentials are form-urlencoded before base64. */
const formDecode = (value: string): string => decodeURIComponent(value.replace(/\+/g, ' '));

/** Who the client says it is, and how; `ok` when the secret matches a known client. */
export function clientAuth(
  state: FakeState,
  req: FakeRequest,
): { id: string; method: NonNullable<LogEntry['clientAuth']>; ok: boolean } {
  const header = req.headers.authorization ?? '';
  let id = req.form.get('client_id') ?? '';
  let secret = req.form.get('client_secret');
  let method: NonNullable<LogEntry['clientAuth']> = secret === null ? 'none' : 'client_secret_post';
  if (/^basic /i.test(header)) {
    if (secret !== null) return { id, method: 'client_secret_basic', ok: false }; // two methods at once
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    [id, secret, method] = [
      formDecode(decoded.slice(0, colon)),
      formDecode(decoded.slice(colon + 1)),
      'client_secret_basic',
    ];
  }
  return { id, method, ok: secret !== null && state.clients.get(id)?.secret === secret };
}

export function checkPkce(grant: Grant, verifier: string | null): NonNullable<LogEntry['pkce']> {
  if (!grant.challenge) return 'not-used';
  if (!verifier) return 'missing';
  return s256(verifier) === grant.challenge ? 'verified' : 'mismatch';
}

function token(state: FakeState, req: FakeRequest, issuer: string, postOnly: boolean): Reply {
  const auth = clientAuth(state, req);
  const entry: LogEntry = {
    endpoint: req.path,
    status: 400,
    clientId: auth.id,
    clientAuth: auth.method,
  };
  state.log.push(entry);
  const fail = (status: number, error: string): Reply => {
    Object.assign(entry, { status, error });
    return { status, body: { error, error_description: `fake IdP: ${error}` } };
  };
  if (req.form.get('grant_type') !== 'authorization_code')
    return fail(400, 'unsupported_grant_type');
  if (!auth.ok || (postOnly && auth.method !== 'client_secret_post'))
    return fail(401, 'invalid_client');
  const code = req.form.get('code') ?? '';
  const grant = state.codes.get(code);
  state.codes.delete(code); // single use, even when the rest fails
  if (grant?.kind !== 'oidc' || grant.issuer !== issuer || grant.clientId !== auth.id)
    return fail(400, 'invalid_grant');
  entry.pkce = checkPkce(grant, req.form.get('code_verifier'));
  if (entry.pkce === 'mismatch' || entry.pkce === 'missing') return fail(400, 'invalid_grant');
  if (req.form.get('redirect_uri') !== grant.redirectUri) return fail(400, 'invalid_grant');
  const accessToken = randomToken();
  state.tokens.set(accessToken, grant);
  entry.status = 200;
  return {
    status: 200,
    body: {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 300,
      scope: grant.scope,
      id_token: idToken(state, grant),
    },
  };
}

function profileClaims(login: Login): Record<string, unknown> {
  const { email, email_verified, name, preferred_username, groups } = login;
  const all: Record<string, unknown> = {
    email,
    email_verified,
    name,
    preferred_username,
    groups,
    ...login.claims,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== null && v !== undefined));
}

function idToken(state: FakeState, grant: Grant): string {
  const now = Math.floor(Date.now() / 1000);
  const { login } = grant;
  const claims: Record<string, unknown> = {
    iss: grant.issuer,
    sub: login.sub,
    aud: grant.clientId,
    exp: now + 300,
    iat: now,
    auth_time: now,
    ...(grant.nonce ? { nonce: grant.nonce } : {}),
    ...profileClaims(login),
  };
  for (const name of login.userinfoOnly ?? []) delete claims[name];
  if (login.fault === 'wrongAudience') claims.aud = 'some-other-client';
  if (login.fault === 'expired')
    Object.assign(claims, { exp: now - 600, iat: now - 900, auth_time: now - 900 });
  if (login.fault === 'wrongNonce') claims.nonce = 'not-the-nonce-you-sent';
  if (login.fault === 'wrongIssuer') claims.iss = 'https://evil.example';
  const [current] = state.keys;
  if (!current) throw new Error('no signing key');
  const key = login.fault === 'badSignature' ? state.rogue : current;
  return signJwt(claims, key.privateKey, key.kid);
}

function userinfo(state: FakeState, req: FakeRequest): Reply {
  const token = /^bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const grant = state.tokens.get(token);
  state.log.push({ endpoint: req.path, status: grant?.kind === 'oidc' ? 200 : 401 });
  if (grant?.kind !== 'oidc')
    return { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } };
  return { status: 200, body: { sub: grant.login.sub, ...profileClaims(grant.login) } };
}
