// One /mcp, both MCP eras, with OAuth (dev sign-in): the SDK v2 client pinned to 2026-07-28, the
// v1 client (2025-11-25) and a raw 2025-06-18 session do the same work through the same seam:
// list tools and guests, preview a create with zero writes, create, hit a limit. A 2026 client
// has no session: its session-scoped limit counts per grant, never looser. Its approvals come
// through input_required; a tampered, replayed or misapplied answer is refused.
// Policy: pve_list_vms 2/hour per session; pve_create_qemu_vm 100/hour per grant; pve_stop_vm
// needs a person's approval.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { asEditor, Browser, signIn, TestOAuthClient } from '../support/worker/oauth';
import { connect2026 } from '../support/worker/mcp-2026';
import { ORIGIN, workerFetch } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { auditRecords } from '../support/worker/audit';
import { rawCall, signedInToken } from '../support/worker/eras';
import { ERAS_POLICY } from '../support/policies/eras';
import { usePolicy } from '../support/worker/policy';

usePolicy(ERAS_POLICY, asEditor());

const STOP = { node: 'pve1', vmid: 101, confirm: true };

type AnyClient = {
  callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<{ tools: { name: string }[] }>;
  close(): Promise<void>;
};

async function v1Client(token: string): Promise<AnyClient> {
  const client = new ClientV1({ name: 'vitest-2025', version: '1' });
  await client.connect(
    new TransportV1(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client as unknown as AnyClient;
}

/** A raw 2025-06-18 session: initialize, then requests carrying its session id. */
async function v20250618(token: string): Promise<AnyClient> {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
  };
  const post = async (body: object, session?: string) => {
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        ...headers,
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const data = text.split('\n').find((l) => l.startsWith('data: '));
    return {
      res,
      body: data ? (JSON.parse(data.slice(6)) as { result?: Record<string, unknown> }) : null,
    };
  };
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw-2025-06-18', version: '1' },
    },
  });
  expect((init.body!.result as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
  const session = init.res.headers.get('mcp-session-id')!;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  let id = 1;
  return {
    callTool: async (p) =>
      (await post({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: p }, session)).body!
        .result,
    listTools: async () =>
      (await post({ jsonrpc: '2.0', id: id++, method: 'tools/list' }, session)).body!.result as {
        tools: { name: string }[];
      },
    close: async () => undefined,
  };
}

describe('the 2026 client signs in itself', () => {
  it("through OAuth, checking the authorization response's iss (RFC 9207), then lists tools", async () => {
    const auth = new TestOAuthClient('v2 client');
    const transport = new TransportV2(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      authProvider: auth,
    });
    const first = new ClientV2(
      { name: 'v2', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const result = await signIn(
      auth.authorizationUrl!,
      { user: 'vera@example.com', groups: 'ops' },
      new Browser(),
    );
    const back = new URL(result.location!);
    expect(back.searchParams.get('iss')).toBe(ORIGIN);
    await transport.finishAuth(back.searchParams);
    const client = new ClientV2(
      { name: 'v2', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new TransportV2(new URL(`${ORIGIN}/mcp`), { fetch: workerFetch, authProvider: auth }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'pve_list_vms',
      'pve_get_vm_status',
      'pve_start_vm',
      'pve_stop_vm',
      'pve_create_qemu_vm',
    ]);
    await client.close();
  });
});

describe.each([
  [
    '2026-07-28 (SDK v2 client)',
    async (token: string) => (await connect2026({ token })) as unknown as AnyClient,
  ],
  ['2025-11-25 (SDK v1 client)', v1Client],
  ['2025-06-18 (raw session)', v20250618],
])('%s', (_label, open) => {
  let client: AnyClient;
  beforeAll(async () => {
    await sim.reset();
    client = await open(
      await signedInToken(`user-${Math.random().toString(36).slice(2, 8)}@example.com`),
    );
  });
  afterAll(() => client.close());

  it('lists the tools the policy allows', async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'pve_list_vms',
      'pve_get_vm_status',
      'pve_start_vm',
      'pve_stop_vm',
      'pve_create_qemu_vm',
    ]);
  });

  it('lists guests', async () => {
    const r = (await client.callTool({ name: 'pve_list_vms', arguments: { limit: 3 } })) as {
      structuredContent: { guests: unknown[] };
    };
    expect(r.structuredContent.guests).toHaveLength(3);
  });

  it('previews a create with zero writes, then creates', async () => {
    await sim.clearLog();
    const preview = (await client.callTool({
      name: 'pve_create_qemu_vm',
      arguments: { node: 'pve1', vmid: 4100, name: 'eras' },
    })) as { structuredContent: { mode: string } };
    expect(preview.structuredContent.mode).toBe('preview');
    expect(await sim.writes()).toEqual([]);
    const created = (await client.callTool({
      name: 'pve_create_qemu_vm',
      arguments: { node: 'pve1', vmid: 4100, name: 'eras', confirm: true },
    })) as { isError?: boolean; structuredContent: { mode: string; vmid: number } };
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ mode: 'created', vmid: 4100 });
    expect((await sim.writes()).map((w) => w.params!.vmid)).toEqual(['4100']);
  });

  it('hits the session-scoped limit on the third list', async () => {
    // The first list above took one slot; one more is allowed, then the limit answers.
    const second = (await client.callTool({ name: 'pve_list_vms', arguments: {} })) as {
      isError?: boolean;
    };
    expect(second.isError).toBeFalsy();
    const third = (await client.callTool({ name: 'pve_list_vms', arguments: {} })) as {
      isError?: boolean;
      structuredContent: { policy: { decision: string } };
    };
    expect(third.isError).toBe(true);
    expect(third.structuredContent.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_list_vms/limits/0',
    });
  });
});

