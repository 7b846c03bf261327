// `npm run policy -- push|replay` against a running server (wrangler dev with the simulator,
// dev sign-in), the way a CI job runs it: the token from PVE_MCP_TOKEN, the policy from a file.
// Runs in-process (scripts/policy/remote.ts, the function the script calls); the last test runs
// the npm script itself.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../../scripts/dev-stack.ts';
import { spawnNpmSync } from '../../../scripts/processes.ts';
import { policyRemote } from '../../../scripts/policy/remote.ts';
import { FormBrowser, openAsDevUser } from '../../support/form-browser.ts';
import { devAccessToken, devSignedInClient } from '../../support/oauth-node.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const DEPLOYED = {
  version: '1',
  default: 'deny',
  tools: { pve_list_vms: {}, pve_start_vm: {} },
};
const CLOSED = {
  version: '1',
  default: 'deny',
  tools: { pve_list_vms: { action: 'deny' }, pve_start_vm: {} },
};

let stack: Stack;
let dir: string;
let editorToken: string;
let adminToken: string;
/** The editor's token of an MCP client: no policy:edit scope. */
let editorMcpToken: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'policy-remote-'));
  stack = await startStack({
    port: 0,
    inspectorPort: 0,
    simPort: 0,
    stdio: 'ignore',
    persistTo: path.join(dir, 'state'),
    vars: {
      AUTH_MODE: 'oauth',
      IDP: 'dev',
      ALLOWED_GROUPS: 'ops',
      // The CI account replays over everyone's calls: an administrator too (an editor alone
      // replays their own calls only).
      ADMIN_USERS: 'admin@example.com,ci@example.com',
      POLICY_EDITORS: 'ci@example.com',
      POLICY: JSON.stringify(DEPLOYED),
    },
  });
  [editorToken, adminToken, editorMcpToken] = await Promise.all([
    devAccessToken(stack.url, 'ci@example.com', 'ops', 'policy:edit'),
    devAccessToken(stack.url, 'admin@example.com', 'ops', 'policy:edit'),
    devAccessToken(stack.url, 'ci@example.com', 'ops'),
  ]);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, body: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof body === 'string' ? body : JSON.stringify(body, null, 2));
  return p;
}

async function run(
  token: string | undefined,
  ...argv: string[]
): Promise<{ status: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const status = await policyRemote(
    argv,
    { log: (l) => out.push(l), error: (l) => err.push(l) },
    { PVE_MCP_TOKEN: token },
  );
  return { status, out: out.join('\n'), err: err.join('\n') };
}

