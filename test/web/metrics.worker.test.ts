// /admin/metrics.json and the approvals' figures behind it (AUTH_MODE=none: the local operator),
// through the real Durable Objects: what became of approvals asked in a window (given, refused,
// expired while no one decided, waiting) and how long people took, and the calls the audit
// trail counts per hour.

import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type {
  ApprovalFigures,
  ApprovalRequest,
  Decider,
  DecideCheck,
} from '../../src/approvals/types';
import { call, connect, ORIGIN, workerFetch } from '../support/worker/mcp';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const ns = (env as unknown as { APPROVALS: DurableObjectNamespace }).APPROVALS;
const MIN = 60_000;
/** The store's methods as its stub answers them. */
interface Store {
  create(request: ApprovalRequest, now: number, ttlMs: number): Promise<{ id: string } | null>;
  decide(id: string, decision: 'approve' | 'deny', by: Decider, now: number): Promise<DecideCheck>;
  figures(now: number, since: number): Promise<ApprovalFigures>;
}
const ADMIN: Decider = { userId: 'admin', email: 'admin@example.com', groups: [], isAdmin: true };

function request(n: number): ApprovalRequest {
  return {
    tool: 'pve_delete_vm',
    args: { node: 'pve1', vmid: 100 + n },
    upstream: null,
    args_hmac: `h${n}`,
    grant_id: `g${n}`,
    user_id: 'ann',
    user_email: 'ann@example.com',
    client_id: 'c',
    approvers: null,
    approvals_required: 1,
    reason: 'r',
    rule: '/tools/pve_delete_vm/action',
  };
}

/** Seeds, on `store`, approvals asked `ago` minutes before `now`, decided as told. */
async function seed(store: Store, now: number): Promise<void> {
  const ask = async (n: number, ago: number) =>
    (await store.create(request(n), now - ago * MIN, 15 * MIN))!.id;
  // Given after 1 min, refused after 3, given after 5; one ran out with no one deciding (asked
  // 30 min ago, for 15); one still waiting; one asked 2 days ago (outside the day, in the week).
  const decided: [number, number, number, 'approve' | 'deny'][] = [
    [1, 10, 1, 'approve'],
    [2, 10, 3, 'deny'],
    [3, 10, 5, 'approve'],
  ];
  for (const [n, ago, took, decision] of decided) {
    const id = await ask(n, ago);
    expect(await store.decide(id, decision, ADMIN, now - (ago - took) * MIN)).toEqual({ ok: true });
  }
  await ask(4, 30);
  await ask(5, 1);
  await ask(6, 2 * 24 * 60);
}

describe('the figures of approvals and calls', () => {
  it("binds the calls' Analytics Engine dataset as wrangler.toml declares it", () => {
    // Each call writes one data point there (src/audit/call-point.ts); locally the binding
    // writes nowhere, so what is written is held to its layout in test/audit/call-point.test.ts.
    const metrics = (env as unknown as { CALL_METRICS?: { writeDataPoint?: unknown } })
      .CALL_METRICS;
    expect(typeof metrics?.writeDataPoint).toBe('function');
  });

  it('counts what became of approvals, and how long people took', async () => {
    const store = ns.get(ns.idFromName(`test:${crypto.randomUUID()}`)) as unknown as Store;
    const now = Date.now();
    await seed(store, now);
    expect(await store.figures(now, now - 24 * 60 * MIN)).toEqual({
      since: now - 24 * 60 * MIN,
      asked: 5,
      given: 2,
      refused: 1,
      expired: 1,
      revoked: 0,
      withdrawn: 0,
      waiting: 1,
      // Nearest rank of 1, 3 and 5 minutes: the 2nd and the 3rd.
      decide_p50_ms: 3 * MIN,
      decide_p95_ms: 5 * MIN,
    });
    expect(await store.figures(now, now - 7 * 24 * 60 * MIN)).toMatchObject({
      asked: 6,
      expired: 2,
      waiting: 1,
    });
  });

  it('answers /admin/metrics.json with the calls per hour', async () => {
    const read = async () => {
      const res = await workerFetch(`${ORIGIN}/admin/metrics.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      return (await res.json()) as {
        calls: { day: { counts: Record<string, number> }[]; week: unknown[] };
        approvals: { day: { asked: number }; week: { asked: number } };
        latency: unknown[];
      };
    };
    const allowed = (m: Awaited<ReturnType<typeof read>>) =>
      m.calls.day.reduce((n, h) => n + h.counts.allow!, 0);
    const before = await read();
    const client = await connect('http');
    for (let i = 0; i < 3; i++)
      expect((await call(client, 'pve_list_vms', {})).isError).toBeFalsy();
    await client.close();
    let after = before;
    // The store keeps its figures 5 s: read until the calls are there.
    for (let i = 0; i < 80 && allowed(after) < allowed(before) + 3; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await read();
    }
    expect(allowed(after) - allowed(before)).toBe(3);
    expect(after.calls.day).toHaveLength(24);
    expect(after.calls.week).toHaveLength(168);
    expect(after.latency).toHaveLength(24);
    expect(after.approvals.week.asked).toBeGreaterThanOrEqual(after.approvals.day.asked);
  });
});
