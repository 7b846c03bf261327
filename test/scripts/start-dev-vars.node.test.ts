// `npm start` with a local operator's settings in a `.dev.vars` file (here one named by
// DEV_VARS): editors, admins, webhooks and a Proxmox reach the Worker (wrangler dev alone would
// ignore the file, npm start giving it an --env-file), the environment wins over the file, the
// file's secrets stay off every command line and come through exactly (quotes and `$` included), a file of secrets others can read is warned of, and a name the Worker does not
// read stops the start, saying which.

import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_SETTINGS } from '../../scripts/local-settings.ts';
import { IS_WINDOWS } from '../../scripts/processes.ts';
import { commandLines, NO_COMMAND_LINES } from '../support/command-lines.ts';
import { devAccessToken } from '../support/oauth-node.ts';
import { startNpm, type NpmStart } from '../support/npm-start.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-dev-vars-'));
// A secret as people write them: both quotes and what wrangler's reader would expand.
const ACCESS_SECRET = `it's "$HOME" and \${USER}`;
let server: NpmStart;
let proxmox: Server;
/** The Access secret of each request that reached "Proxmox" (here, a recorder). */
const accessSecrets: string[] = [];

function devVars(name: string, text: string, mode = 0o600): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  chmodSync(file, mode); // whatever the umask
  return file;
}

beforeAll(async () => {
  proxmox = createServer((req, res) => {
    accessSecrets.push(String(req.headers['cf-access-client-secret']));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
  });
  await new Promise<void>((resolve) => proxmox.listen(0, '127.0.0.1', resolve));
  const { port } = proxmox.address() as AddressInfo;
  const file = devVars(
    'operator.vars',
    [
      '# what a local operator tries',
      'POLICY_EDITORS=eve@example.com',
      'ADMIN_USERS=ada@example.com',
      `APPROVAL_WEBHOOKS='[`,
      `  {"name": "lab", "url": "http://127.0.0.1:9/hook", "format": "json", "private_network": true}`,
      `]'`,
      `PVE_BASE_URL=http://127.0.0.1:${port}/api2/json`,
      'PVE_TOKEN_ID=mcp@pve!local',
      'PVE_TOKEN_SECRET=00000000-0000-4000-8000-000000000000',
      'CF_ACCESS_CLIENT_ID=dev-vars.access',
      `CF_ACCESS_CLIENT_SECRET=\`${ACCESS_SECRET}\``,
      '',
    ].join('\n'),
    0o644, // readable by others: said, not refused
  );
  server = await startNpm({ DEV_VARS: file, ADMIN_USERS: 'root@example.com' });
}, 70_000);

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => proxmox?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const policyStatus = async (user: string): Promise<number> => {
  const token = await devAccessToken(server.url, user, '', 'policy:read');
  const res = await fetch(`${server.url}/admin/api/policy`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await res.body?.cancel();
  return res.status;
};

describe('npm start with a .dev.vars file', () => {
  it('says which settings it took from the file (names, never values)', () => {
    expect(server.output()).toContain(
      `Settings from ${path.join(dir, 'operator.vars')}: PVE_BASE_URL, PVE_TOKEN_ID, PVE_TOKEN_SECRET, CF_ACCESS_CLIENT_ID, CF_ACCESS_CLIENT_SECRET, APPROVAL_WEBHOOKS, POLICY_EDITORS`,
    );
    expect(server.output()).not.toContain('eve@example.com');
  });

  // Windows keeps who may read a file in its ACL: the script does not judge modes there.
  it('warns that a file holding secrets is readable by others', ({ skip }) => {
    skip(IS_WINDOWS, 'Windows keeps who may read a file in its ACL, not in a mode');
    expect(server.output()).toContain(
      `warning: ${path.join(dir, 'operator.vars')} holds secrets (PVE_TOKEN_SECRET, CF_ACCESS_CLIENT_SECRET, APPROVAL_WEBHOOKS) and other users can read it: chmod 600 it.`,
    );
  });

  it("hands the file's editors to the Worker, and the environment's admins over the file's", async () => {
    expect(await policyStatus('eve@example.com')).toBe(200); // editor, from the file
    expect(await policyStatus('root@example.com')).toBe(200); // admin, from the environment
    expect(await policyStatus('ada@example.com')).toBe(403); // the file's admin, overridden
    expect(await policyStatus('mallory@example.com')).toBe(403);
  });

  it("uses the file's Proxmox, with its secrets exactly as written, on no command line", async ({
    skip,
  }) => {
    skip(NO_COMMAND_LINES !== null, NO_COMMAND_LINES ?? undefined);
    // The notices are the operator view's: an administrator's policy:read token.
    const token = await devAccessToken(server.url, 'root@example.com', '', 'policy:read');
    const health = (await (
      await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as {
      notices?: { check: string; message: string }[];
    };
    expect(accessSecrets.length).toBeGreaterThan(0);
    expect(new Set(accessSecrets)).toEqual(new Set([ACCESS_SECRET]));
    // The webhooks are a secret too, and they reached the Worker.
    expect(health.notices?.find((n) => n.check === 'notify')?.message).toContain('"lab"');
    const lines = commandLines();
    expect(lines).toContain(`--port ${server.port}`); // the right processes are looked at
    for (const secret of ['$HOME', '0000-4000', '127.0.0.1:9/hook', 'APPROVAL_WEBHOOKS'])
      expect(lines).not.toContain(secret);
  });
});

describe('npm start refuses a .dev.vars it cannot use', () => {
  it('names a setting the Worker does not read, and the one meant', async () => {
    const file = devVars('typo.vars', 'ADMIN_USER=ada@example.com\nPORT=1\n');
    await expect(startNpm({ DEV_VARS: file })).rejects.toThrow(
      /names settings the Worker does not read[\s\S]*ADMIN_USER \(did you mean ADMIN_USERS\?\)[\s\S]*PORT: npm start's own setting/,
    );
  });

  it('stops when the DEV_VARS file is missing', async () => {
    await expect(startNpm({ DEV_VARS: path.join(dir, 'absent.vars') })).rejects.toThrow(
      /DEV_VARS: cannot read .*absent\.vars \(ENOENT\)/,
    );
  });
});

describe('the settings npm start passes on', () => {
  it('are every text setting the Worker reads (src/env.ts)', () => {
    const env = readFileSync(path.join(root, 'src/env.ts'), 'utf8');
    const declared = [...env.matchAll(/^\s+([A-Z][A-Z0-9_]*)\?: string;$/gm)].map((m) => m[1]);
    expect(declared.length).toBeGreaterThan(20);
    expect([...WORKER_SETTINGS].sort()).toEqual(declared.sort());
  });
});
