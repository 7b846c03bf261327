// The policy as a living document, in workerd: seeded from POLICY on first start, changed only by
// editors through /admin/api/policy (session cookie with our own Origin, or an access token),
// served by every isolate within 5 s of an activation, named in every audit record, rolled back
// in one step, run in shadow, replayed over recorded calls; a store that hangs on a cold isolate
// refuses calls. "Another isolate" is a Runtime of its own (buildRuntime): the per-isolate state
// (the cached policy) is all it has, exactly as a second isolate would.
//
// Project signed-in: IDP=dev, ALLOWED_GROUPS=ops,dev, ADMIN_USERS=admin@example.com,
// POLICY_EDITORS=editor@example.com,group:policy-editors; POLICY = the text of
// test/support/policies/deployed.json.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { composeHost } from '../../src/compose/call-host';
import { buildRuntime, type Runtime } from '../../src/compose/runtime';
import { runCall } from '../../src/calls/run-call';
import type { AppEnv } from '../../src/env';
import type { Identity } from '../../src/core/identity';
import { POLICY_STORE_OBJECT } from '../../src/policy-store/names';
import type { PolicyStore } from '../../src/policy-store/policy-store';
import { MAX_AGE_MS } from '../../src/policy-store/isolate-cache';
import { STORE_DEADLINE_MS } from '../../src/stores/deadline';
import { sha256Hex } from '../../src/encoding';
import { Browser, connectSignedIn } from '../support/worker/oauth';
import { csrfOf, openAsDevUser } from '../support/form-browser';
import { auditRecords } from '../support/worker/audit';
import { sim } from '../support/worker/sim';
import { DEPLOYED, DEPLOYED_TEXT } from '../support/policies/deployed';
import { SCOPES } from '../../src/core/scopes';
import { freshDeployment } from '../support/worker/fresh';

const fileStarted = Date.now();
freshDeployment();

const appEnv = env as unknown as AppEnv;
const ORIGIN = 'http://localhost';
const API = `${ORIGIN}/admin/api/policy`;

/** A person signed in on /admin (a web session), who calls the API with its cookie. */
async function webSession(user: string, groups = 'ops'): Promise<Browser> {
  const browser = new Browser();
  const opened = await openAsDevUser(browser, `${ORIGIN}/admin`, user, groups);
  expect([200, 403]).toContain(opened.status);
  return browser;
}

const sameOrigin = { origin: ORIGIN };

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

const stricter = {
  version: '1',
  default: 'deny',
  tools: {
    pve_list_vms: { action: 'deny', reason: 'Listing is closed this week.' },
    pve_start_vm: {},
    pve_stop_vm: { action: 'require_approval' },
  },
};

/** A tool call on a Runtime of its own (another isolate), as `who`. */
async function callOn(
  runtime: Runtime,
  tool: string,
  args: Record<string, unknown>,
  who: Identity,
): Promise<CallToolResult & { requestId?: string }> {
  const found = runtime.tools.get(tool)!;
  const pending: Promise<unknown>[] = [];
  const host = composeHost(runtime, {
    sessionId: 'stateless',
    sessionCounters: 'per-grant',
    identity: () => who,
    publicOrigin: () => ORIGIN,
    waitUntil: (work) => pending.push(work),
  });
  const outcome = await runCall(found.tool, found.input, args, host, null);
  await Promise.allSettled(pending);
  if (outcome.kind !== 'result') throw new Error('the call was suspended');
  return outcome.result as CallToolResult;
}

const AGENT: Identity = {
  userId: 'agent@example.com',
  email: 'agent@example.com',
  groups: ['ops'],
  clientId: 'another-isolate',
  grantId: 'grant-another-isolate',
  scopes: SCOPES,
};

