// The Worker as a whole: health, the loopback guard of AUTH_MODE=none, the MCP endpoints over
// raw HTTP, and the tool list contract.

import { describe, expect, it } from 'vitest';
import { forgetProbes } from '../../src/health/proxmox-probe';
import { chunkedBody } from '../support/chunked-body';
import {
  call,
  connect,
  INIT,
  MCP_HEADERS,
  ORIGIN,
  text,
  TRANSPORTS,
  workerFetch,
} from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

describe('GET /health', () => {
  it('answers 200 with ok and version, having asked Proxmox only GET /version', async () => {
    forgetProbes();
    await sim.clearLog();
    const res = await workerFetch(`${ORIGIN}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      ok: true,
      version: '0.1.0',
      view: 'operator',
      auth_mode: 'none',
      proxmox: { configured: true, via: 'url', reachable: true },
    });
    expect(await sim.requestLines()).toEqual(['GET /api2/json/version']);
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
      const res = await workerFetch(`${ORIGIN}${path}`, {
        method: path === '/mcp' ? 'POST' : 'GET',
        headers: { ...MCP_HEADERS, ...headers },
        body: path === '/mcp' ? JSON.stringify(INIT) : undefined,
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toMatch(
        /only answers loopback requests/,
      );
    }
  });

  it.each([['localhost:8787'], ['127.0.0.1:8787'], ['[::1]:8787']])(
    'accepts Host %s',
    async (host) => {
      const res = await workerFetch(`${ORIGIN}/health`, { headers: { host } });
      expect(res.status).toBe(200);
    },
  );

  it('refuses a Host under .localhost with a 403, not a 500', async () => {
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, host: 'evil.localhost:8787' },
      body: JSON.stringify(INIT),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).not.toMatch(/at \w+ \(|\.ts:\d+/);
  });
});

describe('AUTH_MODE=none has no sign-in', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/authorize?response_type=code&client_id=x'],
    ['POST', '/authorize'],
    ['GET', '/oauth/callback?code=x&state=y'],
    ['GET', '/dev-idp/login?state=x'],
  ])('answers %s %s with 404, as for any path it does not serve', async (method, path) => {
    const res = await workerFetch(`${ORIGIN}${path}`, { method });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found' });
  });
});

describe('AUTH_MODE=none serves same-origin browsers only (no CORS unless configured)', () => {
  it('refuses a page on another localhost port, preflight included', async () => {
    for (const method of ['POST', 'OPTIONS']) {
      const res = await workerFetch(`${ORIGIN}/mcp`, {
        method,
        headers: { ...MCP_HEADERS, origin: 'http://localhost:6274' },
        body: method === 'POST' ? JSON.stringify(INIT) : undefined,
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(((await res.json()) as { message: string }).message).toMatch(
        /may not call this server from a browser \(set CORS_ORIGINS/,
      );
    }
  });

  it('answers its own origin and non-browser clients without any CORS header', async () => {
    for (const headers of [{ ...MCP_HEADERS, origin: ORIGIN }, MCP_HEADERS]) {
      const res = await workerFetch(`${ORIGIN}/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify(INIT),
      });
      expect(res.status).toBe(200);
      expect([...res.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
      await res.body?.cancel();
    }
  });
});

describe('request bodies are capped, with or without a length', () => {
  it('answers 413 to a chunked MCP body over 4 MiB', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 4 * 1024 * 1024 + chunk.length) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });

  it('answers 413 to a chunked SSE message over 4 MiB, and the tool call in it never runs', async () => {
    const stream = await workerFetch(`${ORIGIN}/sse`, { headers: { accept: 'text/event-stream' } });
    const reader = stream.body!.getReader();
    let events = '';
    const readUntil = async (pattern: RegExp): Promise<void> => {
      while (!pattern.test(events)) events += new TextDecoder().decode((await reader.read()).value);
    };
    await readUntil(/sessionId=([0-9a-f]+)/);
    const endpoint = `${ORIGIN}/sse/message?sessionId=${/sessionId=([0-9a-f]+)/.exec(events)![1]}`;
    const post = (body: string | ReadableStream<Uint8Array>) =>
      workerFetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
    expect((await post(JSON.stringify(INIT))).status).toBe(202);
    expect(
      (await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status,
    ).toBe(202);
    await sim.clearLog();
    // Valid JSON after 4 MiB of whitespace: read whole, it would create a VM.
    const create = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'pve_create_qemu_vm', arguments: { node: 'pve1', confirm: true } },
    };
    const res = await post(chunkedBody(`${' '.repeat(4 * 1024 * 1024)}${JSON.stringify(create)}`));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: 'payload_too_large',
      message: 'The request body is larger than 4194304 bytes.',
    });
    // The session is live (a call at its own size is answered), and nothing was written.
    expect(
      (await post(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }))).status,
    ).toBe(202);
    await readUntil(/"id":4/);
    expect(events).not.toMatch(/"id":3/);
    expect(await sim.writes()).toEqual([]);
    await reader.cancel();
  });

  it('answers 413 to a form over 64 KiB, and 400 to a post that is not a form', async () => {
    const big = await workerFetch(`${ORIGIN}/approvals/AAAAAAAAAAAAAAAAAAAAAA`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `decision=approve&x=${'a'.repeat(70 * 1024)}`,
    });
    expect(big.status).toBe(413);
    const json = await workerFetch(`${ORIGIN}/approvals/AAAAAAAAAAAAAAAAAAAAAA`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"decision":"approve"}',
    });
    expect(json.status).toBe(400);
    expect(await json.text()).toMatch(/could not be read/);
  });
});

