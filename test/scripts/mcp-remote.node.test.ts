// `npm start` with its default sign-in (OAuth, local development identity provider) and
// mcp-remote — what Claude Desktop, Cursor and other stdio clients use for remote servers:
// mcp-remote registers itself, prints the sign-in URL, a browser consents and signs in, and the
// tools are listed and called over stdio. The server is `npm start` on free ports with its own
// state directory (startNpm); mcp-remote's callback port is picked free and picked again if
// another process takes it first.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../../scripts/dev-stack.ts';
import { spawnNpm, spawnNpmSync } from '../../scripts/processes.ts';
import { FormBrowser, signInWithDevIdp } from '../support/form-browser.ts';
import { startNpm, type NpmStart } from '../support/npm-start.ts';

const root = path.resolve(import.meta.dirname, '../..');
const processes: ChildProcess[] = [];
let server: NpmStart;
let port: number;
let state: string;

function startProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  processes.push(child);
  return { child, output: () => output };
}

async function waitFor<T>(what: string, probe: () => T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * mcp-remote until it prints the sign-in URL, on a callback port picked free; it is told the
 * port (strict: it binds exactly that one), so a port taken meanwhile means another try.
 */
async function startMcpRemote(): Promise<{
  remote: ReturnType<typeof startProcess>;
  callbackPort: number;
  authUrl: string;
}> {
  for (let attempt = 1; ; attempt++) {
    const callbackPort = await freePort();
    const remote = startProcess(
      process.execPath,
      [
        path.join(root, 'node_modules/mcp-remote/dist/proxy.js'),
        `http://localhost:${port}/mcp`,
        String(callbackPort),
      ],
      // No desktop here: the "browser" below follows the URL mcp-remote prints.
      { MCP_REMOTE_CONFIG_DIR: state, BROWSER: 'true', DISPLAY: '' },
    );
    const authUrl = await waitFor('the sign-in URL', () => {
      const url = /Please authorize this client by visiting:\s+(\S+)/.exec(remote.output())?.[1];
      if (url) return url;
      return remote.child.exitCode !== null ? null : undefined;
    });
    if (authUrl) return { remote, callbackPort, authUrl };
    if (!/already in use|EADDRINUSE/.test(remote.output()) || attempt >= 5)
      throw new Error(`mcp-remote exited: ${remote.output()}`);
  }
}

beforeAll(async () => {
  state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-remote-'));
  server = await startNpm({});
  port = server.port;
}, 70_000);

afterAll(async () => {
  for (const child of processes.reverse()) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  await server?.stop();
  rmSync(state, { recursive: true, force: true });
});

/** An MCP client of npm start's server that only takes a bearer token (as the Inspector CLI). */
async function connect(bearer: string): Promise<Client> {
  const client = new Client({ name: 'header-only', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://localhost:${port}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${bearer}` } },
    }),
  );
  return client;
}

