// `npm start` against a real Proxmox configuration (PVE_BASE_URL and a token in the environment):
// the token secret and the Access secret never appear on any process's command line (`ps` shows
// every user's), they still reach the Worker (a call succeeds with them), and the private file
// that carried them (0600, in a 0700 directory) is gone once the server stops.

import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SIMULATOR_TOKENS, startSimulator, type RunningSimulator } from '../../simulator/server.ts';
import { commandLines, NO_COMMAND_LINES } from '../support/command-lines.ts';
import { startNpm, type NpmStart } from '../support/npm-start.ts';

const ACCESS_SECRET = 'access-secret-for-ps-test-7f3a9c';
let sim: RunningSimulator;
let server: NpmStart;

/** The secrets file of this server's wrangler (other tests' servers may be running beside it). */
function ourSecretsFile(): string {
  const line = commandLines()
    .split('\n')
    .find((l) => l.includes(` dev --port ${server.port} `) && l.includes('--env-file'));
  const file = line?.match(/--env-file (\S+)/)?.[1];
  if (!file) throw new Error(`no wrangler with --port ${server.port} and --env-file is running`);
  return file;
}

beforeAll(async () => {
  sim = await startSimulator({ authFailDelayMs: 0 });
  server = await startNpm({
    AUTH_MODE: 'none',
    PVE_BASE_URL: `${sim.url}/api2/json`,
    PVE_TOKEN_ID: SIMULATOR_TOKENS.admin.id,
    PVE_TOKEN_SECRET: SIMULATOR_TOKENS.admin.secret,
    CF_ACCESS_CLIENT_ID: 'ps-test.access',
    CF_ACCESS_CLIENT_SECRET: ACCESS_SECRET,
  });
}, 70_000);

afterAll(async () => {
  await server.stop();
  await sim.close();
});

describe('npm start with a real-Proxmox configuration', () => {
  it('uses the given Proxmox, not the simulator it would start', () => {
    expect(server.output()).toContain(`Proxmox API: ${sim.url}/api2/json`);
  });

  it('puts no secret on any command line', ({ skip }) => {
    skip(NO_COMMAND_LINES !== null, NO_COMMAND_LINES ?? undefined);
    const lines = commandLines();
    expect(lines).toContain('wrangler'); // the check looks at the right processes
    expect(lines).toContain('--env-file');
    expect(lines).not.toContain(SIMULATOR_TOKENS.admin.secret);
    expect(lines).not.toContain(ACCESS_SECRET);
  });

  it('still hands the secrets to the Worker: calls reach Proxmox with the token and the Access headers', async () => {
    const client = new Client({ name: 'start-secrets-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://localhost:${server.port}/mcp`)),
    );
    const list = await client.callTool({ name: 'pve_list_vms', arguments: { limit: 1 } });
    expect(list.isError, JSON.stringify(list.content)).toBeFalsy();
    await client.close();
    const log = (await (await fetch(`${sim.url}/_sim/requests`)).json()) as {
      requests: { headers: Record<string, string> }[];
    };
    const last = log.requests.at(-1)!;
    expect(last.headers['cf-access-client-id']).toBe('ps-test.access');
    expect(last.headers['cf-access-client-secret']).toBeDefined();
  });

  // Found through wrangler's command line; Windows keeps who may read it in an ACL, not a mode.
  it('keeps the secrets file private while it runs: mode 0600 in a directory of mode 0700', ({
    skip,
  }) => {
    skip(NO_COMMAND_LINES !== null, NO_COMMAND_LINES ?? undefined);
    const file = ourSecretsFile();
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect((statSync(path.dirname(file)).mode & 0o777).toString(8)).toBe('700');
  });

  it('removes the private secrets file when it stops', async ({ skip }) => {
    skip(NO_COMMAND_LINES !== null, NO_COMMAND_LINES ?? undefined);
    const file = ourSecretsFile();
    expect(path.basename(path.dirname(file))).toMatch(/^pve-mcp-secrets-/);
    expect(existsSync(file)).toBe(true);
    await server.stop();
    expect(existsSync(file)).toBe(false);
    expect(existsSync(path.dirname(file))).toBe(false);
  });
});
