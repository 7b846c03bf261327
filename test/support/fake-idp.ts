// A fake upstream identity provider for tests: one Node HTTP server on 127.0.0.1 that plays an
// OpenID Connect issuer and GitHub, with a control API to choose the next login or fault.
//   /oidc/...          issuer `${url}/oidc` (client_secret_basic and client_secret_post)
//   /oidc-post/...     issuer `${url}/oidc-post`, whose discovery says client_secret_post only
//   /oidc-mismatch/... discovery names the issuer `${url}/oidc` (a mix-up to be refused)
//   /github/...        GitHub web (authorize, access_token); /github-api/... the REST API
// Control API (JSON, no auth):
//   POST /control/next-login {NextLogin}  applies to the next authorize (OIDC or GitHub), then
//                                         the default user (DEFAULT_LOGIN) is back
//   POST /control/clients {client_id, client_secret, redirect_uris?}   adds a client
//   POST /control/rotate-key  -> {kid}    signs with a new key; the JWKS keeps the old one
//   POST /control/reset                   forgets next login, codes, tokens, log, added clients
//   GET  /control/requests -> {requests: LogEntry[]}   every non-control request, in order
// Client mcp-test-client / mcp-test-secret (FAKE_IDP_CLIENT) always exists, any redirect URI.
// It shares no code with src/auth: it is the other side of the wire.

import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleGithub } from './fake-idp-github.ts';
import { handleOidc } from './fake-idp-oidc.ts';

export const FAKE_IDP_CLIENT = { id: 'mcp-test-client', secret: 'mcp-test-secret' } as const;

export type Fault = 'badSignature' | 'wrongAudience' | 'expired' | 'wrongNonce' | 'wrongIssuer';

export interface GithubLogin {
  id: number;
  login: string;
  name?: string | null;
  /** The primary email; null for none. */
  email?: string | null;
  email_verified?: boolean;
  /** Orgs with an active membership. */
  orgs?: string[];
  /** Orgs with a pending invitation (membership state "pending"). */
  pendingOrgs?: string[];
  /** Orgs restricting OAuth apps: the membership API answers 403. */
  restrictedOrgs?: string[];
  teams?: { org: string; slug: string }[];
}

/** The body of POST /control/next-login; null removes a default claim. */
export interface NextLogin {
  sub?: string;
  email?: string | null;
  email_verified?: boolean | string | null;
  name?: string | null;
  preferred_username?: string | null;
  groups?: unknown;
  /** More ID token claims, e.g. { realm_access: { roles: [...] } }. */
  claims?: Record<string, unknown>;
  /** Claims left out of the ID token and served only by /oidc/userinfo. */
  userinfoOnly?: string[];
  github?: Partial<GithubLogin>;
  deny?: boolean;
  fault?: Fault;
}

export type Login = Omit<NextLogin, 'github'> & { sub: string; github: GithubLogin };

export const DEFAULT_LOGIN: Login = {
  sub: 'user-0001',
  email: 'alice@example.com',
  email_verified: true,
  name: 'Alice Example',
  preferred_username: 'alice',
  groups: ['pve-admins'],
  github: {
    id: 1001,
    login: 'Alice-GH',
    name: 'Alice Example',
    email: 'alice@example.com',
    orgs: ['acme'],
    teams: [{ org: 'acme', slug: 'ops' }],
  },
};

export interface LogEntry {
  endpoint: string;
  status: number;
  clientId?: string;
  clientAuth?: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** verified, mismatch, missing (challenge sent, no verifier) or not-used (no challenge). */
  pkce?: 'verified' | 'mismatch' | 'missing' | 'not-used';
  error?: string;
  scope?: string;
  redirectUri?: string;
  userAgent?: string;
  apiVersion?: string;
}

export interface Grant {
  kind: 'oidc' | 'github';
  issuer: string;
  clientId: string;
  redirectUri: string;
  challenge: string | null;
  nonce: string | null;
  scope: string;
  login: Login;
}

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

/** Everything the handlers share; reset by POST /control/reset (keys stay). */
export interface FakeState {
  url: string;
  keys: SigningKey[];
  /** Same kid as the current key, another key: what badSignature signs with. */
  rogue: SigningKey;
  clients: Map<string, { secret: string; redirectUris?: string[] }>;
  next: NextLogin | null;
  codes: Map<string, Grant>;
  tokens: Map<string, Grant>;
  log: LogEntry[];
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** Form or JSON body, flattened to strings (JSON objects stay in `json`). */
  form: URLSearchParams;
  json: unknown;
}

