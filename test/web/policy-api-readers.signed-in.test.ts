// Who reads what through /admin/api/policy: a bearer token needs a policy scope of its own (a
// narrowed refresh holds only what it was narrowed to; an MCP client's token has none), and a
// replay shows a reader only the calls they may read on /admin/audit (an administrator all, an
// editor who is not one their own), so a draft's rules cannot read other people's arguments.
//
// Project signed-in: IDP=dev, ALLOWED_GROUPS=ops,dev, ADMIN_USERS=admin@example.com,
// POLICY_EDITORS=editor@example.com,group:policy-editors; POLICY = the text of
// test/support/policies/deployed.json.

import { beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Browser, codeFlowTokens, connectSignedIn, registerClient } from '../support/worker/oauth';
import { openAsDevUser, replayInConsole } from '../support/form-browser';
import { auditRecords, auditStub } from '../support/worker/audit';
import { ORIGIN, workerFetch } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { DEPLOYED } from '../support/policies/deployed';
import { freshDeployment } from '../support/worker/fresh';

freshDeployment();

const API = `${ORIGIN}/admin/api/policy`;

interface Tokens {
  access: string;
  refresh: string;
  clientId: string;
}

/** A token for `user` from a client of its own, granted exactly `scopes` at consent. */
async function tokenWith(user: string, scopes: string[]): Promise<Tokens> {
  const clientId = await registerClient(`${user} script`, ['authorization_code', 'refresh_token']);
  const body = await codeFlowTokens(clientId, { user, groups: 'ops' }, scopes);
  expect(body.scope.split(' ').sort()).toEqual([...scopes].sort());
  return { access: body.access_token, refresh: body.refresh_token!, clientId };
}

