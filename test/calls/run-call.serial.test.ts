// The call seam on its own (src/calls/run-call.ts), in Node, composed by the Worker's own
// composeHost from a Runtime over in-memory objects (test/support/call-host.ts), against the real
// Proxmox simulator: an allowed call, a denial with its rule, an approval asked and spent, a limit
// reserved and given back (or kept), the audit record's fields (and a record the store cannot
// take), a store that hangs — and a 2026-07-28 client asked in its next request, as a value.

import { beforeEach, describe, expect, inject, it } from 'vitest';
import { hmacHex, importKey } from '../../src/audit/arg-hash';
import { canonicalJson } from '../../src/audit/canonical';
import type { Conversation } from '../../src/calls/conversation';
import type { CallOutcome, CallResult } from '../../src/calls/result';
import { runCall } from '../../src/calls/run-call';
import { STORE_DEADLINE_MS } from '../../src/stores/deadline';
import { toolSet } from '../../src/calls/tool-list';
import { TOOLS } from '../../src/tools';
import { sim } from '../support/worker/sim';
import { ALICE, testHost, type HostOptions, type TestHost } from '../support/call-host';

const TOOL_SET = toolSet(TOOLS);
const JSON_TYPE = 'application/json;charset=UTF-8';

async function call(
  t: TestHost,
  tool: string,
  args: Record<string, unknown>,
  conversation: Conversation | null = null,
): Promise<CallOutcome> {
  const found = TOOL_SET.get(tool)!;
  const outcome = await runCall(found.tool, found.input, args, t.host, conversation);
  await t.settle();
  return outcome;
}

function result(outcome: CallOutcome): CallResult {
  if (outcome.kind !== 'result') throw new Error(`expected a result, got ${outcome.kind}`);
  return outcome.result;
}

const text = (r: CallResult): string => r.content.map((c) => c.text).join('\n');
const policy = (tools: object, extra: object = {}): HostOptions['policy'] => ({
  version: '1',
  default: 'deny',
  tools,
  ...extra,
});

beforeEach(async () => {
  await sim.reset();
  await sim.clearLog();
});

