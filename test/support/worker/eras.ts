// Signing in for both eras' tests: a real OAuth grant through the dev sign-in (the v1 SDK client's
// OAuth support, the consent page, the dev IdP), whose access token the other clients then use;
// revoking a grant on /admin as an administrator does; and raw 2026-07-28 requests, for what no
// well-behaved client sends (tampered or replayed state) and for refusals before MCP (401).

import { expect } from 'vitest';
import { Browser, connectSignedIn, revokeOnAdminPage, TestOAuthClient } from './oauth';
import { openAsDevUser } from '../form-browser';
import { ORIGIN, workerFetch } from './mcp';

export function signedInToken(user: string): Promise<string> {
  return tokenFor(user, `${user}'s client`);
}

/** Signs `user` in through a client called `clientName`; its access token. */
export async function tokenFor(user: string, clientName: string): Promise<string> {
  const auth = new TestOAuthClient(clientName);
  const { client } = await connectSignedIn('http', { user, groups: 'ops' }, auth);
  await client.close();
  return auth.tokens()!.access_token;
}

/** Revokes the grant of the client called `clientName` on /admin, as an administrator does. */
export async function revokeOnAdmin(clientName: string): Promise<void> {
  const admin = new Browser();
  const { html } = await openAsDevUser(admin, `${ORIGIN}/admin`, 'admin@example.com', 'ops');
  const res = await revokeOnAdminPage(admin, html, clientName);
  expect(res.status).toBe(303);
}

export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

/**
 * One raw 2026-07-28 tools/call (`args` undefined: without `arguments`, which MCP allows);
 * `extra` goes into params (inputResponses, requestState); `to` names another origin or another
 * envelope (e.g. one that declares no elicitation).
 */
export async function rawCall(
  token: string,
  name: string,
  args: Record<string, unknown> | undefined,
  extra: Record<string, unknown> = {},
  id = 1,
  to: { origin?: string; envelope?: Record<string, unknown> } = {},
) {
  const { origin = ORIGIN, envelope = ENVELOPE } = to;
  const res = await workerFetch(`${origin}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name,
        ...(args === undefined ? {} : { arguments: args }),
        ...extra,
        _meta: envelope,
      },
    }),
  });
  const text = await res.text();
  // An empty body: a refusal before MCP (the OAuth layer's 401 says why in its challenge).
  const body = (
    !text
      ? {}
      : text.startsWith('{')
        ? JSON.parse(text)
        : JSON.parse(
            text
              .split('\n')
              .find((l) => l.startsWith('data: '))!
              .slice(6),
          )
  ) as {
    result?: Record<string, unknown> & { requestState?: string; resultType?: string };
    error?: { code: number; message: string; data?: Record<string, unknown> };
  };
  return { status: res.status, challenge: res.headers.get('www-authenticate'), ...body };
}
