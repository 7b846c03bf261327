// Scopes a person grants at consent, enforced in both eras against the simulator: a client given
// only pve:read sees only read tools and is refused a power action with nothing sent (2026-07-28:
// HTTP 403 with the scope to ask for; 2025: a tool error naming it); the 2026 client then steps
// up by itself (the SDK's own handling of the challenge), the person ticks what it asks for on
// the consent page, and the same call goes through. The metadata publishes the scopes, and a
// policy rule can be aimed at a scope (`scope:pve:provision`).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { asEditor, Browser, signIn, TestOAuthClient } from '../support/worker/oauth';
import { scopeBoxes, tickedScopes } from '../support/form-browser';
import { auditRecords } from '../support/worker/audit';
import { ORIGIN, workerFetch } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { rawCall } from '../support/worker/eras';
import { ERAS_POLICY } from '../support/policies/eras';
import { usePolicy } from '../support/worker/policy';

usePolicy(ERAS_POLICY, asEditor());

const READ_TOOLS = ['pve_list_vms', 'pve_get_vm_status'];
const START = { node: 'pve2', vmid: 104, confirm: true };
const v2 = () =>
  new ClientV2(
    { name: 'reporting', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );

/** Signs in through `auth`'s last authorization URL, ticking `scopes` (default: what the page ticks). */
async function consent(auth: TestOAuthClient, transport: TransportV2, scopes?: string[]) {
  const result = await signIn(
    auth.authorizationUrl!,
    { user: 'rita@example.com', groups: 'ops', ...(scopes ? { scopes } : {}) },
    new Browser(),
  );
  await transport.finishAuth(new URL(result.location!).searchParams);
  return result.consentHtml;
}

const startsSent = async () =>
  (await sim.requests()).filter((r) => r.method === 'POST' && r.path.endsWith('/status/start'));

describe('a client granted pve:read only', () => {
  const auth = new TestOAuthClient('reporting client');
  let token: string;

  beforeAll(async () => {
    await sim.reset();
    const transport = new TransportV2(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      authProvider: auth,
    });
    await expect(v2().connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    // The client asks for what the server's challenge names: the scopes ticked by default.
    expect(auth.authorizationUrl!.searchParams.get('scope')).toBe(
      'pve:read pve:operate pve:provision',
    );
    const page = await consent(auth, transport, ['pve:read']);
    // Offered: all five, the safe three ticked; inside guests and the raw API left for the person.
    expect(scopeBoxes(page)).toEqual([
      { value: 'pve:read', checked: true },
      { value: 'pve:operate', checked: true },
      { value: 'pve:provision', checked: true },
      { value: 'pve:guest', checked: false },
      { value: 'pve:raw', checked: false },
    ]);
    expect(page).not.toContain('the app asks for it');
    expect(auth.tokens()!.scope).toBe('pve:read');
    token = auth.tokens()!.access_token;
  });

  it('lists only read tools, in both eras', async () => {
    const client = v2();
    await client.connect(
      new TransportV2(new URL(`${ORIGIN}/mcp`), { fetch: workerFetch, authProvider: auth }),
    );
    const listed = (await client.listTools()).tools;
    expect(listed.map((t) => t.name)).toEqual(READ_TOOLS);
    expect(listed.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    await client.close();

    const old = new ClientV1({ name: 'reporting-2025', version: '1' });
    await old.connect(
      new TransportV1(new URL(`${ORIGIN}/mcp`), {
        fetch: workerFetch,
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    expect((await old.listTools()).tools.map((t) => t.name)).toEqual(READ_TOOLS);
    await old.close();
  });

  it('is refused a power action with 403 insufficient_scope (2026), nothing sent', async () => {
    await sim.clearLog();
    const res = await rawCall(token, 'pve_start_vm', START);
    expect(res.status).toBe(403);
    expect(res.challenge).toMatch(/^Bearer /);
    expect(res.challenge).toContain('error="insufficient_scope"');
    expect(res.challenge).toContain('scope="pve:operate"');
    expect(res.challenge).toContain(
      `resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource"`,
    );
    // A call without `arguments` (MCP lets a client leave them out) is told the same.
    const bare = await rawCall(token, 'pve_start_vm', undefined, {}, 2);
    expect(bare.status).toBe(403);
    expect(bare.challenge).toContain('scope="pve:operate"');
    expect(await sim.requests()).toEqual([]);
    // Recorded like any refusal, with the scopes the token held.
    const [record] = await auditRecords(
      (r) =>
        r.tool === 'pve_start_vm' && r.session === 'stateless' && r.user_id === 'rita@example.com',
    );
    expect(record).toMatchObject({
      decision: 'deny',
      rule: '(scope not granted)',
      outcome: 'denied',
      user_scopes: ['pve:read'],
    });
  });

  it('is refused the same call as a tool error naming the scope (2025), nothing sent', async () => {
    await sim.clearLog();
    const old = new ClientV1({ name: 'reporting-2025', version: '1' });
    await old.connect(
      new TransportV1(new URL(`${ORIGIN}/mcp`), {
        fetch: workerFetch,
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const result = (await old.callTool({ name: 'pve_start_vm', arguments: START })) as unknown as {
      isError?: boolean;
      content: { text: string }[];
      structuredContent: { error: { kind: string; scope: string } };
    };
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toMatchObject({
      kind: 'insufficient_scope',
      scope: 'pve:operate',
    });
    expect(result.content[0]!.text).toContain('pve_start_vm needs the scope pve:operate');
    expect(result.content[0]!.text).toContain('Nothing was sent to Proxmox');
    await old.close();
    expect(await sim.requests()).toEqual([]);
    const [record] = await auditRecords(
      (r) =>
        r.tool === 'pve_start_vm' && r.session !== 'stateless' && r.user_id === 'rita@example.com',
    );
    expect(record).toMatchObject({ decision: 'deny', rule: '(scope not granted)' });
  });

  it('steps up to pve:operate when the call needs it, and the same call then works', async () => {
    await sim.clearLog();
    const transport = new TransportV2(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      authProvider: auth,
    });
    const client = v2();
    await client.connect(transport);
    auth.authorizationUrl = undefined;
    // The SDK meets the 403, asks for what it holds plus what the challenge names, and needs the person.
    await expect(
      client.callTool({ name: 'pve_start_vm', arguments: START }),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    expect(await startsSent()).toEqual([]);
    expect(auth.authorizationUrl!.searchParams.get('scope')).toBe('pve:read pve:operate');
    // What it asks for is ticked; provisioning, which it did not ask for, is not.
    const page = await consent(auth, transport);
    expect(tickedScopes(page)).toEqual(['pve:read', 'pve:operate']);
    expect(auth.tokens()!.scope).toBe('pve:read pve:operate');

    const after = v2();
    await after.connect(
      new TransportV2(new URL(`${ORIGIN}/mcp`), { fetch: workerFetch, authProvider: auth }),
    );
    const result = (await after.callTool({
      name: 'pve_start_vm',
      arguments: { ...START, wait: true },
    })) as {
      isError?: boolean;
    };
    expect(result.isError).toBeFalsy();
    expect(await startsSent()).toHaveLength(1);
    expect((await sim.guest(104)).status).toBe('running');
    await after.close();
  });
});

describe('a 2025 session keeps the scopes it was opened with', () => {
  it('is not found for a token of the same grant narrowed to pve:read; a new session lists reads only', async () => {
    await sim.reset();
    await sim.clearLog();
    const auth = new TestOAuthClient('narrowing client');
    const transport = new TransportV2(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      authProvider: auth,
    });
    await expect(v2().connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    await consent(auth, transport, ['pve:read', 'pve:operate']);
    const wide = auth.tokens()!;
    const transportV1 = new TransportV1(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      requestInit: { headers: { authorization: `Bearer ${wide.access_token}` } },
    });
    const opened = new ClientV1({ name: 'narrowing', version: '1' });
    await opened.connect(transportV1);
    const session = transportV1.sessionId!;
    expect((await opened.listTools()).tools.map((t) => t.name)).toContain('pve_start_vm');
    // The same grant, refreshed down to pve:read (RFC 6749 §6).
    const refreshed = await workerFetch(`${ORIGIN}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: wide.refresh_token!,
        client_id: auth.clientInformation()!.client_id,
        scope: 'pve:read',
        resource: ORIGIN,
      }),
    });
    expect(refreshed.status).toBe(200);
    const narrow = (await refreshed.json()) as { access_token: string; scope: string };
    expect(narrow.scope).toBe('pve:read');
    const reused = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${narrow.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'pve_start_vm', arguments: START },
      }),
    });
    expect(reused.status).toBe(404);
    await reused.body?.cancel();
    expect(await startsSent()).toEqual([]);
    const fresh = new ClientV1({ name: 'narrowed', version: '1' });
    await fresh.connect(
      new TransportV1(new URL(`${ORIGIN}/mcp`), {
        fetch: workerFetch,
        requestInit: { headers: { authorization: `Bearer ${narrow.access_token}` } },
      }),
    );
    expect((await fresh.listTools()).tools.map((t) => t.name)).toEqual(READ_TOOLS);
    await fresh.close();
    await opened.close();
  });

  it('a token holding no tool scope (an older grant, a policy token) is told which to ask for', async () => {
    const auth = new TestOAuthClient('policy script');
    const transport = new TransportV2(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      authProvider: auth,
    });
    await expect(v2().connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    await consent(auth, transport, ['policy:edit']);
    const res = await rawCall(auth.tokens()!.access_token, 'pve_list_vms', {});
    expect(res.status).toBe(403);
    expect(res.challenge).toContain('error="insufficient_scope"');
    expect(res.challenge).toContain('scope="pve:read pve:operate pve:provision"');
  });
});

describe('scopes in the policy and the metadata', () => {
  afterAll(() => sim.reset());

  it('publishes the scopes in both metadata documents', async () => {
    const resource = await (
      await workerFetch(`${ORIGIN}/.well-known/oauth-protected-resource`)
    ).json();
    expect(resource).toMatchObject({
      scopes_supported: ['pve:read', 'pve:operate', 'pve:provision', 'pve:guest', 'pve:raw'],
    });
    const server = await (
      await workerFetch(`${ORIGIN}/.well-known/oauth-authorization-server`)
    ).json();
    expect(server).toMatchObject({
      scopes_supported: [
        'pve:read',
        'pve:operate',
        'pve:provision',
        'pve:guest',
        'pve:raw',
        'policy:read',
        'policy:edit',
      ],
    });
  });

  it('lets a rule aim at a scope: clients granted provisioning may not start guests here', async () => {
    await sim.reset();
    await sim.clearLog();
    const auth = new TestOAuthClient('provisioning client');
    const transport = new TransportV2(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      authProvider: auth,
    });
    await expect(v2().connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    await consent(auth, transport); // the default: read, operate, provision
    const token = auth.tokens()!.access_token;
    const res = await rawCall(token, 'pve_start_vm', START);
    expect(res.status).toBe(200);
    expect(res.result).toMatchObject({
      isError: true,
      structuredContent: {
        policy: { decision: 'limited', reason: 'Clients that may provision do not start guests.' },
      },
    });
    expect(await startsSent()).toEqual([]);
  });
});
