// Drives the OAuth flow the way an MCP client and a person in a browser would: the MCP SDK
// client's own OAuth support (DCR, PKCE, token exchange, refresh) with a test OAuthClientProvider,
// and a small cookie-keeping "browser" that submits the consent and sign-in forms.

import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  ElicitRequestSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import {
  FormBrowser,
  signInUpstream,
  signInWithDevIdp,
  type Login,
  type LoginResult,
} from '../form-browser';
import { workerFetch } from './mcp';

export type { Login };

export const ORIGIN = 'http://localhost';
/** The other local origin wrangler prints; the Worker must sign people in on both. */
export const ORIGIN_IP = 'http://127.0.0.1';
const WORKER_ORIGINS = new Set([ORIGIN, ORIGIN_IP]);
export const REDIRECT = 'http://127.0.0.1:33418/oauth/callback';

/** An MCP client's OAuth state, kept in memory; records where it was sent to sign in. */
export class TestOAuthClient implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifiers: string[] = [];

  constructor(readonly name = 'Test MCP client') {}

  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    // The SSE transport can start two authorizations at once (the stream and the start both see
    // the 401); like a real client, keep the first registration and the URL that goes with it.
    this.info ??= info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    if (this.info && url.searchParams.get('client_id') !== this.info.client_id) return;
    this.authorizationUrl ??= url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifiers.push(verifier);
  }
  /** The verifier whose S256 challenge is in the authorization URL we kept. */
  async codeVerifier(): Promise<string> {
    const challenge = this.authorizationUrl?.searchParams.get('code_challenge');
    for (const v of this.verifiers) {
      const digest = new Uint8Array(
        await crypto.subtle.digest('SHA-256', new TextEncoder().encode(v)),
      );
      const b64 = btoa(String.fromCharCode(...digest))
        .replace(/\+/g, '-')
        .replace(/\//g, '_')
        .replace(/=+$/, '');
      if (b64 === challenge) return v;
    }
    throw new Error('no code verifier matches the authorization URL');
  }
}

/** A browser tab: the Worker under test at its local origins, real HTTP elsewhere (the fake IdP). */
export class Browser extends FormBrowser {
  constructor() {
    super((url, init) =>
      WORKER_ORIGINS.has(new URL(url).origin) ? workerFetch(url, init) : fetch(url, init),
    );
  }
}

/** Registers a public client (PKCE, no secret) called `name` on the Worker; its client_id. */
export async function registerClient(
  name: string,
  grantTypes: readonly string[] = ['authorization_code'],
): Promise<string> {
  const reg = await workerFetch(`${ORIGIN}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: grantTypes,
      response_types: ['code'],
    }),
  });
  return ((await reg.json()) as { client_id: string }).client_id;
}

export interface CodeTokens {
  access_token: string;
  refresh_token?: string;
  scope: string;
}

/**
 * Tokens for `login` through `clientId`, as a client gets them: authorization request with PKCE
 * (asking for `scopes` when given, which are then ticked at consent), the dev sign-in, the code
 * exchange. Fails the test when the exchange does.
 */
export async function codeFlowTokens(
  clientId: string,
  login: Login,
  scopes?: readonly string[],
): Promise<CodeTokens> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const url = new URL(`${ORIGIN}/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: randomBytes(8).toString('hex'),
    resource: ORIGIN,
    ...(scopes ? { scope: scopes.join(' ') } : {}),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  const signedIn = await signIn(url, scopes ? { ...login, scopes: [...scopes] } : login);
  const code = new URL(signedIn.location!).searchParams.get('code')!;
  return exchangeCode(ORIGIN, clientId, code, verifier);
}

/**
 * A public client's code exchange (PKCE, the resource named) at the Worker on `origin`, for a
 * code sent to REDIRECT. Fails the test when the exchange does.
 */
export async function exchangeCode(
  origin: string,
  clientId: string,
  code: string,
  verifier: string,
): Promise<CodeTokens> {
  const res = await workerFetch(`${origin}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource: origin,
    }),
  });
  if (res.status !== 200) throw new Error(`code exchange: ${res.status} ${await res.text()}`);
  return (await res.json()) as CodeTokens;
}

/**
 * A policy editor's bearer header, for usePolicy (./policy.ts) in a signed-in
 * project: `login` (a POLICY_EDITORS person) signed in once, through a client of its own, with
 * the scope `policy:edit`, as a CI job pushing policies is.
 */
export function asEditor(
  login: Login = { user: 'editor@example.com', groups: 'ops' },
): () => Promise<Record<string, string>> {
  let token: Promise<string> | undefined;
  return async () => {
    token ??= registerClient('policy fixture').then(
      async (clientId) => (await codeFlowTokens(clientId, login, ['policy:edit'])).access_token,
    );
    return { authorization: `Bearer ${await token}` };
  };
}

/** Consent, then sign in with the dev IdP; returns where the browser was finally sent. */
export function signIn(
  authorizationUrl: URL,
  login: Login,
  browser: FormBrowser = new Browser(),
): Promise<LoginResult> {
  return signInWithDevIdp(browser, authorizationUrl.toString(), login);
}

/**
 * The row of /admin's grants table for the client called `clientName` (as the page writes it,
 * HTML-escaped), and a field of that row's Revoke form (which only asks: a GET).
 */
export function grantRow(
  html: string,
  clientName: string,
): { row: string; field(name: string): string } {
  const row = html.split('<tr>').find((r) => r.includes(`${clientName}<`))!;
  const form = row.match(
    /<form method="get" action="\/admin\/grants\/revoke">[\s\S]*?<\/form>/,
  )![0];
  return { row, field: (name) => form.match(new RegExp(`name="${name}" value="([^"]*)"`))![1]! };
}

