// The Worker as a whole: health, the loopback guard of AUTH_MODE=none, the MCP endpoints over
// raw HTTP, and the tool list contract.

import { describe, expect, it } from 'vitest';
import { forgetProbes } from '../../src/health/proxmox-probe';
import { call, connect, ORIGIN, text, TRANSPORTS, workerFetch } from './helpers/mcp';
import { sim } from './helpers/sim';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('GET /health', () => {
  it('answers 200 with ok and version, having asked Proxmox only GET /version', async () => {
    forgetProbes();
    await sim.clearLog();
    const res = await workerFetch(`${ORIGIN}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ ok: true, version: '0.1.0', view: 'operator', auth_mode: 'none', proxmox: { configured: true, via: 'url', reachable: true } });
    expect((await sim.requests()).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api2/json/version']);
  });
});

describe('AUTH_MODE=none serves loopback only (DNS-rebinding protection)', () => {
  it.each([
    ['a foreign Host', { host: 'evil.example' }],
    ['a rebinding Host with a loopback-looking prefix', { host: '127.0.0.1.evil.example' }],
    ['a foreign Origin', { origin: 'https://evil.example' }],
    ['a null Origin', { origin: 'null' }],
  ])('refuses %s with 403', async (_label, headers) => {
    for (const path of ['/health', '/mcp', '/sse']) {
      const res = await workerFetch(`${ORIGIN}${path}`, { method: path === '/mcp' ? 'POST' : 'GET', headers: { ...MCP_HEADERS, ...headers }, body: path === '/mcp' ? JSON.stringify(INIT) : undefined });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toMatch(/only answers loopback requests/);
    }
  });

  it.each([['localhost:8787'], ['127.0.0.1:8787'], ['[::1]:8787']])('accepts Host %s', async (host) => {
    const res = await workerFetch(`${ORIGIN}/health`, { headers: { host, origin: 'http://localhost:6274' } });
    expect(res.status).toBe(200);
  });
});

describe('MCP over raw HTTP', () => {
  it('needs Accept with both JSON and SSE (406), and a session id after initialize (400)', async () => {
    const noAccept = await workerFetch(`${ORIGIN}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(INIT) });
    expect(noAccept.status).toBe(406);
    const noSession = await workerFetch(`${ORIGIN}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    expect(noSession.status).toBe(400);
  });

  it('initializes a session and ends it with DELETE', async () => {
    const res = await workerFetch(`${ORIGIN}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INIT) });
    expect(res.status).toBe(200);
    const session = res.headers.get('mcp-session-id');
    expect(session).toMatch(/^[0-9a-f]{64}$/);
    expect(await res.text()).toContain('"serverInfo":{"name":"proxmox-mcp"');
    const del = await workerFetch(`${ORIGIN}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': session!, 'mcp-protocol-version': '2025-06-18' } });
    expect(del.status).toBe(204);
  });

  it('answers unknown paths with 404 and a hint', async () => {
    const res = await workerFetch(`${ORIGIN}/api2/json/nodes`);
    expect(res.status).toBe(404);
  });
});

describe.each(TRANSPORTS)('tools/list over %s', (kind) => {
  it('offers both tools with schemas and honest hints', async () => {
    const client = await connect(kind);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['pve_list_vms', 'pve_create_qemu_vm']);
      const [list, create] = tools;
      expect(list!.description).toBe('List QEMU VMs and LXC containers from cluster resources');
      expect(list!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(list!.annotations!.title).toBeTruthy();
      expect(create!.description).toMatch(/^Create a QEMU VM\. Requires confirm=true\./);
      expect(create!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
      expect(create!.inputSchema.required).toEqual(['node']);
      expect(create!.inputSchema.additionalProperties).toBe(false);
      for (const t of tools) expect(t.outputSchema?.type).toBe('object');
      const result = await call(client, 'pve_list_vms', { limit: 1 });
      expect(text(result)).toMatch(/guests match; showing 1/);
    } finally {
      await client.close();
    }
  });

  it('answers an unknown tool with a protocol error', async () => {
    const client = await connect(kind);
    try {
      await expect(client.callTool({ name: 'pve_delete_everything', arguments: {} })).rejects.toThrow(/Unknown tool/);
    } finally {
      await client.close();
    }
  });
});
