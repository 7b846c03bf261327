// `npm run doctor` against `npm start` (default sign-in: OAuth with the development identity
// provider): every check passes; then, each on its own server, the Proxmox simulator stopped, a
// broken POLICY and a wrong PUBLIC_URL make it exit non-zero with a line naming the problem and
// the fix. Each server is `npm start` on free ports with its own state directory (startNpm),
// stopped with its whole process group.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS, startSimulator, type RunningSimulator } from '../../simulator/server.ts';
import { PROBE_TTL_MS } from '../../src/health/proxmox-probe.ts';
import { TOOLS } from '../../src/tools/index.ts';
import { startNpm, type NpmStart } from '../support/npm-start.ts';
import { runDoctor } from '../support/run-doctor.ts';

const CHECKS = [
  'health',
  'sign_in',
  'public_url',
  'oauth_kv',
  'proxmox',
  'policy',
  'audit',
  'oauth metadata',
  'resource metadata',
  'resource metadata /mcp',
  '401 challenge',
  'client registration',
  'sign-in',
  'tools/list',
  'read-only call',
];

describe('npm run doctor against npm start', () => {
  let sim: RunningSimulator;
  let server: NpmStart;
  beforeAll(async () => {
    // A simulator of our own, so that it can be stopped while the server keeps running.
    sim = await startSimulator({ port: 0 });
    server = await startNpm({
      PVE_BASE_URL: `${sim.url}/api2/json`,
      PVE_TOKEN_ID: SIMULATOR_TOKENS.admin.id,
      PVE_TOKEN_SECRET: SIMULATOR_TOKENS.admin.secret,
    });
  }, 70_000);
  afterAll(async () => {
    await server?.stop();
    await sim?.close();
  });

  it('passes every check, signing in through the development sign-in, and exits 0', async () => {
    const { status, output, line } = await runDoctor(server.url);
    for (const name of CHECKS) expect(line(name), output).toMatch(/^PASS /);
    expect(line('proxmox')).toMatch(/reachable \(GET \/version in \d+ ms, PVE 9\.1\.3\)/);
    // Its own development sign-in (policy:read) gives it the details: loopback alone would not.
    expect(line('health')).toMatch(/IDP=dev, operator view$/);
    // The bundled policy lists every tool of this server.
    expect(line('tools/list')).toMatch(
      new RegExp(`${TOOLS.length} tools in \\d+ ms: pve_get_version, pve_get_cluster_status`),
    );
    expect(line('read-only call')).toMatch(
      /pve_list_vms \{limit: 1\} answered in \d+ ms \(13 guests in all\)/,
    );
    expect(output.trim().split('\n').at(-1)).toBe(`${CHECKS.length} passed, 0 failed`);
    expect(status).toBe(0);
  }, 60_000);

  it('fails naming Proxmox, and what to check, once the simulator is stopped', async () => {
    await sim.close();
    // /health keeps a probe's answer this long: past it, it asks again and nothing answers.
    await new Promise((r) => setTimeout(r, PROBE_TTL_MS + 500));
    const { status, output, line } = await runDoctor(server.url);
    expect(status, output).toBe(1);
    expect(line('proxmox')).toMatch(
      /^FAIL {2}proxmox\s+Could not connect to the Proxmox API for GET \/version: .* Fix: Nothing answered at PVE_BASE_URL: check host and port, that pveproxy \(locally: the simulator, `npm start`\) is running/,
    );
    expect(line('read-only call')).toMatch(/^FAIL .*Could not connect to the Proxmox API/);
    for (const name of [
      'sign_in',
      'public_url',
      'policy',
      'oauth metadata',
      '401 challenge',
      'tools/list',
    ])
      expect(line(name)).toMatch(/^PASS /);
    expect(output).not.toContain(SIMULATOR_TOKENS.admin.secret);
  }, 60_000);
});

describe('npm run doctor against npm start with a broken POLICY', () => {
  let server: NpmStart;
  beforeAll(async () => {
    server = await startNpm({ POLICY: JSON.stringify({ version: '1', default: 'maybe' }) });
  }, 70_000);
  afterAll(() => server?.stop());

  it('exits 1 naming the policy error and the fix', async () => {
    const { status, output, line } = await runDoctor(server.url);
    expect(status, output).toBe(1);
    expect(line('policy')).toMatch(
      /^FAIL {2}policy\s+policy \(POLICY\) is invalid; every tool call is denied: \/default: Invalid option.* Fix: Correct the errors \(`npm run policy -- check <file>` lists them\)/,
    );
    expect(line('read-only call')).toMatch(/^FAIL .*\[POLICY DENIED\]/);
    expect(line('proxmox')).toMatch(/^PASS /);
  }, 60_000);
});

describe('npm run doctor against npm start with a PUBLIC_URL that is not the URL used', () => {
  let server: NpmStart;
  beforeAll(async () => {
    server = await startNpm({ PUBLIC_URL: 'https://mcp.example.com' });
  }, 70_000);
  afterAll(() => server?.stop());

  it('exits 1 naming PUBLIC_URL, the URL used and the fix', async () => {
    const { status, output, line } = await runDoctor(server.url);
    expect(status, output).toBe(1);
    // The development sign-in cannot give a token for this URL, so /health's details stay
    // withheld (nobody sees them for asking from loopback); the OAuth metadata names the URL.
    expect(line('public_url')).toMatch(
      /^FAIL {2}public_url\s+\/health reports a problem here \(its details are for an administrator: the public view\)\. Fix: Pass --token .*policy:read/,
    );
    expect(line('oauth metadata')).toContain(
      `FAIL  oauth metadata         issuer is https://mcp.example.com, not ${server.url}`,
    );
    expect(line('401 challenge')).toMatch(/^FAIL .*401 without resource_metadata/);
    expect(line('proxmox')).toMatch(/^PASS /);
  }, 60_000);
});