/** A field of the first form on a page (e.g. the revoke question's CSRF token). */
export function formField(html: string, name: string): string {
  return html.match(new RegExp(`name="${name}" value="([^"]*)"`))![1]!;
}

/**
 * Revokes a grant on /admin as an administrator does: the row's Revoke button opens the question
 * (which changes nothing), and the question's form revokes. Returns the revoking post's answer.
 */
export async function revokeOnAdminPage(
  admin: FormBrowser,
  adminHtml: string,
  clientName: string,
): Promise<Response> {
  const { field } = grantRow(adminHtml, clientName);
  const query = new URLSearchParams({ user: field('user'), grant: field('grant') });
  const asked = await admin.get(`${ORIGIN}/admin/grants/revoke?${query}`);
  if (asked.status !== 200) throw new Error(`revoke question: ${asked.status}`);
  const question = await asked.text();
  return admin.post(`${ORIGIN}/admin/grants/revoke`, {
    csrf: formField(question, 'csrf'),
    user: formField(question, 'user'),
    grant: formField(question, 'grant'),
    confirm: formField(question, 'confirm'),
  });
}

export type Kind = 'http' | 'sse';

function transport(kind: Kind, auth: TestOAuthClient, origin = ORIGIN) {
  return kind === 'http'
    ? new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
        fetch: workerFetch,
        authProvider: auth,
      })
    : new SSEClientTransport(new URL(`${origin}/sse`), {
        fetch: workerFetch,
        authProvider: auth,
        eventSourceInit: { fetch: workerFetch },
      });
}

export type ElicitAnswer = (
  params: ElicitRequest['params'],
) => ElicitResult | Promise<ElicitResult>;

/** An MCP client; with `elicit`, it declares the elicitation capability and answers with it. */
function newClient(elicit?: ElicitAnswer): Client {
  const client = new Client(
    { name: 'vitest-oauth', version: '1' },
    {
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      capabilities: elicit ? { elicitation: {} } : {},
    },
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params));
  return client;
}

/**
 * The whole flow: connect (401 → DCR → authorization URL), sign in as `login`, hand the code to
 * the transport, and connect again. Returns the connected client and its OAuth state.
 */
export async function connectSignedIn(
  kind: Kind,
  login: Login | 'upstream',
  auth = new TestOAuthClient(),
  elicit?: ElicitAnswer,
  origin = ORIGIN,
): Promise<{ client: Client; auth: TestOAuthClient }> {
  const first = transport(kind, auth, origin);
  await expectUnauthorized(newClient().connect(first));
  const result =
    login === 'upstream'
      ? await signInUpstream(new Browser(), auth.authorizationUrl!.toString(), REDIRECT)
      : await signIn(auth.authorizationUrl!, login);
  const code = result.location ? new URL(result.location).searchParams.get('code') : null;
  if (!code)
    throw new Error(
      `sign-in gave no code: ${result.status} ${result.finalHtml?.slice(0, 300) ?? result.location}`,
    );
  await first.finishAuth(code);
  const client = newClient(elicit);
  await client.connect(transport(kind, auth, origin));
  return { client, auth };
}

/** Connects without tokens: registers the client and returns where it would send the browser. */
export async function startAuthorization(kind: Kind, auth: TestOAuthClient): Promise<string> {
  await expectUnauthorized(newClient().connect(transport(kind, auth)));
  return auth.authorizationUrl!.toString();
}

/** Connects with tokens the client already holds (no sign-in). */
export async function connectWith(
  kind: Kind,
  auth: TestOAuthClient,
  origin = ORIGIN,
): Promise<Client> {
  const client = newClient();
  await client.connect(transport(kind, auth, origin));
  return client;
}

async function expectUnauthorized(connecting: Promise<void>): Promise<void> {
  try {
    await connecting;
  } catch (err) {
    if (err instanceof Error && /unauthorized/i.test(`${err.name} ${err.message}`)) return;
    throw err;
  }
  throw new Error('expected the first connection to need authorization');
}
