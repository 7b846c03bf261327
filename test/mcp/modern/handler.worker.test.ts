// MCP 2026-07-28 on /mcp beside the 2025 sessions (AUTH_MODE=none, allow-all policy): a pinned SDK
// v2 client discovers the server, lists the same tools, and calls them through the same seam.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connect2026 } from '../../support/worker/mcp-2026';
import { connect, ORIGIN, workerFetch } from '../../support/worker/mcp';
import { sim } from '../../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../../support/worker/policy';

usePolicy(OPEN_POLICY);

describe('a 2026-07-28 client', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect2026();
  });
  afterAll(() => client.close());

  it('is served statelessly, with the same tools as a 2025 session', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const modern = (await client.listTools()).tools.map((t) => t.name);
    const legacy = await connect('http');
    const old = (await legacy.listTools()).tools.map((t) => t.name);
    await legacy.close();
    expect(modern).toEqual(old);
  });

  it('lists guests and previews a create without writing', async () => {
    await sim.clearLog();
    const list = await client.callTool({ name: 'pve_list_vms', arguments: { limit: 2 } });
    expect(list.isError).toBeFalsy();
    expect((list.structuredContent as { guests: unknown[] }).guests).toHaveLength(2);
    const preview = await client.callTool({
      name: 'pve_create_qemu_vm',
      arguments: { node: 'pve1', name: 'modern' },
    });
    expect(preview.structuredContent).toMatchObject({ mode: 'preview', vmid: 106 });
    expect(await sim.writes()).toEqual([]);
  });
});

describe('2026-07-28 on the wire', () => {
  const envelope = (version = '2026-07-28') => ({
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  });
  const post = async (body: Record<string, unknown>, headers: Record<string, string>) => {
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    });
    return {
      status: res.status,
      body: (await res.json()) as {
        id?: unknown;
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: Record<string, unknown> };
      },
    };
  };

  it('answers server/discover with the version, tools capability and instructions', async () => {
    const r = await post(
      { id: 'd1', method: 'server/discover', params: { _meta: envelope() } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
    );
    expect(r.status).toBe(200);
    expect(r.body.id).toBe('d1');
    expect(r.body.result).toMatchObject({
      // The 2025 versions are served on this URL too (initialize, then a session).
      supportedVersions: [
        '2026-07-28',
        '2025-11-25',
        '2025-06-18',
        '2025-03-26',
        '2024-11-05',
        '2024-10-07',
      ],
      capabilities: { tools: { listChanged: false } },
      instructions: expect.stringMatching(/^Proxmox VE tools\./),
    });
  });

  it('refuses an Mcp-Method header that does not match the body, with its id', async () => {
    const r = await post(
      { id: 7, method: 'tools/list', params: { _meta: envelope() } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' },
    );
    expect(r.status).toBe(400);
    expect(r.body.error!.code).toBe(-32020);
  });

  it('refuses an Mcp-Name that does not match the tool called', async () => {
    await sim.clearLog();
    const r = await post(
      {
        id: 8,
        method: 'tools/call',
        params: { name: 'pve_list_vms', arguments: {}, _meta: envelope() },
      },
      {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'pve_stop_vm',
      },
    );
    expect(r.status).toBe(400);
    expect(r.body.error!.code).toBe(-32020);
    expect(await sim.requests()).toEqual([]);
  });

  it('names the supported versions when asked for another, echoing the request id', async () => {
    const r = await post(
      { id: 9, method: 'tools/list', params: { _meta: envelope('2027-01-01') } },
      { 'mcp-protocol-version': '2027-01-01', 'mcp-method': 'tools/list' },
    );
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      id: 9,
      error: { code: -32022, data: { supported: ['2026-07-28'] } },
    });
  });

  it('answers an unknown tool with -32602, as the spec says', async () => {
    const r = await post(
      {
        id: 10,
        method: 'tools/call',
        params: { name: 'pve_delete_everything', arguments: {}, _meta: envelope() },
      },
      {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'pve_delete_everything',
      },
    );
    expect(r.body).toMatchObject({
      id: 10,
      error: { code: -32602, message: 'Unknown tool: pve_delete_everything' },
    });
  });
});
