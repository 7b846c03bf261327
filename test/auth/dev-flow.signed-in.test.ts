// OAuth 2.1 end to end in workerd with the dev identity provider, driven by the MCP SDK client's
// own OAuth support: DCR, consent, sign-in, PKCE code exchange, tools/call over /mcp and /sse,
// refresh; and the refusals: no token, a token for another resource, a user outside the
// allow-list, a denied consent, a forged form, someone else's session.
// ALLOWED_USERS=alice@example.com, ALLOWED_GROUPS=ops,dev; pve_list_vms: 3/hour per user, 2/hour per
// grant (test/support/policies/auth.ts).

import { createExecutionContext, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../src/env';
import type { ProxmoxMcp } from '../../src/mcp/legacy/agent';
import { mcpApi } from '../../src/mcp/route';
import { call, INIT, MCP_HEADERS, text, workerFetch } from '../support/worker/mcp';
import {
  asEditor,
  Browser,
  connectSignedIn,
  connectWith,
  ORIGIN,
  REDIRECT,
  signIn,
  startAuthorization,
  TestOAuthClient,
} from '../support/worker/oauth';
import { scopeBoxes } from '../support/form-browser';
import { PER_USER_POLICY } from '../support/policies/auth';
import { usePolicy } from '../support/worker/policy';
import { freshDeployment } from '../support/worker/fresh';

// Limits count per person from zero: calls made in the files before this one do not count here.
freshDeployment();

usePolicy(PER_USER_POLICY, asEditor());

describe('without a token', () => {
  it.each(['/mcp', '/sse'])('%s answers 401 with the resource metadata URL', async (path) => {
    const res = await workerFetch(`${ORIGIN}${path}`, {
      method: path === '/mcp' ? 'POST' : 'GET',
      headers: MCP_HEADERS,
      body: path === '/mcp' ? JSON.stringify(INIT) : undefined,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(
      /^Bearer .*resource_metadata="http:\/\/localhost\/\.well-known\/oauth-protected-resource/,
    );
    // And a body that says what to do, for a person trying the URL (the Inspector prints it).
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error_description).toMatch(
      /needs a signed-in person\. Connect with a client that supports OAuth \(it reads http:\/\/localhost\/\.well-known\/oauth-protected-resource/,
    );
  });

  it('publishes RFC 9728 and RFC 8414 metadata with PKCE S256 and registration', async () => {
    const resource = (await (
      await workerFetch(`${ORIGIN}/.well-known/oauth-protected-resource`)
    ).json()) as Record<string, unknown>;
    expect(resource).toMatchObject({
      resource: 'http://localhost',
      authorization_servers: ['http://localhost'],
    });
    const server = (await (
      await workerFetch(`${ORIGIN}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(server).toMatchObject({
      issuer: 'http://localhost',
      authorization_endpoint: 'http://localhost/authorize',
      token_endpoint: 'http://localhost/token',
      registration_endpoint: 'http://localhost/register',
      code_challenge_methods_supported: ['S256'],
    });
    expect(server.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token']),
    );
  });

  it('refuses a made-up bearer token', async () => {
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: 'Bearer abc:def:ghi' },
      body: JSON.stringify(INIT),
    });
    expect(res.status).toBe(401);
  });
});

describe.each(['http', 'sse'] as const)('signed in over %s', (kind) => {
  it('calls tools as the signed-in user, and refreshes an expired access token', async () => {
    const user = `${kind}-user@example.com`;
    const { client, auth } = await connectSignedIn(kind, { user, groups: 'ops, lab' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['pve_list_vms', 'pve_create_qemu_vm']);
    const listed = await call(client, 'pve_list_vms', { limit: 1 });
    expect(listed.isError, text(listed)).toBeFalsy();
    await client.close();

    // The access token "expires": the SDK client refreshes it with its refresh token.
    const before = auth.tokens()!;
    expect(before.refresh_token).toBeTruthy();
    auth.saveTokens({ ...before, access_token: 'expired:token:value' });
    const again = await connectWith(kind, auth);
    expect((await call(again, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    expect(auth.tokens()!.access_token).not.toBe(before.access_token);
    expect(auth.tokens()!.access_token).not.toBe('expired:token:value');
    await again.close();
  });
});

describe('identity in the session', () => {
  it('carries userId, email, groups, client and grant, and no upstream token', async () => {
    const { client } = await connectSignedIn('http', { user: 'dora@example.com', groups: 'ops' });
    await call(client, 'pve_list_vms', { limit: 1 });
    const ns = (env as unknown as AppEnv).MCP_OBJECT;
    const names = await listSessionProps(ns);
    const dora = names.find((p) => p.userId === 'dora@example.com');
    expect(dora).toMatchObject({
      userId: 'dora@example.com',
      email: 'dora@example.com',
      groups: ['ops'],
      clientId: expect.any(String),
      grantId: expect.any(String),
      // What the consent page ticked by default: the token's scopes, as the library verified them.
      scopes: ['pve:read', 'pve:operate', 'pve:provision'],
    });
    expect(Object.keys(dora!).sort()).toEqual([
      'clientId',
      'email',
      'grantId',
      'groups',
      'login',
      'name',
      'publicOrigin',
      'scopes',
      'userId',
    ]);
    await client.close();
  });
});

describe('tokens are bound to this server', () => {
  it('refuses a token issued for another resource', async () => {
    const { client, auth } = await connectSignedIn('http', {
      user: 'erin@example.com',
      groups: 'ops',
    });
    await client.close();
    // The same Worker reached under another origin is another resource: the token is not for it.
    const res = await workerFetch('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${auth.tokens()!.access_token}` },
      body: JSON.stringify(INIT),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/);
  });
});

describe('admission and consent', () => {
  it('gives a user outside the allow-list a "not allowed" page and no grant', async () => {
    const auth = new TestOAuthClient();
    await expect(
      connectSignedIn('http', { user: 'mallory@example.com', groups: 'guests' }, auth),
    ).rejects.toThrow(/sign-in gave no code: 403/);
    const result = await signIn(auth.authorizationUrl!, { user: 'mallory@example.com' });
    expect(result.status).toBe(403);
    expect(result.location).toBeNull();
    expect(result.finalHtml).toContain('mallory@example.com may not use this server');
    expect(auth.tokens()).toBeUndefined();
  });

  it('admits a user by name without any group', async () => {
    const { client } = await connectSignedIn('http', { user: 'alice@example.com' });
    expect((await call(client, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    await client.close();
  });

  it('sends the client access_denied when consent is denied', async () => {
    const auth = new TestOAuthClient();
    await connectSignedIn('http', { user: 'x', decision: 'deny' }, auth).catch(() => undefined);
    const result = await signIn(auth.authorizationUrl!, { user: 'x', decision: 'deny' });
    const back = new URL(result.location!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('iss')).toBe('http://localhost');
  });

  it('shows the client name escaped, the redirect host, and a loopback warning', async () => {
    const auth = new TestOAuthClient('<img src=x onerror=alert(1)> "Evil" & Co');
    await connectSignedIn('http', { user: 'x', decision: 'deny' }, auth).catch(() => undefined);
    const result = await signIn(auth.authorizationUrl!, { user: 'x', decision: 'deny' });
    expect(result.consentHtml).not.toContain('<img src=x');
    expect(result.consentHtml).toContain(
      '&lt;img src=x onerror=alert(1)&gt; &quot;Evil&quot; &amp; Co',
    );
    expect(result.consentHtml).toContain('127.0.0.1');
    expect(result.consentHtml).toMatch(/app on your own computer/);
    // Each scope as a box, with the tools the policy in force lets through in it.
    expect(result.consentHtml).toContain(
      '<input type="checkbox" name="scope" value="pve:read" checked>',
    );
    expect(result.consentHtml).toMatch(/List VMs and containers/);
  });

  it('ticks nothing for a request that names only policy:edit, and never policy:edit itself', async () => {
    const url = new URL(await startAuthorization('http', new TestOAuthClient('CI policy job')));
    url.searchParams.set('scope', 'policy:edit');
    const page = await (await new Browser().get(url.toString())).text();
    expect(scopeBoxes(page)).toEqual([
      { value: 'pve:read', checked: false },
      { value: 'pve:operate', checked: false },
      { value: 'pve:provision', checked: false },
      { value: 'pve:guest', checked: false },
      { value: 'pve:raw', checked: false },
      { value: 'policy:edit', checked: false },
    ]);
    expect(page).toMatch(/never for an AI assistant/);
    // A request naming only scopes of no use here gets the defaults.
    url.searchParams.set('scope', 'openid profile');
    const other = await (await new Browser().get(url.toString())).text();
    expect(
      scopeBoxes(other)
        .filter((b) => b.checked)
        .map((b) => b.value),
    ).toEqual(['pve:read', 'pve:operate', 'pve:provision']);
  });

  it('refuses a consent form posted without the browser binding (CSRF)', async () => {
    const auth = new TestOAuthClient();
    await connectSignedIn('http', { user: 'x', decision: 'deny' }, auth).catch(() => undefined);
    const page = await new Browser().get(auth.authorizationUrl!.toString());
    const handle = /name="handle" value="([^"]+)"/.exec(await page.text())![1]!;
    // Another site's page can post the handle, but not the __Host- cookie that binds it.
    const forged = await new Browser().post(`${ORIGIN}/authorize`, { handle, decision: 'approve' });
    expect(forged.status).toBe(400);
    expect(await forged.text()).toMatch(/not started in this browser/);
  });

  it('refuses a callback with a forged state', async () => {
    const res = await new Browser().get(
      `${ORIGIN}/oauth/callback?state=forged&user=alice@example.com`,
    );
    expect(res.status).toBe(400);
  });
});

describe('per-user and per-grant counters', () => {
  it('counts each user and each grant separately', async () => {
    const first = (await connectSignedIn('http', { user: 'frank@example.com', groups: 'ops' }))
      .client;
    for (let i = 0; i < 2; i++)
      expect((await call(first, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    const third = await call(first, 'pve_list_vms', { limit: 1 });
    expect(third.structuredContent!.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_list_vms/limits/1',
    });

    // Frank again from a second client: a new grant (fresh per-grant count), same user count.
    const second = (
      await connectSignedIn(
        'sse',
        { user: 'frank@example.com', groups: 'ops' },
        new TestOAuthClient('Second client'),
      )
    ).client;
    expect((await call(second, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    const fourth = await call(second, 'pve_list_vms', { limit: 1 });
    expect(fourth.structuredContent!.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_list_vms/limits/0',
    });

    // Grace, another user: her own counters.
    const grace = (await connectSignedIn('http', { user: 'grace@example.com', groups: 'ops' }))
      .client;
    expect((await call(grace, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    await Promise.all([first.close(), second.close(), grace.close()]);
  });

  it('counts one person once under two ids with the same verified email (per person, whatever the id)', async () => {
    // The dev IdP keeps ids apart by case, as OIDC subs are opaque; the address is one person's.
    const one = (await connectSignedIn('http', { user: 'judy@example.com', groups: 'ops' })).client;
    for (let i = 0; i < 2; i++)
      expect((await call(one, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    const other = (
      await connectSignedIn(
        'http',
        { user: 'Judy@Example.COM', groups: 'ops' },
        new TestOAuthClient('Other id'),
      )
    ).client;
    expect((await call(other, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    const fourth = await call(other, 'pve_list_vms', { limit: 1 });
    expect(fourth.structuredContent!.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_list_vms/limits/0',
    });
    const counters = (env as unknown as AppEnv).POLICY_COUNTERS;
    const rows = await counters
      .get(counters.idFromName('user:email:judy@example.com'))
      .list(Date.now());
    expect(rows.map((r) => [r.key, r.count])).toEqual([['pve_list_vms/per_user', 3]]);
    await Promise.all([one.close(), other.close()]);
  });
});

describe('sessions belong to their grant', () => {
  it("answers 404 when another user names someone else's session", async () => {
    const alice = await connectSignedIn('http', { user: 'henry@example.com', groups: 'ops' });
    const bob = await connectSignedIn('http', { user: 'ivan@example.com', groups: 'ops' });
    const open = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${alice.auth.tokens()!.access_token}` },
      body: JSON.stringify(INIT),
    });
    const session = open.headers.get('mcp-session-id')!;
    await open.text();
    const hijack = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        authorization: `Bearer ${bob.auth.tokens()!.access_token}`,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(hijack.status).toBe(404);
    const own = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        authorization: `Bearer ${alice.auth.tokens()!.access_token}`,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(own.status).toBe(200);
    await Promise.all([alice.client.close(), bob.client.close()]);
  });
});

describe('SSE sessions belong to their grant too', () => {
  it("refuses another user both a message to and a reattachment of someone else's SSE session", async () => {
    const alice = await connectSignedIn('sse', { user: 'jane@example.com', groups: 'ops' });
    const bob = await connectSignedIn('sse', { user: 'karl@example.com', groups: 'ops' });
    const stream = await workerFetch(`${ORIGIN}/sse`, {
      headers: {
        accept: 'text/event-stream',
        authorization: `Bearer ${alice.auth.tokens()!.access_token}`,
      },
    });
    const reader = stream.body!.getReader();
    let events = '';
    while (!/sessionId=([0-9a-f]+)/.test(events))
      events += new TextDecoder().decode((await reader.read()).value);
    const session = /sessionId=([0-9a-f]+)/.exec(events)![1]!;
    const asBob = { authorization: `Bearer ${bob.auth.tokens()!.access_token}` };
    const message = await workerFetch(`${ORIGIN}/sse/message?sessionId=${session}`, {
      method: 'POST',
      headers: { ...asBob, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(message.status).toBe(404);
    const reattach = await workerFetch(`${ORIGIN}/sse?sessionId=${session}`, {
      headers: { ...asBob, accept: 'text/event-stream' },
    });
    expect(reattach.status).toBe(404);
    await reader.cancel();
    await Promise.all([alice.client.close(), bob.client.close()]);
  });
});

describe('admission is checked on every request', () => {
  it('refuses a grant whose person was removed from the allow-lists since signing in', async () => {
    const props = {
      userId: 'lena@example.com',
      email: 'lena@example.com',
      groups: ['ops'],
      clientId: 'c',
      grantId: 'g-lena',
    };
    const request = new Request(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify(INIT),
    });
    const removed = {
      ...(env as unknown as AppEnv),
      ALLOWED_USERS: 'alice@example.com',
      ALLOWED_GROUPS: 'admins',
    };
    const res = await mcpApi.fetch(
      request,
      removed,
      Object.assign(createExecutionContext(), { props }),
    );
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/lena@example\.com is no longer allowed/);
  });
});

describe('the dev identity provider', () => {
  it('is refused off loopback', async () => {
    const res = await workerFetch(`${ORIGIN}/authorize`, { headers: { host: 'mcp.example.com' } });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/development sign-in \(IDP=dev\)/);
  });

  // Names under .localhost look local but are not loopback: the sign-in cannot serve them as a
  // resource (this once answered 500 with a stack trace).
  it.each([
    ['GET', '/authorize?response_type=code&client_id=x'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['POST', '/register'],
    ['POST', '/mcp'],
  ])('refuses %s %s on a Host under .localhost with a 403 that says why', async (method, path) => {
    const res = await workerFetch(`http://evil.localhost:8787${path}`, {
      method,
      headers: { ...MCP_HEADERS, host: 'evil.localhost:8787' },
      body:
        method === 'POST'
          ? JSON.stringify(path === '/mcp' ? INIT : { redirect_uris: [REDIRECT] })
          : undefined,
    });
    expect(res.status).toBe(403);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({
      error: 'forbidden',
      message:
        'Host is not a loopback address. With the development sign-in (IDP=dev) this server only answers loopback requests.',
    });
    expect(body).not.toMatch(/at \w+ \(|\.ts:\d+/);
  });
});

async function listSessionProps(ns: DurableObjectNamespace): Promise<Record<string, unknown>[]> {
  const { listDurableObjectIds } = await import('cloudflare:test');
  const out: Record<string, unknown>[] = [];
  for (const id of await listDurableObjectIds(ns)) {
    const props = await runInDurableObject(
      ns.get(id) as DurableObjectStub<ProxmoxMcp>,
      (_instance, state) => state.storage.get<Record<string, unknown>>('props'),
    );
    if (props) out.push(props);
  }
  return out;
}
