// Signing the same person in again through the same client replaces their grant to it: what
// `npm run token` does on each run (scripts/token.ts keeps one client per server), so /admin
// shows one grant for the person, and the token of the earlier sign-in stops working.
// ALLOWED_USERS=alice@example.com; /admin read by the administrator, admin@example.com.

import { describe, expect, it } from 'vitest';
import { openAsDevUser } from '../support/form-browser';
import { INIT, MCP_HEADERS, workerFetch } from '../support/worker/mcp';
import { Browser, codeFlowTokens, grantRow, ORIGIN, registerClient } from '../support/worker/oauth';

const CLIENT_NAME = 'npm run token';

/** The status of an MCP initialize with `token`: 200 while its grant lives, 401 after. */
const initialize = async (token: string): Promise<number> => {
  const res = await workerFetch(`${ORIGIN}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
    body: JSON.stringify(INIT),
  });
  await res.body?.cancel();
  return res.status;
};

describe('one client, one person, signed in twice', () => {
  it('leaves one grant on /admin, and the earlier token stops working', async () => {
    const clientId = await registerClient(CLIENT_NAME);
    const alice = { user: 'alice@example.com', groups: 'ops' };
    const first = (await codeFlowTokens(clientId, alice)).access_token;
    expect(await initialize(first)).toBe(200);
    const second = (await codeFlowTokens(clientId, alice)).access_token;
    expect(second).not.toBe(first);

    const admin = new Browser();
    const page = await openAsDevUser(admin, `${ORIGIN}/admin`, 'admin@example.com', 'ops');
    expect(page.status).toBe(200);
    const rows = page.html.split('<tr>').filter((r) => r.includes(`${CLIENT_NAME}<`));
    expect(rows).toHaveLength(1);
    expect(grantRow(page.html, CLIENT_NAME).row).toContain('alice@example.com');
    expect(await initialize(first)).toBe(401);
    expect(await initialize(second)).toBe(200);
  });
});
