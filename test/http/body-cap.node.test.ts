// The MCP body cap holds beside a busy server, through `wrangler dev` as a client meets it: a
// 24 MB chunked body inside a session, several at once while the same session makes tool calls,
// is answered 413 every time (never a 503, a reset or a session check), and the session goes on.
// (The calls beside them may meet wrangler dev's own proxy, which takes a lost connection to the
// simulator in this busy process for a restart and answers what is in flight "503 Your worker
// restarted mid-request"; never the server's own session check.)

import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startStack, type Stack } from '../../scripts/dev-stack.ts';
import { devAccessToken } from '../support/oauth-node.ts';
import { type SimulatorProcess, startSimulatorProcess } from '../support/simulator-process.ts';

let stack: Stack;
let dir: string;
let token: string;
let client: Client;
let session: string;
/** The simulator in a process of its own, as a real Proxmox is: this one is busy uploading. */
let simulator: SimulatorProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'body-cap-'));
  simulator = await startSimulatorProcess({ authFailDelayMs: 3000, taskDurationMs: 1500 });
  stack = await startStack({
    port: 0,
    inspectorPort: 0,
    simPort: 0,
    simulatorUrl: simulator.url,
    stdio: 'ignore',
    persistTo: path.join(dir, 'state'),
    vars: { AUTH_MODE: 'oauth', IDP: 'dev' },
  });
  token = await devAccessToken(stack.url, 'load@example.com');
  client = new Client({ name: 'busy', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  session = transport.sessionId!;
}, 120_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
  await simulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** POSTs `bytes` of body in 64 KiB chunks, without a length; the status, or 'reset'. */
function chunkedPost(bytes: number): Promise<number | 'reset'> {
  const url = new URL(`${stack.url}/mcp`);
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: '/mcp',
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': session,
          'mcp-protocol-version': '2025-11-25',
          'transfer-encoding': 'chunked',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve('reset'));
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = (): void => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('the MCP body cap beside a busy server', () => {
  it('answers 413 to every 24 MB chunked body, while the session goes on calling tools', async () => {
    const statuses: (number | 'reset')[] = [];
    const neighbours: string[] = [];
    for (let round = 0; round < 3; round++) {
      const load = Array.from({ length: 20 }, () =>
        client.callTool({ name: 'pve_list_vms', arguments: {} }).then(
          (r) => neighbours.push(r.isError ? 'tool error' : 'ok'),
          (err: unknown) => neighbours.push(String(err)),
        ),
      );
      statuses.push(...(await Promise.all([1, 2].map(() => chunkedPost(24 * 1024 * 1024)))));
      await Promise.all(load);
    }
    expect(statuses).toEqual(Array(6).fill(413));
    expect(neighbours).toHaveLength(60);
    expect(neighbours.filter((n) => /session could not be checked/.test(n))).toEqual([]);
    const after = await client.callTool({ name: 'pve_list_vms', arguments: {} });
    expect(after.isError).toBeFalsy();
  }, 120_000);
});
