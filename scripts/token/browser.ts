// Signing a person in to a server through their own browser, the way an MCP client on their
// computer does (OAuth 2.1 authorization code with PKCE, a loopback redirect per RFC 8252): for a
// deployed server, whose identity provider only a person can get through. The OAuth client is the
// MCP SDK's own (`auth()`: discovery from the protected-resource metadata, dynamic registration,
// PKCE, the code exchange, the resource indicator); this file gives it a place to keep things, a
// browser and a loopback listener for the redirect.

import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  auth,
  discoverOAuthServerInfo,
  type OAuthClientProvider,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { openInBrowser } from '../processes.ts';
import { clientKnown, type SavedClients } from './clients.ts';

export interface BrowserSignIn {
  /** The server's origin, e.g. https://mcp.example.com. */
  server: string;
  /** Space-separated scopes to ask for; the person may untick some at consent. */
  scope: string;
  clients: SavedClients;
  /** Start the person's browser on the sign-in page (the URL is printed either way). */
  openBrowser: boolean;
  /** Progress for the person (stderr), never the token. */
  say(line: string): void;
  /** How long to wait for the person to finish signing in. */
  timeoutMs?: number;
}

export interface SignedIn {
  tokens: OAuthTokens;
  clientId: string;
}

interface Callback {
  code?: string;
  error?: string;
}

/** A listener on 127.0.0.1 (any free port) for the one redirect back from the server. */
async function listenForRedirect(
  state: string,
): Promise<{ server: Server; redirectUrl: string; redirect: Promise<Callback> }> {
  let settle!: (cb: Callback) => void;
  const redirect = new Promise<Callback>((resolve) => (settle = resolve));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    // A request without this sign-in's state is not its redirect (another program, or a page
    // that found the port): refused, and the sign-in goes on waiting for the real one.
    if (url.searchParams.get('state') !== state) {
      res
        .writeHead(400, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Not this sign-in.\n');
      return;
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    const outcome: Callback = error
      ? { error: [error, url.searchParams.get('error_description')].filter(Boolean).join(': ') }
      : code
        ? { code }
        : { error: 'the redirect carried no code' };
    res
      .writeHead(outcome.code ? 200 : 400, { 'content-type': 'text/plain; charset=utf-8' })
      .end(
        outcome.code
          ? 'Signed in. You can close this tab and go back to the terminal.\n'
          : `Sign-in did not complete: ${outcome.error}\n`,
      );
    settle(outcome);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return { server, redirectUrl: `http://127.0.0.1:${port}/callback`, redirect };
}

export async function signInWithBrowser(o: BrowserSignIn): Promise<SignedIn> {
  const mcpUrl = new URL('/mcp', o.server);
  const state = randomBytes(16).toString('base64url');
  const { server, redirectUrl, redirect } = await listenForRedirect(state);
  try {
    // A client this script registered earlier, unless the server no longer knows it (its
    // state was reset): then the SDK registers a new one.
    const saved = o.clients.get(o.server);
    if (saved) {
      const { authorizationServerMetadata } = await discoverOAuthServerInfo(mcpUrl);
      const tokenEndpoint =
        authorizationServerMetadata?.token_endpoint ?? new URL('/token', o.server).href;
      if (!(await clientKnown(tokenEndpoint, saved.client_id))) o.clients.set(o.server, undefined);
    }

    let verifier = '';
    let tokens: OAuthTokens | undefined;
    const provider: OAuthClientProvider = {
      redirectUrl,
      clientMetadata: {
        client_name: 'npm run token',
        redirect_uris: [redirectUrl],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      } satisfies OAuthClientMetadata,
      state: () => state,
      clientInformation: () => o.clients.get(o.server),
      saveClientInformation: (info: OAuthClientInformationMixed) =>
        o.clients.set(o.server, { client_id: info.client_id, issuer: info.issuer }),
      tokens: () => tokens,
      saveTokens: (t: OAuthTokens) => {
        tokens = t;
      },
      redirectToAuthorization: async (url: URL) => {
        o.say(`Sign in to ${o.server} in your browser:\n\n  ${url.href}\n`);
        if (o.openBrowser && !(await openInBrowser(url.href)))
          o.say('(No browser could be started here: open the address above yourself.)');
      },
      saveCodeVerifier: (v: string) => {
        verifier = v;
      },
      codeVerifier: () => verifier,
      // What the SDK asks to forget when the server refuses them (then it starts over, and this
      // run ends: its one code is spent).
      invalidateCredentials: (what) => {
        if (what === 'all' || what === 'client') o.clients.set(o.server, undefined);
        if (what === 'all' || what === 'tokens') tokens = undefined;
        if (what === 'all' || what === 'verifier') verifier = '';
      },
    };

    if ((await auth(provider, { serverUrl: mcpUrl, scope: o.scope })) !== 'REDIRECT')
      throw new Error('the server did not ask for a sign-in');
    const timeoutMs = o.timeoutMs ?? 5 * 60_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const back = await Promise.race([
      redirect,
      new Promise<Callback>((resolve) => {
        timer = setTimeout(
          () => resolve({ error: `nobody signed in within ${Math.round(timeoutMs / 1000)} s` }),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    if (!back.code) throw new Error(back.error);
    if (
      (await auth(provider, { serverUrl: mcpUrl, authorizationCode: back.code })) !== 'AUTHORIZED'
    )
      throw new Error('the code was not exchanged for a token');
    const clientId = o.clients.get(o.server)?.client_id;
    if (!tokens || !clientId) throw new Error('the server issued no token');
    return { tokens, clientId };
  } finally {
    // The browser may keep its connection open: close it too, so the script ends at once.
    server.close();
    server.closeAllConnections();
  }
}
