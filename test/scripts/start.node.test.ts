// `npm start` with AUTH_MODE=none end to end: the simulator and `wrangler dev` come up, an MCP SDK
// client lists every tool and calls two of them over /mcp and /sse, a second `npm start` on its port
// and state directory stops at once saying so, and stopping it stops workerd too.
// (The default, OAuth with the dev sign-in, is exercised through mcp-remote in mcp-remote.node.test.ts.)

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { IS_WINDOWS, spawnNpm } from '../../scripts/processes.ts';
import { TOOLS } from '../../src/tools/index.ts';
import { startNpm, type NpmStart } from '../support/npm-start.ts';

const root = path.resolve(import.meta.dirname, '../..');
const INSPECTOR = path.join(
  root,
  'node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js',
);

let server: NpmStart;
let port: number;
let output = '';

beforeAll(async () => {
  server = await startNpm({ AUTH_MODE: 'none' });
  port = server.port;
  output = server.output();
}, 70_000);

afterAll(() => server.stop());

describe('npm start', () => {
  it('says it serves loopback only without authentication', () => {
    expect(output).toContain(
      'AUTH_MODE=none: no authentication. Only loopback requests are served',
    );
    expect(output).toMatch(/Proxmox simulator: http:\/\/127\.0\.0\.1:\d+\/api2\/json/);
  });

  it('prints its banner last, with no temporary path and no hint a newcomer cannot act on', async () => {
    // What wrangler prints for a request arrives in its own time: give a late line the chance.
    await new Promise((r) => setTimeout(r, 1500));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape starts every colour
    const text = server.output().replace(/\x1b\[[0-9;]*m/g, '');
    expect(text).not.toMatch(/Ready on http/); // the banner says when it is ready
    expect(text).not.toMatch(/types might be out of date/);
    expect(text).not.toMatch(/Using secrets defined in|pve-mcp-secrets-/);
    // wrangler's bindings table once (it prints it again when its connection status settles).
    expect(text.match(/Your Worker has access to the following bindings:/g)).toHaveLength(1);
    expect(text).not.toMatch(/Connection status updated/);
    const lines = text.trimEnd().split('\n');
    const banner = lines.findIndex((l) => l.startsWith('MCP server ready'));
    expect(banner, text).toBeGreaterThan(0);
    expect(lines.slice(banner + 1).join('\n')).toMatch(
      /^ {2}streamable HTTP {2}http:\/\/localhost:\d+\/mcp\n {2}SSE {14}\S+\n {2}health {11}\S+\nTry: npx -y @modelcontextprotocol\/inspector@\S+ --cli \S+ --transport http --method tools\/list$/,
    );
  });

  it('lists every tool to the MCP Inspector CLI with no schema portability warning', () => {
    // The Inspector needs Node 22: the one this test runs under (README, "Which Node").
    const run = spawnSync(
      process.execPath,
      [
        INSPECTOR,
        `http://localhost:${port}/mcp`,
        '--transport',
        'http',
        '--method',
        'tools/list',
        '--strict',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/portab|Warning|Error/i);
    const { tools } = JSON.parse(run.stdout) as { tools: { name: string }[] };
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
  });

  it.each([
    ['sdk-v1', '2025-11-25'],
    ['sdk-v2', '2026-07-28'],
  ])('runs the client example examples/%s.ts, at %s', (example, version) => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', `examples/${example}.ts`], {
      cwd: root,
      env: { ...process.env, MCP_URL: `http://localhost:${port}/mcp` },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`^protocol ${version}: ${TOOLS.length} tools\n3 nodes:\n`),
    );
  });

  it.each([
    [
      'streamable HTTP',
      () => new StreamableHTTPClientTransport(new URL(`http://localhost:${port}/mcp`)),
    ],
    ['SSE', () => new SSEClientTransport(new URL(`http://localhost:${port}/sse`))],
  ])('lists every tool and calls the list and create tools over %s', async (_label, transport) => {
    const client = new Client({ name: 'start-test', version: '1' });
    await client.connect(transport());
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining([
          'pve_list_vms',
          'pve_create_qemu_vm',
          'pve_start_vm',
          'pve_get_vm_status',
        ]),
      );
      expect(tools).toHaveLength(TOOLS.length); // the bundled policy lists every tool of this server
      const list = await client.callTool({ name: 'pve_list_vms', arguments: { limit: 3 } });
      expect(list.isError).toBeFalsy();
      expect((list.structuredContent as { total: number }).total).toBeGreaterThanOrEqual(12);
      const preview = await client.callTool({
        name: 'pve_create_qemu_vm',
        arguments: { node: 'pve1', name: 'demo' },
      });
      expect((preview.structuredContent as { mode: string }).mode).toBe('preview');
    } finally {
      await client.close();
    }
  });

  it('refuses a second server on its port and state directory, saying which and what to do', async () => {
    const second = spawnNpm(['start'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, PORT: String(port), SIM_PORT: '0', PERSIST_TO: server.stateDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    second.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    second.stderr!.on('data', (d: Buffer) => (said += d.toString()));
    const status = await new Promise((r) => second.on('close', r));
    expect(status, said).toBe(1);
    expect(said).toContain(`port ${port} (PORT) is already in use`);
    expect(said).toMatch(/is the state directory of another npm start \(pid \d+\)/);
    expect(said).toContain('PORT=0 SIM_PORT=0 PERSIST_TO=$(mktemp -d) npm start');
    expect(said).not.toContain('MCP server ready');
    // The first one is unharmed.
    expect((await fetch(`http://localhost:${port}/health`)).status).toBe(200);
  });

  // Windows has no signal a program can catch from another: killing npm there ends npm alone
  // (Ctrl-C reaches every process of the console instead, and the tests stop the tree).
  it('stops workerd when stopped', async ({ skip }) => {
    skip(IS_WINDOWS, 'Windows has no signal one program can send another to catch');
    // npm alone, not its group: `npm start` itself must take wrangler and workerd down.
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
    // The port is free once wrangler and workerd are gone: within 10 s (their own shutdown).
    const deadline = Date.now() + 10_000;
    let answered = true;
    while (answered && Date.now() < deadline) {
      answered = await fetch(`http://127.0.0.1:${port}/health`).then(
        async (res) => {
          await res.body?.cancel();
          return true;
        },
        () => false,
      );
      if (answered) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answered, 'the server still answers 10 s after npm stopped').toBe(false);
  });
});