/** The same grant's token, refreshed down to `scope` (RFC 6749 §6). */
async function narrowed(tokens: Tokens, scope: string): Promise<string> {
  const res = await workerFetch(`${ORIGIN}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh,
      client_id: tokens.clientId,
      scope,
      resource: ORIGIN,
    }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; scope: string };
  expect(body.scope).toBe(scope);
  return body.access_token;
}

function api(token: string, path: string, method = 'GET', body?: unknown): Promise<Response> {
  return workerFetch(`${API}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const STRICTER = {
  ...DEPLOYED,
  tools: {
    ...DEPLOYED.tools,
    pve_start_vm: { deny_if: [{ path: 'args.vmid', op: 'eq', value: 101 }] },
  },
};

/** Every route of the policy API, reads first: [method, path, body]. */
const ROUTES: [string, string, unknown][] = [
  ['GET', '', undefined],
  ['GET', '/shadow', undefined],
  ['GET', '/1', undefined],
  ['POST', '/check', { policy: STRICTER }],
  ['POST', '/replay', { policy: STRICTER }],
  ['POST', '', { policy: STRICTER, comment: 'through a narrowed token', activate: true }],
  ['POST', '/1/activate', { comment: 'through a narrowed token' }],
  ['POST', '/1/shadow', { comment: 'through a narrowed token' }],
  ['POST', '/shadow/stop', { comment: 'through a narrowed token' }],
];
const READS = ROUTES.slice(0, 5);
const WRITES = ROUTES.slice(5);

let admin: Browser;

/** The versions and events as an administrator sees them on the web: what a write would change. */
async function policyState(): Promise<unknown> {
  const res = await admin.json(API, 'GET');
  const { versions, events, active, shadow } = (await res.json()) as Record<string, unknown>;
  return { versions, events, active, shadow };
}

beforeAll(async () => {
  admin = new Browser();
  await openAsDevUser(admin, `${ORIGIN}/admin`, 'admin@example.com', 'ops');
}, 60_000);

describe('a bearer token on the policy API', () => {
  it('acts with its own scopes: a refresh narrowed to pve:read reaches no route, though its grant had policy:edit', async () => {
    const wide = await tokenWith('editor@example.com', ['policy:edit', 'pve:read']);
    expect((await api(wide.access, '')).status).toBe(200);
    const narrow = await narrowed(wide, 'pve:read');
    const before = await policyState();
    const started = Date.now();
    for (const [method, path, body] of ROUTES) {
      const res = await api(narrow, path, method, body);
      expect([method, path, res.status]).toEqual([method, path, 403]);
      expect(await res.json()).toMatchObject({ error: 'insufficient_scope' });
    }
    // Nothing was stored, activated or put in shadow, and no change was recorded.
    expect(await policyState()).toEqual(before);
    const { records } = await auditStub().query({ tool: '(policy)', limit: 1000 });
    expect(records.filter((r) => r.ts >= started)).toEqual([]);
  });

  it("refuses an MCP client's token every route, reads included, so an AI client cannot replay drafts", async () => {
    const mcp = await tokenWith('admin@example.com', ['pve:read', 'pve:operate', 'pve:provision']);
    for (const [method, path, body] of ROUTES) {
      const res = await api(mcp.access, path, method, body);
      expect([method, path, res.status]).toEqual([method, path, 403]);
      const answer = (await res.json()) as { error: string; message: string };
      expect(answer.error).toBe('insufficient_scope');
      expect(answer.message).toMatch(/policy:(read|edit)/);
    }
  });

  it('lets a policy:read token read, check and replay, and refuses its every write', async () => {
    const reader = await tokenWith('editor@example.com', ['policy:read']);
    for (const [method, path, body] of READS)
      expect([method, path, (await api(reader.access, path, method, body)).status]).toEqual([
        method,
        path,
        200,
      ]);
    const before = await policyState();
    for (const [method, path, body] of WRITES) {
      const res = await api(reader.access, path, method, body);
      expect([method, path, res.status]).toEqual([method, path, 403]);
      expect(await res.json()).toMatchObject({ error: 'insufficient_scope' });
    }
    expect(await policyState()).toEqual(before);
  });
});

interface Replay {
  calls: number;
  calls_seen: 'all' | 'own';
  note?: string;
  changed: { request_id: string; user: string; tool: string }[];
  totals: { replayed: number; changed: number; unchanged: number };
}

describe('a replay shows a reader only the calls they may read', () => {
  let since: number;
  let agentCalls: string[];
  let editorCalls: string[];

  beforeAll(async () => {
    await sim.reset();
    const clients: Client[] = [];
    const open = async (user: string) => {
      const { client } = await connectSignedIn('http', { user, groups: 'ops' });
      clients.push(client);
      return client;
    };
    const [agent, editorClient] = await Promise.all([
      open('agent@example.com'),
      open('editor@example.com'),
    ]);
    since = Date.now();
    // The agent's call carries a value in an argument the draft will test, a character at a time.
    await agent.callTool({
      name: 'pve_start_vm',
      arguments: { node: 'pve1', vmid: 101, confirm: true },
    });
    await agent.callTool({
      name: 'pve_start_vm',
      arguments: { node: 'pve1', vmid: 100, confirm: true },
    });
    await editorClient.callTool({
      name: 'pve_start_vm',
      arguments: { node: 'pve1', vmid: 101, confirm: true },
    });
    await Promise.all(clients.map((c) => c.close()));
    const records = await auditRecords((r) => r.ts >= since && r.tool === 'pve_start_vm', 3);
    agentCalls = records.filter((r) => r.user_id === 'agent@example.com').map((r) => r.request_id);
    editorCalls = records
      .filter((r) => r.user_id === 'editor@example.com')
      .map((r) => r.request_id);
    expect([agentCalls.length, editorCalls.length]).toEqual([2, 1]);
  }, 60_000);

  it('an administrator replays every call', async () => {
    const reader = await tokenWith('admin@example.com', ['policy:read']);
    const res = await api(reader.access, '/replay', 'POST', { policy: STRICTER, since });
    const report = (await res.json()) as Replay;
    expect(report.calls_seen).toBe('all');
    expect(report.calls).toBe(3);
    expect(report.changed.map((c) => c.request_id).sort()).toEqual(
      [agentCalls[0], editorCalls[0]].sort(),
    );
  });

  it("an editor who is not an administrator replays their own calls alone: nothing of another person's, not even a count", async () => {
    const reader = await tokenWith('editor@example.com', ['policy:read']);
    const res = await api(reader.access, '/replay', 'POST', { policy: STRICTER, since });
    const report = (await res.json()) as Replay;
    expect(report.calls_seen).toBe('own');
    expect(report.note).toMatch(/Only your own recorded calls/);
    expect(report.calls).toBe(1);
    expect(report.totals).toMatchObject({ replayed: 1, changed: 1, unchanged: 0 });
    expect(report.changed.map((c) => [c.request_id, c.user])).toEqual([
      [editorCalls[0], 'editor@example.com'],
    ]);
    // A draft that would tell the agent's calls apart says nothing about them.
    const probe = {
      ...DEPLOYED,
      tools: {
        ...DEPLOYED.tools,
        pve_start_vm: { deny_if: [{ path: 'args.vmid', op: 'eq', value: 100 }] },
      },
    };
    const probed = (await (
      await api(reader.access, '/replay', 'POST', { policy: probe, since })
    ).json()) as Replay;
    expect(probed.calls).toBe(1);
    expect(probed.changed).toEqual([]);
    expect(JSON.stringify(probed)).not.toContain('agent@example.com');
  });

  it('the console shows an editor who is not an administrator their own calls only', async () => {
    const editor = { user: 'editor@example.com', groups: 'ops' };
    const html = await replayInConsole(new Browser(), ORIGIN, editor, STRICTER, since);
    expect(html).toContain('id="replay-note"');
    expect(html).toMatch(/<strong>1<\/strong> of 1 recorded calls of yours/);
    expect(html).toContain(editorCalls[0]);
    for (const id of agentCalls) expect(html).not.toContain(id);
    expect(html).not.toContain('agent@example.com');
  });

  it('the console activates a draft only with its confirmation ticked, whatever sends the form', async () => {
    const web = new Browser();
    const page = await openAsDevUser(web, `${ORIGIN}/admin/policy`, 'editor@example.com', 'ops');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    // The version in force the page was made with: the form carries it (base).
    const base = /name="base" value="(\d+)"/.exec(page.html)![1]!;
    const versions = async () =>
      (await (await web.get(`${ORIGIN}/admin/policy`)).text()).match(/<tr><td>\d+/g)?.length ?? 0;
    const before = await versions();
    const form = {
      csrf,
      action: 'activate',
      policy: JSON.stringify(STRICTER),
      comment: 'activate without asking',
      base,
      since: '7d',
      limit: '1000',
    };
    const refused = await web.post(`${ORIGIN}/admin/policy/draft`, form);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('Nothing was stored: tick the box');
    expect(await versions()).toBe(before);
    const done = await web.post(`${ORIGIN}/admin/policy/draft`, {
      ...form,
      confirm_activate: 'yes',
    });
    expect([200, 303]).toContain(done.status);
    expect(await versions()).toBe(before + 1);
  });
});