describe('runCall', () => {
  it('runs an allowed call: one Proxmox read, a result, one audit record', async () => {
    const t = testHost({ policy: policy({ pve_list_vms: {} }) });
    const r = result(await call(t, 'pve_list_vms', { limit: 2 }));
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ total: 13 });
    expect((await sim.requests()).map((q) => `${q.method} ${q.path}`)).toEqual([
      'GET /api2/json/cluster/resources',
    ]);
    expect(t.audit).toHaveLength(1);
    expect(t.audit[0]).toMatchObject({
      tool: 'pve_list_vms',
      decision: 'allow',
      outcome: 'ok',
      upstream_status: 200,
    });
  });

  it('sends the API token and no Cloudflare Access headers when none are configured', async () => {
    const t = testHost({ policy: policy({ pve_list_vms: {} }) });
    await call(t, 'pve_list_vms', {});
    const [request] = await sim.requests();
    expect(request!.headers.authorization).toBe(
      `PVEAPIToken=${inject('simulatorTokenId')}=<redacted>`,
    );
    expect(request!.headers['cf-access-client-id']).toBeUndefined();
    expect(request!.headers['cf-access-client-secret']).toBeUndefined();
  });

  it('refuses a call a rule denies, naming the rule, and sends nothing', async () => {
    const t = testHost({
      policy: policy({
        pve_create_qemu_vm: {
          deny_if: [{ path: 'args.memory', op: 'gt', value: 8192, reason: 'Too big.' }],
        },
      }),
    });
    const r = result(
      await call(t, 'pve_create_qemu_vm', {
        node: 'pve1',
        vmid: 4100,
        memory: 16384,
        confirm: true,
      }),
    );
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('[POLICY DENIED] Too big.');
    expect(r.structuredContent).toEqual({
      policy: { decision: 'deny', rule: '/tools/pve_create_qemu_vm/deny_if/0', reason: 'Too big.' },
    });
    expect(await sim.requests()).toEqual([]);
    expect(t.audit[0]).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_create_qemu_vm/deny_if/0',
      outcome: 'denied',
    });
  });

  it('asks for an approval, runs the call once a person approved it, and spends it', async () => {
    const t = testHost({
      policy: policy({
        pve_start_vm: { action: 'require_approval', reason: 'A person starts VMs.' },
      }),
    });
    const args = { node: 'pve2', vmid: 104, confirm: true };
    const asked = result(await call(t, 'pve_start_vm', args));
    expect(text(asked)).toMatch(
      /^\[APPROVAL REQUIRED\] A person starts VMs\. Nothing was sent to Proxmox\./,
    );
    const id = asked.structuredContent!.approval_id as string;
    expect(t.approvals.rows.get(id)).toMatchObject({
      status: 'pending',
      tool: 'pve_start_vm',
      user_id: ALICE.userId,
    });
    expect(await sim.writes()).toEqual([]);

    t.approvals.approve(id, 'lead@example.com', t.clock.now());
    const ran = result(await call(t, 'pve_start_vm', { ...args, approval_id: id }));
    expect(ran.isError, text(ran)).toBeFalsy();
    expect((await sim.writes()).map((q) => `${q.method} ${q.path}`)).toEqual([
      'POST /api2/json/nodes/pve2/qemu/104/status/start',
    ]);
    expect(t.approvals.rows.get(id)!.status).toBe('used');
    expect(t.audit.at(-1)).toMatchObject({
      decision: 'allow',
      approval_id: id,
      approval_channel: 'web',
    });

    const again = result(await call(t, 'pve_start_vm', { ...args, approval_id: id }));
    expect(text(again)).toMatch(/already used/);
    expect(await sim.writes()).toHaveLength(1);
  });

  it('suspends a call for a person asked in the next request (a value, not an exception), sending nothing', async () => {
    const t = testHost({
      policy: policy({
        pve_stop_vm: { action: 'require_approval', reason: 'A person confirms each hard stop.' },
      }),
    });
    const nextRequest: Conversation = {
      ask: async (question, binding) => ({ kind: 'ask_next_request', question, binding }),
    };
    const outcome = await call(
      t,
      'pve_stop_vm',
      { node: 'pve1', vmid: 101, confirm: true },
      nextRequest,
    );
    expect(outcome.kind).toBe('input_required');
    if (outcome.kind !== 'input_required') return;
    expect(outcome.question.message).toMatch(
      /A person confirms each hard stop\.\nalice@example\.com \(client test-client\) asks to run pve_stop_vm/,
    );
    expect(outcome.binding).toMatchObject({ tool: 'pve_stop_vm', grantId: ALICE.grantId });
    expect(await sim.writes()).toEqual([]);
    expect(t.audit[0]).toMatchObject({
      decision: 'approval_required',
      outcome: 'approval_pending',
    });
  });

  it('counts the wait for a person in the data point: 90 s to answer in the conversation', async () => {
    const t = testHost({
      policy: policy({
        pve_stop_vm: { action: 'require_approval', reason: 'A person confirms each hard stop.' },
      }),
    });
    const person: Conversation = {
      ask: async () => {
        // The person reads, thinks, and approves a minute and a half later.
        t.clock.set(t.clock.now() + 90_000);
        return { action: 'accept', content: { approve: true } };
      },
    };
    const ran = result(
      await call(t, 'pve_stop_vm', { node: 'pve1', vmid: 101, confirm: true }, person),
    );
    expect(ran.isError, JSON.stringify(ran.content)).toBeFalsy();
    await t.settle();
    expect(t.audit[0]).toMatchObject({ approval_channel: 'conversation', outcome: 'ok' });
    const [, , , wait, asked] = t.points[0]!.doubles!;
    expect(asked).toBe(1);
    // The 90 s, and the few ticks of the test clock the asking itself read.
    expect(wait).toBeGreaterThanOrEqual(90_000);
    expect(wait).toBeLessThan(90_100);
    expect(t.points[0]!.doubles![0]).toBeGreaterThan(wait!);
  });

  it('reserves a limit slot, gives it back when a read fails, and keeps it once a write was sent', async () => {
    const t = testHost({
      policy: policy({
        pve_list_vms: { limits: [{ counter: 'lists', window: 'minute', max: 1, scope: 'grant' }] },
        pve_create_qemu_vm: {
          limits: [{ counter: 'creates', window: 'minute', max: 1, scope: 'grant' }],
        },
      }),
    });
    const grant = `grant:${ALICE.grantId}`;
    await sim.fault({
      path: '^/cluster/resources$',
      times: 1,
      status: 500,
      contentType: JSON_TYPE,
      body: { data: null, message: 'busy\n' },
    });
    const failed = result(await call(t, 'pve_list_vms', {}));
    expect(failed.structuredContent!.error).toMatchObject({ kind: 'upstream.server_error' });
    expect((await t.counters(grant)).list(t.clock.now())).toEqual([
      expect.objectContaining({ key: 'pve_list_vms/lists', count: 0 }),
    ]);
    expect(result(await call(t, 'pve_list_vms', {})).isError).toBeFalsy();
    expect(result(await call(t, 'pve_list_vms', {})).structuredContent!.policy).toMatchObject({
      decision: 'limited',
    });

    await sim.fault({
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 500,
      contentType: JSON_TYPE,
      body: { data: null, message: 'storage full\n' },
    });
    const write = result(
      await call(t, 'pve_create_qemu_vm', { node: 'pve1', vmid: 4200, confirm: true }),
    );
    expect(text(write)).toMatch(/storage full/);
    const rows = (await t.counters(grant)).list(t.clock.now());
    expect(rows.find((r) => r.key === 'pve_create_qemu_vm/creates')?.count).toBe(1);
    const next = result(
      await call(t, 'pve_create_qemu_vm', { node: 'pve1', vmid: 4201, confirm: true }),
    );
    expect(next.structuredContent!.policy).toMatchObject({ decision: 'limited' });
  });

  it('counts a limit in the window of the clock it is given', async () => {
    const t = testHost({
      policy: policy({
        pve_list_vms: { limits: [{ counter: 'lists', window: 'minute', max: 1, scope: 'grant' }] },
      }),
    });
    t.clock.set(Date.UTC(2026, 11, 1, 12, 0, 58));
    expect(result(await call(t, 'pve_list_vms', {})).isError).toBeFalsy();
    const limited = result(await call(t, 'pve_list_vms', {}));
    expect(limited.structuredContent!.policy).toMatchObject({
      decision: 'limited',
      retry_after_s: 2,
    });
    t.clock.set(Date.UTC(2026, 11, 1, 12, 1, 0));
    expect(result(await call(t, 'pve_list_vms', {})).isError).toBeFalsy();
  });

  it('writes an audit record with every field: who, what, the keyed argument hash, redacted values, decision, outcome, timing', async () => {
    const t = testHost({ policy: policy({ pve_create_qemu_vm: { sensitive: ['description'] } }) });
    const args = {
      node: 'pve1',
      vmid: 4300,
      name: 'audited',
      description: 'secret notes',
      confirm: true,
    };
    const r = result(await call(t, 'pve_create_qemu_vm', args));
    expect(r.isError, text(r)).toBeFalsy();
    const [record] = t.audit;
    const shown = { ...args, wait: false, timeout_s: 60 };
    expect(record).toEqual({
      ts: expect.any(Number),
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: ALICE.userId,
      user_email: ALICE.email,
      client_id: ALICE.clientId,
      grant_id: ALICE.grantId,
      session: 'test-session',
      tool: 'pve_create_qemu_vm',
      arg_keys: ['node', 'vmid', 'name', 'description', 'wait', 'timeout_s', 'confirm'],
      args_hmac: await hmacHex(await importKey(t.key), canonicalJson(shown)),
      args: { ...shown, description: '[redacted]' },
      decision: 'allow',
      rule: null,
      outcome: 'ok',
      error_kind: null,
      upstream_status: 200,
      latency_ms: expect.any(Number),
      vmid: 4300,
      upid: expect.stringMatching(/^UPID:pve1:/),
      approval_id: null,
      approval_channel: null,
      policy_version: 1,
      user_groups: ALICE.groups,
      user_scopes: ALICE.scopes,
      cluster: 'default',
      upstream_ms: expect.any(Number),
      trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(record!.latency_ms).toBeGreaterThan(0);
    expect(record!.upstream_ms).toBeGreaterThan(0);
    expect(record!.upstream_ms).toBeLessThanOrEqual(record!.latency_ms);
    expect(JSON.stringify(record)).not.toContain('secret notes');
    // And one Analytics Engine data point, of the same call, with no argument value.
    expect(t.points).toEqual([
      {
        indexes: ['pve_create_qemu_vm'],
        blobs: [
          'pve_create_qemu_vm',
          'allow',
          '',
          'ok',
          'default',
          'pve:provision',
          '',
          record!.trace_id,
        ],
        doubles: [record!.latency_ms, record!.upstream_ms, 1, 0, 0],
      },
    ]);
    expect(JSON.stringify(t.points)).not.toContain('secret notes');
  });

  it('writes a data point for a refused call too', async () => {
    const t = testHost({ policy: policy({ pve_delete_vm: { action: 'deny' } }) });
    const r = result(await call(t, 'pve_delete_vm', { node: 'pve1', vmid: 100, confirm: true }));
    expect(r.isError).toBe(true);
    expect(t.points.map((p) => p.blobs!.slice(0, 4))).toEqual([
      ['pve_delete_vm', 'deny', '/tools/pve_delete_vm/action', 'denied'],
    ]);
    expect(t.points[0]!.doubles).toEqual([t.audit[0]!.latency_ms, 0, 0, 0, 0]);
  });

  it('counts a record the audit store cannot take as lost, and the call still answers', async () => {
    const t = testHost({ policy: policy({ pve_list_vms: {} }), auditFails: true });
    const r = result(await call(t, 'pve_list_vms', { limit: 1 }));
    expect(r.isError, text(r)).toBeFalsy();
    expect(t.audit).toEqual([]);
    expect(t.lost()).toBe(1);
  });

  it('keeps a session-scoped limit of a client without sessions in its grant, apart from the grant counter', async () => {
    const t = testHost({
      policy: policy({
        pve_list_vms: {
          limits: [
            { counter: 'lists', window: 'hour', max: 1, scope: 'session' },
            { counter: 'lists', window: 'hour', max: 5, scope: 'grant' },
          ],
        },
      }),
    });
    expect(result(await call(t, 'pve_list_vms', {})).isError).toBeFalsy();
    const rows = (await t.counters(`grant:${ALICE.grantId}`)).list(t.clock.now());
    expect(rows.map((r) => [r.key, r.count]).sort()).toEqual([
      ['pve_list_vms/lists', 1],
      ['session|pve_list_vms/lists', 1],
    ]);
    expect(result(await call(t, 'pve_list_vms', {})).structuredContent!.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_list_vms/limits/0',
    });
  });

  it.each([
    [
      'counters',
      { limits: [{ counter: 'c', window: 'hour', max: 5, scope: 'user' }] },
      '(counter store unavailable)',
      /Rate-limit counters could not be checked/,
    ],
    [
      'approvals',
      { action: 'require_approval' },
      '(approval store unavailable)',
      /The approvals store did not answer/,
    ],
  ])(
    'denies a call when the %s store hangs, at its deadline, sending nothing',
    async (store, rules, rule, reason) => {
      const t = testHost({
        policy: policy({ pve_create_qemu_vm: rules }),
        hang: { [store]: true },
      });
      const started = performance.now();
      const r = result(
        await call(t, 'pve_create_qemu_vm', { node: 'pve1', vmid: 4400, confirm: true }),
      );
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(STORE_DEADLINE_MS - 50);
      // Refused at the deadline, not held by the store that never answers (a bound a busy
      // machine cannot fail: without the deadline the call would wait for good).
      expect(waited).toBeLessThan(STORE_DEADLINE_MS + 10_000);
      expect(r.structuredContent!.policy).toMatchObject({ decision: 'deny', rule });
      expect(text(r)).toMatch(reason);
      expect(await sim.requests()).toEqual([]);
      expect(t.audit[0]).toMatchObject({ decision: 'deny', rule });
    },
  );

  it('denies a call when the counters store hangs after a person approved it, giving the approval back', async () => {
    const t = testHost({
      policy: policy({
        pve_create_qemu_vm: {
          action: 'require_approval',
          limits: [{ counter: 'c', window: 'hour', max: 5, scope: 'user' }],
        },
      }),
      hang: { counters: true },
    });
    const args = { node: 'pve1', vmid: 4500, confirm: true };
    const id = result(await call(t, 'pve_create_qemu_vm', args)).structuredContent!
      .approval_id as string;
    t.approvals.approve(id, 'lead@example.com', t.clock.now());
    const r = result(await call(t, 'pve_create_qemu_vm', { ...args, approval_id: id }));
    expect(r.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '(counter store unavailable)',
    });
    expect(t.approvals.rows.get(id)!.status).toBe('approved');
    expect(await sim.requests()).toEqual([]);
  });

  it('decides an approved call by the policy in force when the person answered, not when asked', async () => {
    const t = testHost({ policy: policy({ pve_stop_vm: { action: 'require_approval' } }) });
    const args = { node: 'pve1', vmid: 100, confirm: true };
    // While the person reads the question, an editor activates a lockdown and time passes.
    const conversation: Conversation = {
      async ask() {
        t.activate(policy({ pve_stop_vm: { action: 'deny', reason: 'Freeze: no stops.' } }));
        t.clock.set(t.clock.now() + 60_000);
        return { action: 'accept', content: { approve: true } };
      },
    };
    const r = result(await call(t, 'pve_stop_vm', args, conversation));
    expect(r.isError).toBe(true);
    expect(r.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_stop_vm/action',
      reason: 'Freeze: no stops.',
    });
    // Only the reads that told the person what the stop would hit.
    expect(await sim.writes()).toEqual([]);
    expect(t.audit.at(-1)).toMatchObject({ decision: 'deny', policy_version: 2 });
  });

  it('refuses an approval given under a looser rule than the one in force now', async () => {
    const t = testHost({ policy: policy({ pve_stop_vm: { action: 'require_approval' } }) });
    const args = { node: 'pve1', vmid: 100, confirm: true };
    const id = result(await call(t, 'pve_stop_vm', args)).structuredContent!.approval_id as string;
    t.approvals.approve(id, ALICE.email!, t.clock.now());
    // Meanwhile an editor tightens the rule: two leads now.
    t.activate(
      policy({
        pve_stop_vm: {
          action: 'require_approval',
          approvers: ['group:leads'],
          approvals_required: 2,
        },
      }),
    );
    t.clock.set(t.clock.now() + 60_000);
    const r = result(await call(t, 'pve_stop_vm', { ...args, approval_id: id }));
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('The policy now asks more of this approval');
    expect(await sim.writes()).toEqual([]);
    expect(t.approvals.rows.get(id)!.status).toBe('approved');
  });
});
