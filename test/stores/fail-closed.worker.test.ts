// A hung Durable Object never hangs a call: each store call has a deadline, and a call that
// cannot be checked is refused with a clear message. A slot reserved after the deadline is
// given back when it finally lands. The audit trail is the exception that proves it: its record
// is written after the answer, so a hung audit object costs the record (counted), never the call.
// pve_list_vms has a grant-scoped limit; pve_stop_vm needs approval.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AuditLog } from '../../src/audit/audit-log';
import { AUDIT_LOST_OBJECT, AUDIT_OBJECT } from '../../src/audit/names';
import { AUDIT_DEADLINE_MS } from '../../src/compose/call-host';
import type { PolicyCounters } from '../../src/counters/policy-counters';
import type { AppEnv } from '../../src/env';
import { STORE_DEADLINE_MS } from '../../src/stores/deadline';
import { call, connect, ORIGIN, text, workerFetch } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { usePolicy } from '../support/worker/policy';
import { FAIL_CLOSED_POLICY } from '../support/policies/fail-closed';

usePolicy(FAIL_CLOSED_POLICY);

const appEnv = env as unknown as AppEnv;
const HANG_MS = STORE_DEADLINE_MS + 1_500;
const STOP = { node: 'pve1', vmid: 100, confirm: true };

/**
 * Holds every event of a Durable Object back for `ms`, as an overloaded or stuck object would.
 * Resolves once the hold has begun; `over` settles when the object answers again.
 */
async function hang(stub: DurableObjectStub, ms: number): Promise<{ over: Promise<unknown> }> {
  const over = runInDurableObject(stub, (_instance, state) => {
    void state.blockConcurrencyWhile(() => new Promise((r) => setTimeout(r, ms)));
  });
  await new Promise((r) => setTimeout(r, 100));
  return { over };
}

describe('store deadlines', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('a hung counter object times out into a denial, and its late slot is given back', async () => {
    const counters = appEnv.POLICY_COUNTERS.get(appEnv.POLICY_COUNTERS.idFromName('grant:local'));
    expect((await call(client, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy(); // the object exists
    const before = await runInDurableObject(counters as DurableObjectStub<PolicyCounters>, (i) =>
      i.list(Date.now()),
    );
    await sim.clearLog();
    const held = await hang(counters, HANG_MS);
    const started = Date.now();
    const result = await call(client, 'pve_list_vms', { limit: 1 });
    const took = Date.now() - started;
    expect(result.isError).toBe(true);
    expect(result.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '(counter store unavailable)',
    });
    expect(text(result)).toMatch(/could not be checked, so the call is denied/);
    expect(took).toBeGreaterThanOrEqual(STORE_DEADLINE_MS - 100);
    expect(took).toBeLessThan(HANG_MS - 100);
    expect(await sim.requests()).toEqual([]);
    // Once the object answers again, the reservation it finally made is released.
    await held.over;
    await new Promise((r) => setTimeout(r, 200));
    const after = await runInDurableObject(counters as DurableObjectStub<PolicyCounters>, (i) =>
      i.list(Date.now()),
    );
    expect(after.map((r) => r.count)).toEqual(before.map((r) => r.count));
  });

  it('a hung session object makes a request answer 503, not hang', async () => {
    const other = await connect('http');
    const session = (other.transport as StreamableHTTPClientTransport).sessionId!;
    // A fresh isolate-level cache would remember the owner: ask as another session id's owner.
    const stub = appEnv.MCP_OBJECT.get(
      appEnv.MCP_OBJECT.idFromName(`streamable-http:${session}-x`),
    );
    const held = await hang(stub, HANG_MS);
    const started = Date.now();
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': `${session}-x`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(HANG_MS);
    await held.over;
    await other.close();
  });

  it.each([
    ['asking for an approval', async () => ({})],
    [
      'spending one a person gave',
      async () => {
        const id = (await call(client, 'pve_stop_vm', STOP)).structuredContent!
          .approval_id as string;
        const decided = await workerFetch(`${ORIGIN}/approvals/${id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'csrf=local&decision=approve',
          redirect: 'manual',
        });
        expect(decided.status).toBe(303);
        return { approval_id: id };
      },
    ],
  ])(
    'a hung approvals object denies a call %s within the deadline, and nothing is written',
    async (_label, prepare) => {
      const extra = await prepare();
      await sim.clearLog();
      const held = await hang(
        appEnv.APPROVALS.get(appEnv.APPROVALS.idFromName('approvals')),
        HANG_MS,
      );
      const started = Date.now();
      const result = await call(client, 'pve_stop_vm', { ...STOP, ...extra });
      const took = Date.now() - started;
      expect(result.isError).toBe(true);
      expect(result.structuredContent!.policy).toMatchObject({
        decision: 'deny',
        rule: '(approval store unavailable)',
      });
      expect(text(result)).toMatch(/The approvals store did not answer, so the call is denied/);
      expect(took).toBeGreaterThanOrEqual(STORE_DEADLINE_MS - 100);
      expect(took).toBeLessThan(HANG_MS - 100);
      // Asking reads what the call would hit, for the approver; nothing is written.
      expect(await sim.writes()).toEqual([]);
      await held.over;
    },
  );

  it('a hung audit object neither hangs nor fails a call: the record is counted as lost and logged', async () => {
    // The argument-HMAC key (kept by the key store) is loaded once per isolate, here.
    expect((await call(client, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy();
    const lost = appEnv.AUDIT.get(
      appEnv.AUDIT.idFromName(AUDIT_LOST_OBJECT),
    ) as DurableObjectStub<AuditLog>;
    const lostCount = () => runInDurableObject(lost, (log: AuditLog) => log.stats().lost);
    const before = await lostCount();
    const held = await hang(
      appEnv.AUDIT.get(appEnv.AUDIT.idFromName(AUDIT_OBJECT)),
      AUDIT_DEADLINE_MS + 1_500,
    );
    const logs: string[] = [];
    const spies = (['log', 'error'] as const).map((level) =>
      vi
        .spyOn(console, level)
        .mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' '))),
    );
    try {
      const started = Date.now();
      const result = await call(client, 'pve_list_vms', { limit: 1 });
      // Not held by the hung audit object: waiting for it would take its whole deadline.
      expect(Date.now() - started).toBeLessThan(AUDIT_DEADLINE_MS - 2_000);
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toMatch(/guests match/);
      // Once the append's own deadline passes, the loss is counted where /admin shows it.
      await vi.waitFor(async () => expect(await lostCount()).toBe(before + 1), {
        timeout: AUDIT_DEADLINE_MS + 1_000,
        interval: 250,
      });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const { request_id: requestId } = JSON.parse(
      logs.find((l) => l.includes('"msg":"tool_call"'))!,
    ) as { request_id: string };
    const lostLine = logs.find((l) => l.includes('"msg":"audit_lost"'));
    expect(JSON.parse(lostLine!)).toEqual({
      msg: 'audit_lost',
      request_id: requestId,
      error: `audit.append did not answer within ${AUDIT_DEADLINE_MS} ms`,
    });
    await held.over;
  });
});