export interface FakeIdp {
  url: string;
  close(): Promise<void>;
}

export const randomToken = (bytes = 24): string => randomBytes(bytes).toString('base64url');
export const s256 = (verifier: string): string =>
  createHash('sha256').update(verifier).digest('base64url');

export function newKey(kid: string): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    kid,
    privateKey,
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' },
  };
}

export function signJwt(claims: Record<string, unknown>, key: KeyObject, kid: string): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'RS256', typ: 'JWT', kid })}.${part(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

/** Takes the pending next login (once) over the default user. */
export function takeLogin(state: FakeState): Login {
  const next = state.next ?? {};
  state.next = null;
  return { ...DEFAULT_LOGIN, ...next, github: { ...DEFAULT_LOGIN.github, ...next.github } };
}

function handleControl(state: FakeState, req: FakeRequest): Reply {
  const route = `${req.method} ${req.path}`;
  if (route === 'POST /control/next-login') {
    state.next = (req.json ?? {}) as NextLogin;
    return { status: 204 };
  }
  if (route === 'POST /control/clients') {
    const body = (req.json ?? {}) as {
      client_id?: string;
      client_secret?: string;
      redirect_uris?: string[];
    };
    if (!body.client_id || !body.client_secret)
      return { status: 400, body: { error: 'client_id and client_secret are required' } };
    state.clients.set(body.client_id, {
      secret: body.client_secret,
      redirectUris: body.redirect_uris,
    });
    return { status: 204 };
  }
  if (route === 'POST /control/rotate-key') {
    const key = newKey(`key-${state.keys.length + 1}`);
    state.keys.unshift(key);
    state.rogue = newKey(key.kid);
    return { status: 200, body: { kid: key.kid } };
  }
  if (route === 'POST /control/reset') {
    Object.assign(state, { next: null, log: [], codes: new Map(), tokens: new Map() });
    state.clients = new Map([[FAKE_IDP_CLIENT.id, { secret: FAKE_IDP_CLIENT.secret }]]);
    return { status: 204 };
  }
  if (route === 'GET /control/requests') return { status: 200, body: { requests: state.log } };
  return { status: 404, body: { error: `no control route ${route}` } };
}

async function readRequest(req: IncomingMessage): Promise<FakeRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const url = new URL(req.url ?? '/', 'http://fake');
  let json: unknown = null;
  let form = new URLSearchParams();
  if ((req.headers['content-type'] ?? '').includes('json') && text) {
    json = JSON.parse(text) as unknown;
    if (json && typeof json === 'object') {
      for (const [k, v] of Object.entries(json)) if (typeof v === 'string') form.set(k, v);
    }
  } else if (text) form = new URLSearchParams(text);
  return {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    headers: req.headers,
    form,
    json,
  };
}

function write(res: ServerResponse, reply: Reply): void {
  const isText = typeof reply.body === 'string';
  const headers: Record<string, string> = { 'cache-control': 'no-store', ...reply.headers };
  if (reply.body !== undefined && !headers['content-type']) {
    headers['content-type'] = isText ? 'text/plain; charset=utf-8' : 'application/json';
  }
  res.writeHead(reply.status, headers);
  res.end(reply.body === undefined ? undefined : isText ? reply.body : JSON.stringify(reply.body));
}

export async function startFakeIdp(): Promise<FakeIdp> {
  const first = newKey('key-1');
  const state: FakeState = {
    url: '',
    keys: [first],
    rogue: newKey(first.kid),
    clients: new Map([[FAKE_IDP_CLIENT.id, { secret: FAKE_IDP_CLIENT.secret }]]),
    next: null,
    codes: new Map(),
    tokens: new Map(),
    log: [],
  };
  const server = createServer((req, res) => {
    readRequest(req)
      .then((r) => {
        if (r.path.startsWith('/control/')) return handleControl(state, r);
        return (
          handleOidc(state, r) ??
          handleGithub(state, r) ?? { status: 404, body: { error: 'not_found' } }
        );
      })
      .then((reply) => write(res, reply))
      .catch((err: unknown) =>
        write(res, { status: 500, body: { error: 'server_error', message: String(err) } }),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: state.url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
