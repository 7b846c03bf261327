// Signing in for both eras' tests: a real OAuth grant through the dev sign-in (the v1 SDK client's
// OAuth support, the consent page, the dev IdP), whose access token the other clients then use;
// and raw 2026-07-28 requests, for what no well-behaved client sends (tampered or replayed state).

import { connectSignedIn, TestOAuthClient } from '../auth/helpers/oauth';
import { ORIGIN, workerFetch } from '../worker/helpers/mcp';

export async function signedInToken(user: string): Promise<string> {
  const auth = new TestOAuthClient(`${user}'s client`);
  const { client } = await connectSignedIn('http', { user, groups: 'ops' }, auth);
  await client.close();
  return auth.tokens()!.access_token;
}

export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

/** One raw 2026-07-28 tools/call; `extra` goes into params (inputResponses, requestState). */
export async function rawCall(token: string, name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}, id = 1, origin = ORIGIN) {
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
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...extra, _meta: ENVELOPE } }),
  });
  const text = await res.text();
  // An empty body: a refusal before MCP (the OAuth layer's 401 says why in its challenge).
  const body = (!text ? {} : text.startsWith('{') ? JSON.parse(text) : JSON.parse(text.split('\n').find((l) => l.startsWith('data: '))!.slice(6))) as {
    result?: Record<string, unknown> & { requestState?: string; resultType?: string };
    error?: { code: number; message: string; data?: Record<string, unknown> };
  };
  return { status: res.status, challenge: res.headers.get('www-authenticate'), ...body };
}
