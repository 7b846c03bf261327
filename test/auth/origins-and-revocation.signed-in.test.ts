// Sign-in works on every local origin the Worker answers on (wrangler prints 127.0.0.1, people
// type localhost), and an administrator can cut someone off: after revoking a grant on /admin,
// its tokens get 401 and its MCP sessions are dead. Also: a consent post that is not a form is
// a 400, not a 500, and one too large is a 413 even without a Content-Length.
// ALLOWED_USERS=alice@example.com; the administrator is admin@example.com.

import { describe, expect, it } from 'vitest';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, INIT, MCP_HEADERS, text, workerFetch } from '../support/worker/mcp';
import { openAsDevUser } from '../support/form-browser';
import {
  asEditor,
  Browser,
  connectSignedIn,
  formField,
  grantRow,
  ORIGIN,
  ORIGIN_IP,
  startAuthorization,
  TestOAuthClient,
} from '../support/worker/oauth';
import { PER_USER_POLICY } from '../support/policies/auth';
import { usePolicy } from '../support/worker/policy';
import { freshDeployment } from '../support/worker/fresh';

// Limits count per person from zero: calls made in the files before this one do not count here.
freshDeployment();

usePolicy(PER_USER_POLICY, asEditor());

describe('sign-in on every local origin', () => {
  it.each([ORIGIN, ORIGIN_IP, ORIGIN])('signs in and calls a tool through %s', async (origin) => {
    const { client } = await connectSignedIn(
      'http',
      { user: 'alice@example.com' },
      new TestOAuthClient(),
      undefined,
      origin,
    );
    const result = await call(client, 'pve_list_vms', { limit: 1 });
    expect(result.isError, text(result)).toBeFalsy();
    await client.close();
  });

  it('publishes each origin as its own resource and issuer', async () => {
    for (const origin of [ORIGIN, ORIGIN_IP]) {
      const meta = (await (
        await workerFetch(`${origin}/.well-known/oauth-authorization-server`)
      ).json()) as { issuer: string };
      expect(meta.issuer).toBe(origin);
      const resource = (await (
        await workerFetch(`${origin}/.well-known/oauth-protected-resource`)
      ).json()) as { resource: string };
      expect(resource.resource).toBe(origin);
    }
  });
});

describe('revoking a grant on /admin', () => {
  it('stops its tokens at once and ends its sessions; other grants keep working', async () => {
    const victim = await connectSignedIn(
      'http',
      { user: 'mallory@example.com', groups: 'ops' },
      new TestOAuthClient("Mallory's client"),
    );
    const bystander = await connectSignedIn(
      'http',
      { user: 'mallory@example.com', groups: 'ops', scopes: ['pve:read'] },
      new TestOAuthClient("Mallory's other client"),
    );
    expect((await call(victim.client, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    const session = (victim.client.transport as StreamableHTTPClientTransport).sessionId!;
    const token = victim.auth.tokens()!.access_token;

    // An administrator signs in to /admin and sees the grant with its client and last use.
    const admin = new Browser();
    const login = await openAsDevUser(admin, `${ORIGIN}/admin`, 'admin@example.com', 'ops');
    expect(login.status).toBe(200);
    const page = login.html;
    expect(page).toContain('Mallory&#39;s client');
    const { row, field } = grantRow(page, 'Mallory&#39;s client');
    expect(row).toMatch(
      /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/td><td data-label="Last used">\d{4}-\d\d-\d\dT/,
    ); // created, last used
    // Each grant with the scopes the person ticked for it.
    expect(row).toContain(
      '<td data-label="Scopes" class="id"><code>pve:read pve:operate pve:provision</code></td>',
    );
    expect(grantRow(page, 'Mallory&#39;s other client').row).toContain(
      '<td data-label="Scopes" class="id"><code>pve:read</code></td>',
    );

    // Revoke asks first: the question names the person, the client and the grant. Opening it,
    // posting the row's fields without confirm=yes, or posting without the CSRF token changes
    // nothing.
    const query = new URLSearchParams({ user: field('user'), grant: field('grant') });
    const asked = await admin.get(`${ORIGIN}/admin/grants/revoke?${query}`);
    expect(asked.status).toBe(200);
    const question = await asked.text();
    expect(question).toContain('<h1>Revoke Mallory&#39;s client for mallory@example.com?</h1>');
    expect(question).toContain(field('grant'));
    const unconfirmed = await admin.post(`${ORIGIN}/admin/grants/revoke`, {
      user: field('user'),
      grant: field('grant'),
      csrf: formField(question, 'csrf'),
    });
    expect(unconfirmed.status).toBe(200);
    expect(await unconfirmed.text()).toContain('name="confirm" value="yes"');
    const forged = await admin.post(`${ORIGIN}/admin/grants/revoke`, {
      user: field('user'),
      grant: field('grant'),
      csrf: 'forged',
      confirm: 'yes',
    });
    expect(forged.status).toBe(403);
    expect((await call(victim.client, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    expect(
      (await admin.get(`${ORIGIN}/admin`).then((r) => r.text())).includes(field('grant')),
    ).toBe(true);

    const revoked = await admin.post(`${ORIGIN}/admin/grants/revoke`, {
      user: formField(question, 'user'),
      grant: formField(question, 'grant'),
      csrf: formField(question, 'csrf'),
      confirm: formField(question, 'confirm'),
    });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe('/admin?revoked=1#grants');
    // Asked again, the question says the grant is gone.
    expect((await admin.get(`${ORIGIN}/admin/grants/revoke?${query}`)).status).toBe(404);

    // The revoked grant's token: 401, on a new session and on the old one.
    const fresh = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
      body: JSON.stringify(INIT),
    });
    expect(fresh.status).toBe(401);
    const old = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(old.status).toBe(401);
    // Its session is dead for everyone, even a valid token of the same person.
    const hijack = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        authorization: `Bearer ${bystander.auth.tokens()!.access_token}`,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    });
    expect(hijack.status).toBe(404);
    // The other grant works on.
    expect((await call(bystander.client, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    await bystander.client.close();
  });
});

describe('POST /authorize that is not a form', () => {
  it('answers 400, not 500', async () => {
    const res = await workerFetch(`${ORIGIN}/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"decision":"approve"}',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/This form could not be read/);
  });
});

describe('POST /authorize over 64 KiB sent without a length', () => {
  it('answers 413 and consents to nothing: the same consent at its own size still goes on to sign-in', async () => {
    const browser = new Browser();
    const consent = await browser.get(await startAuthorization('http', new TestOAuthClient()));
    const handle = /name="handle" value="([^"]+)"/.exec(await consent.text())![1]!;
    const big = await browser.postChunked(`${ORIGIN}/authorize`, {
      handle,
      decision: 'approve',
      pad: 'x'.repeat(70 * 1024),
    });
    expect(big.status).toBe(413);
    expect(big.headers.get('location')).toBeNull();
    expect(await big.json()).toEqual({
      error: 'payload_too_large',
      message: 'The request body is larger than 65536 bytes.',
    });
    const small = await browser.post(`${ORIGIN}/authorize`, {
      handle,
      decision: 'approve',
      scope: ['pve:read'],
    });
    expect(small.status).toBe(302);
    expect(new URL(small.headers.get('location')!, ORIGIN).pathname).toBe('/dev-idp/login');
  });
});