describe('a session-scoped limit without sessions', () => {
  it('counts per grant for 2026 clients: a new client of the same grant does not start again', async () => {
    const token = await signedInToken('nina@example.com');
    const a = await connect2026({ token });
    for (let i = 0; i < 2; i++)
      expect((await a.callTool({ name: 'pve_list_vms', arguments: {} })).isError).toBeFalsy();
    await a.close();
    const b = await connect2026({ token });
    const third = await b.callTool({ name: 'pve_list_vms', arguments: {} });
    expect(third.isError).toBe(true);
    expect(third.structuredContent).toMatchObject({ policy: { decision: 'limited' } });
    await b.close();
    // A 2025 session of the same grant keeps its own session count: it starts at 0.
    const legacy = await v1Client(token);
    expect(
      ((await legacy.callTool({ name: 'pve_list_vms', arguments: {} })) as { isError?: boolean })
        .isError,
    ).toBeFalsy();
    await legacy.close();
  });
});

describe('approval in the conversation for a 2026 client (input_required)', () => {
  beforeAll(() => sim.reset());

  it('asks, and on accept stops the VM once; the audit says it was approved in the conversation', async () => {
    const token = await signedInToken('otto@example.com');
    const asked: string[] = [];
    const client = await connect2026({
      token,
      answer: (message) => {
        asked.push(message);
        return { action: 'accept', content: { approve: true } };
      },
    });
    await sim.clearLog();
    const r = await client.callTool({ name: 'pve_stop_vm', arguments: STOP });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(
      /A person confirms each hard stop\.\notto@example\.com .*asks to run pve_stop_vm/,
    );
    expect((await sim.writes()).map((w) => w.path)).toEqual([
      '/api2/json/nodes/pve1/qemu/101/status/stop',
    ]);
    const [record] = await auditRecords(
      (x) => x.user_id === 'otto@example.com' && x.outcome === 'ok',
    );
    expect(record).toMatchObject({
      tool: 'pve_stop_vm',
      approval_id: 'elicitation',
      approval_channel: 'conversation',
      session: 'stateless',
    });
    await client.close();
  });

  it('on decline sends nothing', async () => {
    const token = await signedInToken('dora@example.com');
    const client = await connect2026({ token, answer: () => ({ action: 'decline' }) });
    await sim.clearLog();
    const r = await client.callTool({ name: 'pve_stop_vm', arguments: { ...STOP, vmid: 102 } });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toMatch(
      /\[POLICY DENIED\] dora@example\.com declined the call\./,
    );
    expect(await sim.writes()).toEqual([]);
    await client.close();
  });

  it('refuses a tampered state, an answer replayed, and an answer for another call', async () => {
    const token = await signedInToken('tess@example.com');
    await sim.setLock(103, null);
    const args = { node: 'pve2', vmid: 103, confirm: true };
    const asked = await rawCall(token, 'pve_stop_vm', args);
    expect(asked.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { approve: { method: 'elicitation/create' } },
    });
    const state = asked.result!.requestState!;
    const yes = { inputResponses: { approve: { action: 'accept', content: { approve: true } } } };
    await sim.clearLog();

    const tampered = state.slice(0, -2) + (state.endsWith('AA') ? 'BB' : 'AA');
    const forged = await rawCall(token, 'pve_stop_vm', args, { ...yes, requestState: tampered }, 2);
    expect(forged.error).toMatchObject({ code: -32602, data: { reason: 'invalid_request_state' } });

    const otherCall = await rawCall(
      token,
      'pve_stop_vm',
      { ...args, vmid: 100, node: 'pve1' },
      { ...yes, requestState: state },
      3,
    );
    expect(JSON.stringify(otherCall.result)).toMatch(/was given for another call/);

    const anotherGrant = await rawCall(
      await signedInToken('mallory@example.com'),
      'pve_stop_vm',
      args,
      { ...yes, requestState: state },
      4,
    );
    expect(anotherGrant.error).toMatchObject({ code: -32602 });
    expect(await sim.writes()).toEqual([]);

    const ok = await rawCall(token, 'pve_stop_vm', args, { ...yes, requestState: state }, 5);
    expect(ok.result!.isError).toBeFalsy();
    const replay = await rawCall(token, 'pve_stop_vm', args, { ...yes, requestState: state }, 6);
    expect(JSON.stringify(replay.result)).toMatch(/This answer was already used/);
    expect((await sim.writes()).map((w) => w.path)).toEqual([
      '/api2/json/nodes/pve2/qemu/103/status/stop',
    ]);
  });
});

describe('OAuth discovery', () => {
  it('serves the path-suffixed protected-resource metadata like the root one', async () => {
    const root = await (await workerFetch(`${ORIGIN}/.well-known/oauth-protected-resource`)).json();
    for (const path of ['/mcp', '/sse']) {
      const res = await workerFetch(`${ORIGIN}/.well-known/oauth-protected-resource${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(root);
    }
    expect(root).toMatchObject({ resource: ORIGIN, authorization_servers: [ORIGIN] });
  });

  it('advertises Client ID Metadata Documents, dynamic registration as the fallback, and iss in responses', async () => {
    const meta = (await (
      await workerFetch(`${ORIGIN}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      client_id_metadata_document_supported: true,
      registration_endpoint: `${ORIGIN}/register`,
      authorization_response_iss_parameter_supported: true,
    });
  });
});