async function versions(): Promise<{ active: { version: number }; versions: unknown[] }> {
  const res = await fetch(`${stack.url}/admin/api/policy`, {
    headers: { authorization: `Bearer ${adminToken}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { active: { version: number }; versions: unknown[] };
}

describe('npm run policy -- replay and push', () => {
  it('replays a draft over the recorded calls and lists the ones it would refuse', async () => {
    const agent = await devSignedInClient(stack.url, 'agent@example.com', 'ops');
    for (let i = 0; i < 2; i++) await agent.callTool({ name: 'pve_list_vms', arguments: {} });
    await agent.close();
    // The records are written just after the answers.
    let r = await run(editorToken, 'replay', file('closed.json', CLOSED), '--url', stack.url);
    for (let i = 0; i < 20 && !/2 of/.test(r.out); i++) {
      await new Promise((res) => setTimeout(res, 250));
      r = await run(editorToken, 'replay', file('closed.json', CLOSED), '--url', stack.url);
    }
    expect(r.status, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(
      lines.filter((l) =>
        /pve_list_vms {2}allow -> deny \(\/tools\/pve_list_vms\/action\)/.test(l),
      ),
    ).toHaveLength(2);
    expect(lines.at(-1)).toMatch(
      /: 2 of \d+ recorded calls since .* would be decided otherwise \(allow→deny 2\)/,
    );
    const gated = await run(
      editorToken,
      'replay',
      file('closed.json', CLOSED),
      '--url',
      stack.url,
      '--fail-on-change',
    );
    expect(gated.status).toBe(3);
  });

  it('pushes and activates a version with a comment; the server then decides by it', async () => {
    const r = await run(
      editorToken,
      'push',
      file('closed.json', CLOSED),
      '--url',
      stack.url,
      '--activate',
      '--comment',
      'close listing (CI)',
    );
    expect(r.status, r.err).toBe(0);
    expect(r.out).toMatch(/version 2 \(active\)/);
    expect((await versions()).active.version).toBe(2);
    // Every isolate follows within 5 s (the session object of a new client is one of them).
    const agent = await devSignedInClient(stack.url, 'agent@example.com', 'ops');
    const pushed = Date.now();
    let listed = await agent.callTool({ name: 'pve_list_vms', arguments: {} });
    while (!listed.isError && Date.now() - pushed < 5_000) {
      await new Promise((res) => setTimeout(res, 200));
      listed = await agent.callTool({ name: 'pve_list_vms', arguments: {} });
    }
    await agent.close();
    expect(listed.isError).toBe(true);
    expect(JSON.stringify(listed.structuredContent)).toContain('/tools/pve_list_vms/action');
  });

  it('sends nothing for an invalid file, and a person who is not an editor is refused', async () => {
    const before = (await versions()).versions.length;
    const bad = await run(
      editorToken,
      'push',
      file('bad.json', { version: '1', default: 'perhaps' }),
      '--url',
      stack.url,
      '--comment',
      'oops',
    );
    expect(bad.status).toBe(1);
    expect(bad.err).toMatch(/invalid policy, nothing sent\n\/default/);
    // A rule no call of its tool reaches: refused as `check` refuses it; the server's own check
    // takes it with a warning (the store takes what another release of the server accepted).
    const aimless = {
      version: '1',
      default: 'allow',
      tools: {
        pve_list_vms: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }] },
      },
    };
    const unreached = await run(
      editorToken,
      'push',
      file('aimless.json', aimless),
      '--url',
      stack.url,
      '--comment',
      'a rule on no guest',
    );
    expect(unreached.status).toBe(1);
    expect(unreached.err).toBe(
      `${path.join(dir, 'aimless.json')}: invalid policy, nothing sent\n/tools/pve_list_vms/deny_if/0: target.tags: pve_list_vms acts on no guest, so no target fact reaches it`,
    );
    // A replay replays it, as the server's replay of a stored version would.
    const replayed = await run(
      editorToken,
      'replay',
      file('aimless.json', aimless),
      '--url',
      stack.url,
    );
    expect(replayed.status, replayed.err).toBe(0);
    const checked = await fetch(`${stack.url}/admin/api/policy/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${editorToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ policy: aimless }),
    });
    expect(await checked.json()).toEqual({
      ok: true,
      problems: [],
      warnings: [
        '/tools/pve_list_vms/deny_if/0: target.tags: pve_list_vms acts on no guest, so no target fact reaches it',
      ],
    });
    const notEditor = await run(
      adminToken,
      'push',
      file('ok.json', DEPLOYED),
      '--url',
      stack.url,
      '--comment',
      'not mine to change',
    );
    expect(notEditor.status).toBe(4);
    expect(notEditor.err).toMatch(/HTTP 403: admin@example.com may not change the policy/);
    // An MCP client's token of the same editor: for the tools, never for the policy.
    const mcpToken = await run(
      editorMcpToken,
      'push',
      file('ok.json', DEPLOYED),
      '--url',
      stack.url,
      '--comment',
      'an agent rewriting its own policy',
    );
    expect(mcpToken.status).toBe(4);
    expect(mcpToken.err).toMatch(
      /HTTP 403: The policy API needs a token granted the scope "policy:read" or "policy:edit"/,
    );
    const noComment = await run(editorToken, 'push', file('ok.json', DEPLOYED), '--url', stack.url);
    expect(noComment.status).toBe(2);
    expect((await versions()).versions.length).toBe(before);
  });

  it('refuses a token that is not one of this origin, or not a token at all (401), before anything', async () => {
    const other = stack.url.includes('127.0.0.1')
      ? stack.url.replace('127.0.0.1', 'localhost')
      : stack.url.replace('localhost', '127.0.0.1');
    for (const [url, token] of [
      [other, editorToken], // issued for the other origin: wrong audience
      [stack.url, 'not-a-token'],
    ] as const) {
      const res = await fetch(`${url}/admin/api/policy`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_token' });
    }
  });

  it('runs as an npm script, with the token from the environment', () => {
    const r = spawnNpmSync(
      [
        'run',
        '-s',
        'policy',
        '--',
        'push',
        file('back.json', DEPLOYED),
        '--url',
        stack.url,
        '--shadow',
        '--comment',
        'try the old one',
      ],
      { cwd: root, env: { ...process.env, PVE_MCP_TOKEN: editorToken } },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/version 3 \(in shadow\)/);
  });

  it('refuses to replace a version activated between its read and its push (409), and --force does, recorded as forced', async () => {
    const before = await versions();
    const RESTORED = {
      version: '1',
      default: 'deny',
      tools: { pve_list_vms: { action: 'deny' }, pve_start_vm: {}, pve_stop_vm: {} },
    };
    // Someone rolls back on /admin just after the push read which version was active.
    let rolledBack = false;
    const racing: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!rolledBack && (init?.method ?? 'GET') === 'GET') {
        rolledBack = true;
        const rollback = await fetch(`${stack.url}/admin/api/policy/1/activate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${editorToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            comment: 'roll back: listing broke',
            base: before.active.version,
          }),
        });
        expect(rollback.status).toBe(200);
      }
      return res;
    };
    const out: string[] = [];
    const err: string[] = [];
    const status = await policyRemote(
      [
        'push',
        file('restored.json', RESTORED),
        '--url',
        stack.url,
        '--activate',
        '--comment',
        'CI',
      ],
      { log: (l) => out.push(l), error: (l) => err.push(l) },
      { PVE_MCP_TOKEN: editorToken },
      racing,
    );
    expect(status).toBe(4);
    expect(err.join('\n')).toMatch(
      new RegExp(
        `HTTP 409: The policy was not stored.\nversion 1 has been activated since you opened version ${before.active.version} \\(by ci@example.com`,
      ),
    );
    expect(err.join('\n')).toMatch(/Nothing was changed.*--force/);
    const after = await versions();
    expect(after.active.version).toBe(1);
    expect(after.versions).toHaveLength(before.versions.length);

    const forced = await run(
      editorToken,
      'push',
      file('restored.json', RESTORED),
      '--url',
      stack.url,
      '--activate',
      '--force',
      '--comment',
      'CI, over the rollback',
    );
    expect(forced.status, forced.err).toBe(0);
    expect(forced.out).toMatch(/\(active, forced\)/);
    const overview = (await (
      await fetch(`${stack.url}/admin/api/policy`, {
        headers: { authorization: `Bearer ${adminToken}` },
      })
    ).json()) as { active: { version: number }; events: Record<string, unknown>[] };
    expect(overview.active.version).toBe(before.versions.length + 1);
    expect(overview.events[0]).toMatchObject({
      action: 'activate',
      version: overview.active.version,
      comment: 'CI, over the rollback',
      forced: true,
    });
    // The audit trail's record of the change says so too.
    const admin = new FormBrowser((u, i) => fetch(u, i));
    await openAsDevUser(admin, `${stack.url}/admin`, 'admin@example.com', 'ops');
    const exported = await (
      await admin.get(`${stack.url}/admin/audit?format=jsonl&tool=(policy)&limit=1000`)
    ).text();
    const records = exported
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { args: Record<string, unknown> });
    expect(records.find((r) => r.args.comment === 'CI, over the rollback')?.args).toMatchObject({
      action: 'activate',
      forced: true,
    });
    // An activation through the API that names neither is refused, naming the version in force:
    // a script must choose.
    const bare = await fetch(`${stack.url}/admin/api/policy/1/activate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${editorToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ comment: 'no base' }),
    });
    expect(bare.status).toBe(409);
    expect(((await bare.json()) as { message: string }).message).toMatch(
      new RegExp(
        `^version ${overview.active.version} is in force and the change names no base: nothing was changed; send base ${overview.active.version} .*or force the change \\(recorded as forced\\)$`,
      ),
    );
    expect((await versions()).active.version).toBe(overview.active.version);
  });
});
