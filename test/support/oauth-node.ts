// An MCP client signed in to a running server (wrangler dev) as a given person through the dev
// identity provider, the way a real client does it: dynamic registration, consent, sign-in,
// PKCE code exchange. For Node-side tests and the benchmark.

import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FormBrowser, signInWithDevIdp } from './form-browser.ts';

const CALLBACK = 'http://127.0.0.1:9/callback'; // never visited: the code is read from the redirect

/** Registers a public client (PKCE, no secret) named `name`, as `npm run token` and tests do. */
export async function registerDevClient(serverUrl: string, name = 'Node client'): Promise<string> {
  const reg = await fetch(`${serverUrl}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }),
  });
  if (!reg.ok) throw new Error(`client registration failed: ${reg.status}`);
  return ((await reg.json()) as { client_id: string }).client_id;
}

/**
 * An access token for `user` through the dev IdP, from the client `clientId` (one registered by
 * registerDevClient: signing in again through it replaces the person's earlier grant to it) or
 * from a freshly registered one; `scope` is asked for, and granted, when given (`pve:read
 * pve:guest`; `policy:edit` for the policy API's writes); without it, what the consent page ticks
 * (read, operate, provision).
 */
export async function devAccessToken(
  serverUrl: string,
  user: string,
  groups = '',
  scope = '',
  clientId?: string,
): Promise<string> {
  clientId ??= await registerDevClient(serverUrl);
  const verifier = randomBytes(32).toString('base64url');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    state: randomBytes(8).toString('hex'),
    resource: serverUrl,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...(scope ? { scope } : {}),
  });
  const login = await signInWithDevIdp(
    new FormBrowser((u, i) => fetch(u, i)),
    `${serverUrl}/authorize?${params}`,
    // What was asked for is what gets ticked (a person granting exactly that); nothing asked:
    // what the consent page ticks itself.
    { user, groups, ...(scope ? { scopes: scope.split(' ') } : {}) },
  );
  const code = login.location ? new URL(login.location).searchParams.get('code') : null;
  if (!code)
    throw new Error(
      `sign-in as ${user} failed: ${login.status} ${login.finalHtml?.slice(0, 200) ?? ''}`,
    );
  const token = await fetch(`${serverUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      client_id: clientId,
      code_verifier: verifier,
      resource: serverUrl,
    }),
  });
  if (!token.ok) throw new Error(`token exchange failed: ${token.status}`);
  return ((await token.json()) as { access_token: string }).access_token;
}

export async function devSignedInClient(
  serverUrl: string,
  user: string,
  groups = '',
): Promise<Client> {
  const accessToken = await devAccessToken(serverUrl, user, groups);
  const client = new Client({ name: `node-${user}`, version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
    }),
  );
  return client;
}