describe('mcp-remote against npm start', () => {
  it('signs in through the consent and dev login pages, then lists and calls the tools', async () => {
    const { remote, callbackPort, authUrl } = await startMcpRemote();
    expect(new URL(authUrl).pathname).toBe('/authorize');

    const browser = new FormBrowser((url, init) => fetch(url, init));
    const result = await signInWithDevIdp(browser, authUrl, {
      user: 'desktop-user@example.com',
      groups: 'ops',
    });
    expect(result.consentHtml).toMatch(/Allow <span class="uri">MCP CLI/);
    expect(result.consentHtml).toMatch(/app on your own computer/);
    const callback = new URL(result.location!);
    expect(callback.origin).toBe(`http://localhost:${callbackPort}`);
    expect(callback.searchParams.get('code')).toBeTruthy();
    await (await fetch(callback)).text(); // the browser lands on mcp-remote's callback

    // mcp-remote now talks MCP over stdio.
    let stdout = '';
    remote.child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const send = (message: object): void => {
      remote.child.stdin!.write(`${JSON.stringify(message)}\n`);
    };
    const reply = (id: number) =>
      waitFor(`reply ${id}`, () => {
        for (const line of stdout.split('\n')) {
          if (!line.trim().startsWith('{')) continue;
          const message = JSON.parse(line) as { id?: number };
          if (message.id === id)
            return message as { result?: Record<string, unknown>; error?: unknown };
        }
        return undefined;
      });
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'stdio-test', version: '1' },
      },
    });
    expect((await reply(1)).result).toMatchObject({ serverInfo: { name: 'proxmox-mcp' } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const tools = (await reply(2)).result!.tools as { name: string }[];
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['pve_list_vms', 'pve_create_qemu_vm', 'pve_get_vm_status']),
    );
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'pve_list_vms', arguments: { limit: 2 } },
    });
    const listed = (await reply(3)).result as {
      isError?: boolean;
      structuredContent: { total: number };
    };
    expect(listed.isError).toBeFalsy();
    expect(listed.structuredContent.total).toBeGreaterThanOrEqual(12);
  }, 90_000);

  it('gives header-only clients (the Inspector CLI) a token through npm run token, one grant a person', async () => {
    const token = () =>
      spawnNpmSync(['run', '-s', 'token', '--', 'inspector@example.com', 'ops'], {
        cwd: root,
        // The server's state directory: the script keeps its client there, as npm start does.
        env: { ...process.env, PORT: String(port), PERSIST_TO: server.stateDir },
      });
    const first = token();
    expect(first.status, first.stderr).toBe(0);
    const second = token();
    expect(second.status, second.stderr).toBe(0);
    const client = await connect(second.stdout.trim());
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['pve_list_vms', 'pve_create_qemu_vm', 'pve_get_vm_status']),
    );
    await client.close();
    // The second run signed the person in again through the same client: the first grant is gone.
    await expect(connect(first.stdout.trim())).rejects.toThrow(/invalid_token/);
    const saved = JSON.parse(
      readFileSync(path.join(server.stateDir, 'token-clients.json'), 'utf8'),
    ) as Record<string, { client_id: string }>;
    expect(Object.keys(saved)).toEqual([`http://localhost:${port}`]);
  }, 60_000);

  /**
   * `npm run token -- --url <server>` as a person runs it against a deployed server: it prints
   * the sign-in address (here `--no-browser`), the person signs in and consents in the browser
   * (the form browser, ticking what it is told), and the token comes out on stdout.
   */
  async function browserToken(
    user: string,
    tick: string[],
    more: string[] = [],
  ): Promise<{ token: string; stderr: string }> {
    const child = spawnNpm(
      [
        'run',
        '-s',
        'token',
        '--',
        '--url',
        `http://localhost:${port}/mcp`,
        '--no-browser',
        ...more,
      ],
      { cwd: root, env: { ...process.env, PERSIST_TO: server.stateDir } },
    );
    processes.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    const authUrl = await waitFor('the sign-in address', () => {
      const url = /^\s+(http:\/\/localhost:\d+\/authorize\?\S+)$/m.exec(stderr)?.[1];
      if (url) return url;
      if (child.exitCode !== null) throw new Error(`npm run token exited: ${stderr}`);
      return undefined;
    });
    // A request to the script's listener without this sign-in's state (another program that
    // found the port) is refused, and the sign-in goes on.
    const listener = new URL(new URL(authUrl).searchParams.get('redirect_uri')!);
    expect(listener.hostname).toBe('127.0.0.1');
    const stray = await fetch(`${listener.href}?code=stolen&state=guess`);
    expect(stray.status).toBe(400);
    const result = await signInWithDevIdp(new FormBrowser((u, i) => fetch(u, i)), authUrl, {
      user,
      scopes: tick,
    });
    const landing = await fetch(result.location!); // the browser lands on the script's listener
    expect(landing.status).toBe(200);
    expect(await landing.text()).toMatch(/^Signed in\./);
    expect(await exited, stderr).toBe(0);
    return { token: stdout.trim(), stderr };
  }

  it('signs a person in through the browser for npm run doctor, one grant a person, a forgotten client registered anew', async () => {
    const saved = (): Record<string, { client_id: string }> =>
      JSON.parse(readFileSync(path.join(server.stateDir, 'token-clients.json'), 'utf8'));
    const origin = `http://localhost:${port}`;

    const first = await browserToken('lead@example.com', ['pve:read', 'policy:read']);
    expect(first.stderr).toMatch(
      /Signed in; granted: (pve:read policy:read|policy:read pve:read)\./,
    );
    // The doctor with that token: /health's operator view (policy:read of an administrator),
    // tools/list and a read-only call.
    const doctor = spawnNpmSync(['run', '-s', 'doctor', '--', origin, '--token', first.token], {
      cwd: root,
      env: process.env,
      timeout: 60_000,
    });
    expect(doctor.stdout).toMatch(/^PASS {2}health .*operator view/m);
    expect(doctor.stdout).toMatch(/^PASS {2}sign-in +bearer token from --token/m);
    expect(doctor.stdout).toMatch(/^PASS {2}read-only call /m);
    expect(doctor.status, doctor.stdout).toBe(0);

    // Again for the same person: the same client, and the first grant is gone with its token.
    const clientId = saved()[origin]!.client_id;
    const second = await browserToken('lead@example.com', ['pve:read']);
    expect(saved()[origin]!.client_id).toBe(clientId);
    await expect(connect(first.token)).rejects.toThrow(/invalid_token/);
    await (await connect(second.token)).close();

    // A client the server does not know (its state was reset): registered anew, and it works.
    writeFileSync(
      path.join(server.stateDir, 'token-clients.json'),
      JSON.stringify({ [origin]: { client_id: 'forgotten-client' } }),
    );
    // --json: the token answer with the client id and refresh token, for a job that refreshes.
    const third = await browserToken('lead@example.com', ['pve:read'], ['--json']);
    const answer = JSON.parse(third.token) as Record<string, unknown>;
    expect(Object.keys(answer)).toEqual(
      expect.arrayContaining(['access_token', 'client_id', 'refresh_token', 'scope']),
    );
    expect(answer).not.toHaveProperty('issuer');
    expect(answer.client_id).toBe(saved()[origin]!.client_id);
    expect(answer.client_id).not.toBe('forgotten-client');
    expect(answer.client_id).not.toBe(clientId);
    await (await connect(answer.access_token as string)).close();
    const refreshed = await fetch(`${origin}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: answer.client_id as string,
        refresh_token: answer.refresh_token as string,
      }),
    });
    expect(refreshed.status).toBe(200);
  }, 90_000);
});