/** Polls `attempt` until it answers, failing when that takes 5 s or more from `since`. */
async function until<T>(attempt: () => Promise<T | null>, since: number): Promise<T> {
  for (;;) {
    const got = await attempt();
    if (got !== null) return got;
    if (Date.now() - since >= 5_000) throw new Error('not followed within 5 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

let admin: Browser;
let editor: Browser;
let agent: Client;

beforeAll(async () => {
  await sim.reset();
  [admin, editor] = await Promise.all([
    webSession('admin@example.com'),
    webSession('editor@example.com'),
  ]);
  ({ client: agent } = await connectSignedIn('http', { user: 'agent@example.com', groups: 'ops' }));
}, 60_000);

afterAll(() => agent?.close());

describe('versions', () => {
  it('seeds version 1 from POLICY on first start, and /health names it', async () => {
    const res = await admin.json(API, 'GET');
    expect(res.status).toBe(200);
    const body = await json<{
      active: Record<string, unknown>;
      versions: { version: number }[];
      shadow: unknown;
    }>(res);
    expect(body.active).toMatchObject({
      version: 1,
      author: 'deploy',
      comment: 'first start',
      sha256: await sha256Hex(DEPLOYED_TEXT),
      policy: DEPLOYED,
    });
    expect(body.versions.map((v) => v.version)).toEqual([1]);
    expect(body.shadow).toBeNull();
    // The store counts activations from the time it was made: one emptied and begun again counts
    // from above any generation an isolate holds from before.
    const generation = await runInDurableObject(
      appEnv.POLICY_STORE.get(
        appEnv.POLICY_STORE.idFromName(POLICY_STORE_OBJECT),
      ) as unknown as DurableObjectStub<PolicyStore>,
      (_store: PolicyStore, state) =>
        state.storage.sql
          .exec<{ value: number }>("SELECT value FROM policy_state WHERE key = 'generation'")
          .one().value,
    );
    expect(generation).toBeGreaterThanOrEqual(fileStarted);
    const health = await json<{ policy: Record<string, unknown> }>(
      await admin.json(`${ORIGIN}/health`, 'GET'),
    );
    expect(health.policy).toMatchObject({ origin: 'POLICY', version: 1, valid: true });
  });

  it('refuses every write of a person who is not an editor, and every read of one who is neither', async () => {
    const post = await admin.json(API, 'POST', { policy: stricter, comment: 'x' }, sameOrigin);
    expect(post.status).toBe(403);
    expect(await json(post)).toMatchObject({ error: 'forbidden' });
    const activate = await admin.json(`${API}/1/activate`, 'POST', { comment: 'x' }, sameOrigin);
    expect(activate.status).toBe(403);
    const outsider = await webSession('someone@example.com');
    expect((await outsider.json(API, 'GET')).status).toBe(403);
    expect((await new Browser().json(API, 'GET')).status).toBe(401);
    const versions = await json<{ versions: unknown[] }>(await admin.json(API, 'GET'));
    expect(versions.versions).toHaveLength(1);
  });

  it('refuses a cookie write from another origin, or without an Origin, and changes nothing', async () => {
    // Another site: the dev sign-in's loopback door refuses it before the API sees it.
    const evil = await editor.json(
      API,
      'POST',
      { policy: stricter, comment: 'x' },
      { origin: 'https://evil.example' },
    );
    expect(evil.status).toBe(403);
    // Another origin the door lets through, and none at all: the API refuses the cookie write.
    for (const headers of [{ origin: 'http://127.0.0.1' }, {}] as Record<string, string>[]) {
      const res = await editor.json(API, 'POST', { policy: stricter, comment: 'x' }, headers);
      expect(res.status).toBe(403);
      expect(await json(res)).toMatchObject({ error: 'cross_origin' });
    }
    const versions = await json<{ versions: unknown[] }>(await admin.json(API, 'GET'));
    expect(versions.versions).toHaveLength(1);
  });

  it('refuses an invalid policy with its problems, and stores nothing', async () => {
    const broken = { version: '1', default: 'maybe', tools: { pve_no_such_tool: {} } };
    const check = await json<{ ok: boolean; problems: string[] }>(
      await editor.json(`${API}/check`, 'POST', { policy: broken }, sameOrigin),
    );
    expect(check.ok).toBe(false);
    expect(check.problems.join('\n')).toMatch(/\/default/);
    expect(check.problems.join('\n')).toMatch(/unknown tool "pve_no_such_tool"/);
    const res = await editor.json(
      API,
      'POST',
      { policy: broken, comment: 'typo', activate: true },
      sameOrigin,
    );
    expect(res.status).toBe(400);
    const body = await json<{ problems: string[] }>(res);
    expect(body.problems).toEqual(check.problems);
    const after = await json<{ versions: unknown[]; active: { version: number } }>(
      await admin.json(API, 'GET'),
    );
    expect(after.versions).toHaveLength(1);
    expect(after.active.version).toBe(1);
    // A comment is required for every change.
    const silent = await editor.json(API, 'POST', { policy: stricter }, sameOrigin);
    expect(silent.status).toBe(400);
  });
});

describe('activation', () => {
  it('reaches a call on another isolate within 5 s, and the audit record names the version; rollback too', async () => {
    const other = buildRuntime(appEnv);
    // The other isolate holds version 1, freshly confirmed.
    expect((await other.policy.active()).version).toBe(1);
    const before = await callOn(other, 'pve_list_vms', {}, AGENT);
    expect(before.isError).toBeFalsy();

    const added = await editor.json(
      API,
      'POST',
      { policy: stricter, comment: 'close listing', activate: true, base: 1 },
      sameOrigin,
    );
    expect(added.status).toBe(201);
    const { version } = await json<{ version: number }>(added);
    expect(version).toBe(2);
    const changedAt = Date.now();

    // The agent's session object follows too, within the same bound.
    const here = await until(async () => {
      const r = await agent.callTool({ name: 'pve_list_vms', arguments: {} });
      return r.isError ? r : null;
    }, changedAt);
    expect(JSON.stringify(here.structuredContent)).toContain('/tools/pve_list_vms/action');

    // The other one within MAX_AGE_MS (4 s) plus a round trip, never back to 1 after that.
    let seenAt = 0;
    while (Date.now() - changedAt < 6_000) {
      const active = await other.policy.active();
      if (active.version === 2) {
        seenAt = Date.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(seenAt).toBeGreaterThan(0);
    expect(seenAt - changedAt).toBeLessThan(5_000);
    expect(MAX_AGE_MS).toBeLessThan(5_000);
    for (let i = 0; i < 5; i++) expect((await other.policy.active()).version).toBe(2);
    const denied = await callOn(other, 'pve_list_vms', {}, AGENT);
    expect(denied.isError).toBe(true);
    const [record] = await auditRecords(
      (r) => r.client_id === 'another-isolate' && r.decision === 'deny',
    );
    expect(record).toMatchObject({ policy_version: 2, rule: '/tools/pve_list_vms/action' });

    // Rollback: version 1 again, in one step.
    const back = await editor.json(
      `${API}/1/activate`,
      'POST',
      { comment: 'listing needed after all', base: 2 },
      sameOrigin,
    );
    expect(back.status).toBe(200);
    const backAt = Date.now();
    await until(async () => {
      const r = await agent.callTool({ name: 'pve_list_vms', arguments: {} });
      return r.isError ? null : r;
    }, backAt);
    await until(async () => ((await other.policy.active()).version === 1 ? true : null), backAt);
    const overview = await json<{
      active: { version: number };
      events: { action: string; version: number; actor: string; comment: string }[];
    }>(await admin.json(API, 'GET'));
    expect(overview.active.version).toBe(1);
    expect(overview.events.slice(0, 2)).toMatchObject([
      {
        action: 'activate',
        version: 1,
        actor: 'editor@example.com',
        comment: 'listing needed after all',
      },
      { action: 'activate', version: 2, actor: 'editor@example.com', comment: 'close listing' },
    ]);
    // Each change is an audit event too.
    const events = await auditRecords(
      (r) => r.tool === '(policy)' && r.args.action === 'activate',
      2,
    );
    expect(events.map((e) => [e.user_id, e.args.version, e.args.comment])).toEqual([
      ['editor@example.com', 2, 'close listing'],
      ['editor@example.com', 1, 'listing needed after all'],
    ]);
    // Activating the active version again changes nothing.
    const twice = await editor.json(
      `${API}/1/activate`,
      'POST',
      { comment: 'again', base: 1 },
      sameOrigin,
    );
    expect(twice.status).toBe(409);
  }, 30_000);
});

describe('shadow', () => {
  it('counts the live calls a shadow version would decide otherwise, while the active one decides', async () => {
    const res = await editor.json(
      API,
      'POST',
      { policy: stricter, comment: 'try closing listing', shadow: true, base: 1 },
      sameOrigin,
    );
    expect(res.status).toBe(201);
    const { version } = await json<{ version: number }>(res);
    // Every isolate (the agent's session object is one) sees the shadow within MAX_AGE_MS.
    await new Promise((r) => setTimeout(r, MAX_AGE_MS + 250));
    const results = [];
    for (let i = 0; i < 3; i++)
      results.push(await agent.callTool({ name: 'pve_list_vms', arguments: {} }));
    // The active version (1) decided: every call went through.
    expect(results.every((r) => !r.isError)).toBe(true);
    // The start of VM 100 is allowed by both: no disagreement.
    await agent.callTool({ name: 'pve_start_vm', arguments: { node: 'pve1', vmid: 100 } });
    let shadow:
      | { shadow: { version: number; disagreements: number }; disagreements: unknown[] }
      | undefined;
    for (let i = 0; i < 50; i++) {
      shadow = await json(await admin.json(`${API}/shadow`, 'GET'));
      if (shadow!.shadow.disagreements >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(shadow!.shadow).toMatchObject({ version, disagreements: 3 });
    expect(shadow!.disagreements).toHaveLength(3);
    expect(shadow!.disagreements[0]).toMatchObject({
      tool: 'pve_list_vms',
      user: 'agent@example.com',
      active: { version: 1, decision: 'allow' },
      shadow: { version, decision: 'deny', rule: '/tools/pve_list_vms/action' },
    });
    const stop = await editor.json(
      `${API}/shadow/stop`,
      'POST',
      { comment: 'seen enough', base: 1 },
      sameOrigin,
    );
    expect(stop.status).toBe(200);
    const after = await json<{ shadow: unknown }>(await admin.json(API, 'GET'));
    expect(after.shadow).toBeNull();
  });

  it('judges only what the audit trail keeps: a shadow rule on a redacted value is unknown, never a read of it', async () => {
    // A shadow whose rule tests the first letter of a password the audit trail redacts: were it
    // judged on the live value, which calls disagree would spell the password out.
    const probe = {
      ...DEPLOYED,
      tools: {
        ...DEPLOYED.tools,
        pve_create_lxc: { require: [{ path: 'args.password', op: 'regex', value: '^s' }] },
      },
    };
    const res = await editor.json(
      API,
      'POST',
      { policy: probe, comment: 'a probe of passwords', shadow: true, base: 1 },
      sameOrigin,
    );
    expect(res.status).toBe(201);
    const { version } = await json<{ version: number }>(res);
    await new Promise((r) => setTimeout(r, MAX_AGE_MS + 250));
    const container = (password: string) => ({
      node: 'pve1',
      ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
      hostname: 'probe01',
      password,
    });
    for (const password of ['swordfish-1', 'hunter22-pw'])
      expect(
        (await agent.callTool({ name: 'pve_create_lxc', arguments: container(password) })).isError,
      ).toBe(true);
    type Seen = { tool: string; active: { decision: string }; shadow: Record<string, unknown> };
    let seen: Seen[] = [];
    for (let i = 0; i < 50 && seen.length < 2; i++) {
      const body = await json<{ disagreements: Seen[] }>(await admin.json(`${API}/shadow`, 'GET'));
      seen = body.disagreements.filter((d) => d.tool === 'pve_create_lxc');
      if (seen.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    // Both calls alike: the active version denied each, the shadow could not tell.
    expect(seen).toHaveLength(2);
    for (const d of seen)
      expect(d).toMatchObject({
        active: { decision: 'deny' },
        shadow: { version, decision: 'unknown', rule: '/tools/pve_create_lxc/require/0' },
      });
    const stop = await editor.json(
      `${API}/shadow/stop`,
      'POST',
      { comment: 'done', base: 1 },
      sameOrigin,
    );
    expect(stop.status).toBe(200);
  });
});

describe('deploys', () => {
  it('adds a changed deployed POLICY as a new version "from deploy", once; refuses an invalid one', async () => {
    const before = await json<{ versions: { version: number }[] }>(await admin.json(API, 'GET'));
    const top = before.versions[0]!.version;
    const changed = { ...DEPLOYED, description: 'redeployed with a note' };
    const redeployed = buildRuntime({ ...appEnv, POLICY: JSON.stringify(changed) });
    const active = await redeployed.policy.active();
    expect(active.version).toBe(top + 1);
    const overview = await json<{
      active: { version: number; author: string; comment: string; policy: unknown };
      versions: unknown[];
    }>(await admin.json(API, 'GET'));
    expect(overview.active).toMatchObject({
      version: top + 1,
      author: 'deploy',
      comment: 'from deploy',
      policy: changed,
    });
    // An isolate still running the previous deploy does not take it back.
    const old = buildRuntime({ ...appEnv, POLICY: DEPLOYED_TEXT });
    expect((await old.policy.active()).version).toBe(top + 1);
    // A deploy whose POLICY fails the checks is not stored; /health says so.
    const broken = buildRuntime({ ...appEnv, POLICY: '{"version":"1","default":"sometimes"}' });
    const still = await broken.policy.active();
    expect(still).toMatchObject({ ok: true, version: top + 1 });
    expect(broken.policy.deployRefused()?.join('\n')).toMatch(/\/default/);
    const after = await json<{ versions: unknown[] }>(await admin.json(API, 'GET'));
    expect(after.versions).toHaveLength(overview.versions.length);
    // Back to the deployed policy for the tests after this one.
    const back = await editor.json(
      `${API}/1/activate`,
      'POST',
      { comment: 'back to 1', base: top + 1 },
      sameOrigin,
    );
    expect(back.status).toBe(200);
  });
});

describe('two editors', () => {
  it('refuses a change written against a version that is no longer active, and stores nothing', async () => {
    const before = await json<{ active: { version: number }; versions: unknown[] }>(
      await admin.json(API, 'GET'),
    );
    const stale = before.active.version + 100;
    const add = await editor.json(
      API,
      'POST',
      { policy: stricter, comment: 'from an old tab', activate: true, base: stale },
      sameOrigin,
    );
    expect(add.status).toBe(409);
    expect(((await add.json()) as { problems: string[] }).problems[0]).toMatch(
      new RegExp(
        `version ${before.active.version} has been activated since you opened version ${stale} \\(by `,
      ),
    );
    const activate = await editor.json(
      `${API}/2/activate`,
      'POST',
      { comment: 'from an old tab', base: stale },
      sameOrigin,
    );
    expect(activate.status).toBe(409);
    const after = await json<{ active: { version: number }; versions: unknown[] }>(
      await admin.json(API, 'GET'),
    );
    expect(after.active.version).toBe(before.active.version);
    expect(after.versions).toHaveLength(before.versions.length);
    // With the right base it goes through.
    const ok = await editor.json(
      `${API}/2/activate`,
      'POST',
      { comment: 'with the right base', base: before.active.version },
      sameOrigin,
    );
    expect(ok.status).toBe(200);
    const back = await editor.json(
      `${API}/1/activate`,
      'POST',
      { comment: 'back', base: 2 },
      sameOrigin,
    );
    expect(back.status).toBe(200);
  });
});

describe('a change that names no base', () => {
  type Overview = {
    active: { version: number };
    shadow: { version: number } | null;
    versions: unknown[];
    events: { action: string; version: number; forced?: boolean; comment: string }[];
  };

  it('is refused with a 409 naming the version in force, through the API and the console, and changes nothing', async () => {
    const before = await json<Overview>(await admin.json(API, 'GET'));
    const inForce = before.active.version;
    const other = inForce === 1 ? 2 : 1;
    const naming = new RegExp(`version ${inForce} is in force and the change names no base`);
    const bare: [string, Record<string, unknown>][] = [
      [API, { policy: stricter, comment: 'no base', activate: true }],
      [API, { policy: stricter, comment: 'no base', shadow: true }],
      [`${API}/${other}/activate`, { comment: 'no base' }],
      [`${API}/${other}/shadow`, { comment: 'no base' }],
      [`${API}/shadow/stop`, { comment: 'no base' }],
    ];
    for (const [url, body] of bare) {
      const res = await editor.json(url, 'POST', body, sameOrigin);
      expect(res.status, url).toBe(409);
      expect(await res.text()).toMatch(naming);
    }
    // The console's forms, sent without the base their pages carry.
    const page = await editor.get(`${ORIGIN}/admin/policy`);
    const csrf = csrfOf(await page.text());
    const forms: [string, Record<string, string>][] = [
      [`/version/${other}/activate`, { csrf, comment: 'an old form' }],
      [`/version/${other}/shadow`, { csrf, comment: 'an old form' }],
      ['/shadow/stop', { csrf, comment: 'an old form' }],
      [
        '/draft',
        {
          csrf,
          policy: JSON.stringify(stricter),
          comment: 'an old form',
          action: 'activate',
          confirm_activate: 'yes',
        },
      ],
      [
        '/draft',
        { csrf, policy: JSON.stringify(stricter), comment: 'an old form', action: 'shadow' },
      ],
    ];
    for (const [path, form] of forms) {
      const res = await editor.post(`${ORIGIN}/admin/policy${path}`, form);
      expect(res.status, path).toBe(409);
      expect(await res.text()).toMatch(naming);
    }
    const after = await json<Overview>(await admin.json(API, 'GET'));
    expect(after.active.version).toBe(inForce);
    expect(after.shadow).toEqual(before.shadow);
    expect(after.versions).toHaveLength(before.versions.length);
    expect(after.events).toEqual(before.events);
  });

  it('goes through when forced, and the history and the audit trail say it was', async () => {
    const before = await json<Overview>(await admin.json(API, 'GET'));
    const other = before.active.version === 1 ? 2 : 1;
    const started = await editor.json(
      `${API}/${other}/shadow`,
      'POST',
      { comment: 'forced shadow', force: true },
      sameOrigin,
    );
    expect(started.status).toBe(200);
    const stopped = await editor.json(
      `${API}/shadow/stop`,
      'POST',
      { comment: 'forced stop', force: true },
      sameOrigin,
    );
    expect(stopped.status).toBe(200);
    const after = await json<Overview>(await admin.json(API, 'GET'));
    expect(after.events.slice(0, 2)).toMatchObject([
      { action: 'shadow_stop', version: other, comment: 'forced stop', forced: true },
      { action: 'shadow_start', version: other, comment: 'forced shadow', forced: true },
    ]);
    const records = await auditRecords(
      (r) => r.tool === '(policy)' && String(r.args.comment).startsWith('forced '),
      2,
    );
    expect(records.map((r) => [r.args.action, r.args.forced])).toEqual([
      ['shadow_start', true],
      ['shadow_stop', true],
    ]);
  });
});

describe('a policy store that does not answer', () => {
  it('refuses calls on a cold isolate, with the reason, and sends nothing to Proxmox', async () => {
    await sim.reset();
    const ns = appEnv.POLICY_STORE as unknown as DurableObjectNamespace<PolicyStore>;
    const stub = ns.get(ns.idFromName(POLICY_STORE_OBJECT));
    const over = runInDurableObject(stub, (_instance, state) => {
      void state.blockConcurrencyWhile(
        () => new Promise((r) => setTimeout(r, STORE_DEADLINE_MS + 6_000)),
      );
    });
    await new Promise((r) => setTimeout(r, 100));
    const cold = buildRuntime(appEnv);
    const started = Date.now();
    const result = await callOn(cold, 'pve_start_vm', { node: 'pve1', vmid: 100 }, AGENT);
    // Refused at the store's deadline, not when the store answers again (6 s after it).
    expect(Date.now() - started).toBeLessThan(STORE_DEADLINE_MS + 5_000);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      policy: { decision: 'deny', rule: '(policy store unavailable)' },
    });
    expect(await sim.requests()).toEqual([]);
    await over;
  }, 20_000);
});