describe('MCP over raw HTTP', () => {
  it('needs Accept with both JSON and SSE (406), and a session id after initialize (400)', async () => {
    const noAccept = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(INIT),
    });
    expect(noAccept.status).toBe(406);
    const noSession = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(noSession.status).toBe(400);
  });

  it('initializes a session and ends it with DELETE', async () => {
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify(INIT),
    });
    expect(res.status).toBe(200);
    const session = res.headers.get('mcp-session-id');
    expect(session).toMatch(/^[0-9a-f]{64}$/);
    expect(await res.text()).toContain('"serverInfo":{"name":"proxmox-mcp"');
    const del = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'DELETE',
      headers: { 'mcp-session-id': session!, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(del.status).toBe(204);
  });

  it('answers unknown paths with 404 and a hint', async () => {
    const res = await workerFetch(`${ORIGIN}/api2/json/nodes`);
    expect(res.status).toBe(404);
  });
});

describe.each(TRANSPORTS)('tools/list over %s', (kind) => {
  it('offers every tool with a title, schemas and honest hints, in at most 36 KB', async () => {
    const client = await connect(kind);
    try {
      const { tools } = await client.listTools();
      // PLG's names, reads first, then writes.
      expect(tools.map((t) => t.name)).toEqual([
        'pve_get_version',
        'pve_get_cluster_status',
        'pve_list_nodes',
        'pve_get_node_metrics',
        'pve_list_resources',
        'pve_list_vms',
        'pve_get_vm_status',
        'pve_get_vm_config',
        'pve_list_storage',
        'pve_list_backups',
        'pve_list_storage_content',
        'pve_get_task_status',
        'pve_list_snapshots',
        'pve_guest_info',
        'pve_guest_file_read',
        'pve_start_vm',
        'pve_shutdown_vm',
        'pve_stop_vm',
        'pve_reboot_vm',
        'pve_suspend_vm',
        'pve_resume_vm',
        'pve_create_snapshot',
        'pve_delete_snapshot',
        'pve_rollback_snapshot',
        'pve_create_qemu_vm',
        'pve_clone_vm',
        'pve_create_lxc',
        'pve_delete_vm',
        'pve_resize_disk',
        'pve_set_vm_config',
        'pve_migrate_vm',
        'pve_guest_exec',
        'pve_create_backup',
        'pve_restore_backup',
        'pve_delete_backup',
        'pve_api_request',
      ]);
      // Every tool definition is paid for in each conversation's context (the budget under the
      // shipped policy is held in test/policy/bundled.worker.test.ts).
      expect(JSON.stringify({ tools }).length).toBeLessThanOrEqual(36 * 1024);
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const t of tools) {
        // The title once, at the top (annotations would repeat it); hints MCP assumes left out.
        expect(t.title, t.name).toBeTruthy();
        expect(t.annotations!.title, t.name).toBeUndefined();
        expect(t.outputSchema?.type, t.name).toBe('object');
        expect(Object.keys(t.outputSchema?.properties ?? {}).length, t.name).toBeGreaterThan(0);
        // Unknown arguments are refused by name (test/tools/hostile-inputs.worker.test.ts); the schema
        // does not spend `additionalProperties: false` on saying so.
        expect(t.inputSchema.type, t.name).toBe('object');
        expect(t.inputSchema.additionalProperties, t.name).toBeUndefined();
        expect(t.annotations!.openWorldHint, t.name).toBe(false);
        const reads = /^pve_(get|list)_|^pve_guest_(info|file_read)$/.test(t.name);
        expect(t.annotations!.readOnlyHint ?? false, t.name).toBe(reads);
        // Every write takes confirm, and previews without it.
        if (!reads) expect(t.inputSchema.properties, t.name).toHaveProperty('confirm');
      }
      const destructive = tools.filter((t) => t.annotations!.destructiveHint).map((t) => t.name);
      expect(destructive).toEqual([
        'pve_stop_vm',
        'pve_delete_snapshot',
        'pve_rollback_snapshot',
        'pve_delete_vm',
        'pve_set_vm_config',
        'pve_guest_exec',
        'pve_restore_backup',
        'pve_delete_backup',
        'pve_api_request',
      ]);
      expect(byName.get('pve_list_vms')!.description).toBe(
        'List QEMU VMs and LXC containers from cluster resources',
      );
      // The seeds' two descriptions, as they give them (the closing period too), open ours.
      const seedCreate = 'Create a QEMU VM. Requires confirm=true.';
      expect(byName.get('pve_create_qemu_vm')!.description?.slice(0, seedCreate.length)).toBe(
        seedCreate,
      );
      expect(byName.get('pve_create_qemu_vm')!.inputSchema.required).toEqual(['node']);
      expect(byName.get('pve_start_vm')!.inputSchema.required).toEqual(['node', 'vmid']);
      const result = await call(client, 'pve_list_vms', { limit: 1 });
      expect(text(result)).toMatch(/guests match; showing 1/);
    } finally {
      await client.close();
    }
  });

  it('answers an unknown tool with a protocol error', async () => {
    const client = await connect(kind);
    try {
      await expect(
        client.callTool({ name: 'pve_delete_everything', arguments: {} }),
      ).rejects.toThrow(/Unknown tool/);
    } finally {
      await client.close();
    }
  });
});
