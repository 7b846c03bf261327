// The audit trail store, through the real AuditLog Durable Object: every field round-trips,
// filters, newest-first keyset pagination, pruning by age (directly and by the alarm) and by the
// row cap, the lost counter, size clipping. Errors are asserted inside the object
// (runInDurableObject): a rejecting RPC through a stub leaks an unhandled rejection in
// the vitest plugin (then vitest-pool-workers; cloudflare/workers-sdk#14736).

import { env } from 'cloudflare:workers';
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AuditLog,
  PRUNE_INTERVAL_MS,
  type AuditEnv,
  type AuditLogRpc,
} from '../../src/audit/audit-log';
import { auditLimits } from '../../src/config/parse';
import { MAX_ARGS_BYTES } from '../../src/audit/audit-row';
import type { AuditQuery, AuditRecord } from '../../src/audit/record';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const ns = (env as unknown as { AUDIT: DurableObjectNamespace<AuditLog> }).AUDIT;
const T0 = Date.parse('2026-11-30T12:00:00Z');
const DAY = 86_400_000;

/** A new, empty instance. */
const fresh = (): AuditLogRpc =>
  ns.get(ns.idFromName(`test:${crypto.randomUUID()}`)) as unknown as AuditLogRpc;
/** The same instance, as the test harness (runInDurableObject, runDurableObjectAlarm) takes it. */
const harness = (rpc: AuditLogRpc): DurableObjectStub<AuditLog> =>
  rpc as unknown as DurableObjectStub<AuditLog>;

function record(over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    ts: T0,
    request_id: 'r',
    user_id: 'u1',
    user_email: 'alice@example.com',
    client_id: 'client',
    grant_id: 'grant',
    session: 'session',
    tool: 'pve_list_vms',
    arg_keys: [],
    args_hmac: 'a'.repeat(64),
    args: {},
    decision: 'allow',
    rule: null,
    outcome: 'ok',
    error_kind: null,
    upstream_status: null,
    latency_ms: 5,
    vmid: null,
    upid: null,
    approval_id: null,
    approval_channel: null,
    policy_version: 1,
    user_groups: ['ops'],
    user_scopes: ['pve:read'],
    cluster: 'default',
    upstream_ms: 12,
    ...over,
  };
}

/** Runs `fn` on an AuditLog over the instance's real storage but with an environment of our own. */
function withEnv<R>(auditEnv: AuditEnv, fn: (log: AuditLog) => R | Promise<R>): Promise<R> {
  return runInDurableObject(harness(fresh()), (_instance: AuditLog, state) =>
    fn(new AuditLog(state, auditEnv)),
  );
}

describe('AuditLog (the audit trail store)', () => {
  it('gives back every field of a stored record by id', async () => {
    const stub = fresh();
    const full = record({
      request_id: 'req-1',
      user_email: 'bob@example.com',
      tool: 'pve_create_qemu_vm',
      arg_keys: ['node', 'memory', 'cipassword'],
      args: { node: 'pve1', memory: 2048, cipassword: '[redacted]', net0: { model: 'virtio' } },
      decision: 'approval_required',
      rule: '/tools/pve_create_qemu_vm',
      outcome: 'failed',
      error_kind: 'upstream_error',
      upstream_status: 500,
      latency_ms: 123,
      vmid: 101,
      upid: 'UPID:pve1:00001234:00005678:65000000:qmcreate:101:root@pam!mcp:',
      approval_id: 'ap-1',
    });
    await stub.append(full);
    const [stored] = (await stub.query({ limit: 10 })).records;
    expect(stored).toEqual({ ...full, id: expect.any(Number) });
    expect(await stub.get(stored!.id)).toEqual(stored);
    expect(await stub.get(stored!.id + 1)).toBeNull();
  });

  describe('query filters', () => {
    let stub: AuditLogRpc;
    const seed: Partial<AuditRecord>[] = [
      {
        request_id: 'a',
        ts: T0,
        user_id: 'u1',
        user_email: 'alice@example.com',
        tool: 'pve_list_vms',
        decision: 'allow',
        outcome: 'ok',
      },
      {
        request_id: 'b',
        ts: T0 + 1000,
        user_id: 'u2',
        user_email: 'bob@example.com',
        tool: 'pve_create_qemu_vm',
        decision: 'deny',
        outcome: 'denied',
      },
      {
        request_id: 'c',
        ts: T0 + 2000,
        user_id: 'u1',
        user_email: 'alice@example.com',
        tool: 'pve_create_qemu_vm',
        decision: 'approval_required',
        outcome: 'approval_pending',
      },
      {
        request_id: 'd',
        ts: T0 + 3000,
        user_id: 'u3',
        user_email: null,
        tool: 'pve_list_vms',
        decision: 'limited',
        outcome: 'denied',
      },
      {
        request_id: 'e',
        ts: T0 + 4000,
        user_id: 'u2',
        user_email: 'bob@example.com',
        tool: 'pve_create_qemu_vm',
        decision: 'allow',
        outcome: 'failed',
      },
    ];
    beforeAll(async () => {
      stub = fresh();
      for (const over of seed) await stub.append(record(over));
    });

    it.each<[string, Omit<AuditQuery, 'limit'>, string]>([
      ['no filter', {}, 'edcba'],
      ['blank strings as no filter', { user: '', tool: '' }, 'edcba'],
      ['user by id', { user: 'u1' }, 'ca'],
      ['user by email', { user: 'bob@example.com' }, 'eb'],
      ['an unknown user', { user: 'nobody' }, ''],
      ['tool', { tool: 'pve_create_qemu_vm' }, 'ecb'],
      ['decision', { decision: 'deny' }, 'b'],
      ['outcome', { outcome: 'denied' }, 'db'],
      ['from and to, both inclusive', { from: T0 + 1000, to: T0 + 3000 }, 'dcb'],
      ['from alone', { from: T0 + 4000 }, 'e'],
      ['to alone', { to: T0 }, 'a'],
      [
        'user, tool and outcome',
        { user: 'u2', tool: 'pve_create_qemu_vm', outcome: 'failed' },
        'e',
      ],
      [
        'email, decision and a one-instant range',
        {
          user: 'alice@example.com',
          decision: 'approval_required',
          from: T0 + 2000,
          to: T0 + 2000,
        },
        'c',
      ],
    ])('filters by %s', async (_name, filters, expected) => {
      const page = await stub.query({ ...filters, limit: 100 });
      expect(page.records.map((r) => r.request_id).join('')).toBe(expected);
      expect(page.next_cursor).toBeNull();
    });
  });

  it('orders newest first, equal times by id', async () => {
    const stub = fresh();
    for (const [id, ts] of [
      ['x1', T0],
      ['y1', T0 + 5],
      ['x2', T0],
      ['x3', T0],
    ] as const) {
      await stub.append(record({ request_id: id, ts }));
    }
    const page = await stub.query({ limit: 10 });
    expect(page.records.map((r) => r.request_id)).toEqual(['y1', 'x3', 'x2', 'x1']);
    const ids = page.records.slice(1).map((r) => r.id);
    expect(ids).toEqual([...ids].sort((p, q) => q - p));
  });

  it('pages through 250 records without duplicates or gaps', async () => {
    const stub = fresh();
    await runInDurableObject(harness(stub), async (log: AuditLog) => {
      // Three records per millisecond, so page boundaries fall inside runs of equal ts.
      for (let i = 0; i < 250; i++)
        await log.append(record({ request_id: `r${i}`, ts: T0 + Math.floor(i / 3) }));
    });
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await stub.query({ limit: 100, cursor });
      sizes.push(page.records.length);
      seen.push(...page.records.map((r) => r.request_id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(sizes).toEqual([100, 100, 50]);
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => `r${249 - i}`));
  });

  it.each([['!!!'], ['not-a-cursor'], [btoa('1:x:y')], [btoa('2:1:1')], ['A'.repeat(65)]])(
    'rejects the malformed cursor %j',
    async (cursor) => {
      await runInDurableObject(harness(fresh()), (log: AuditLog) => {
        expect(() => log.query({ limit: 10, cursor })).toThrow(/Invalid cursor/);
      });
    },
  );

  it.each([[0], [1001], [1.5]])('rejects limit %d', async (limit) => {
    await runInDurableObject(harness(fresh()), (log: AuditLog) => {
      expect(() => log.query({ limit })).toThrow(/limit must be an integer from 1 to 1000/);
    });
  });

  it('prunes records older than the retention, keeping the cutoff instant and newer', async () => {
    const stub = fresh();
    const now = T0 + 365 * DAY;
    const ages = [91 * DAY, 90 * DAY + 1, 90 * DAY, DAY];
    for (const age of ages) await stub.append(record({ request_id: `age${age}`, ts: now - age }));
    expect(await stub.prune(now)).toEqual({ deleted: 2 });
    const left = (await stub.query({ limit: 10 })).records.map((r) => r.request_id);
    expect(left).toEqual([`age${DAY}`, `age${90 * DAY}`]);
    expect(await stub.prune(now)).toEqual({ deleted: 0 });
  });

  it('schedules a prune on append, and the alarm prunes and schedules the next', async () => {
    const stub = fresh();
    const before = Date.now();
    await stub.append(record({ request_id: 'old', ts: Date.now() - 100 * DAY }));
    await stub.append(record({ request_id: 'new', ts: Date.now() }));
    const alarm = await runInDurableObject(harness(stub), (_log: AuditLog, state) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBeGreaterThanOrEqual(before + PRUNE_INTERVAL_MS);
    expect(alarm).toBeLessThanOrEqual(Date.now() + PRUNE_INTERVAL_MS);
    expect(await runDurableObjectAlarm(harness(stub))).toBe(true);
    expect((await stub.query({ limit: 10 })).records.map((r) => r.request_id)).toEqual(['new']);
    expect(
      await runInDurableObject(harness(stub), (_log: AuditLog, state) => state.storage.getAlarm()),
    ).not.toBeNull();
  });

  it('prunes a backlog in bounded steps, the alarm coming back soon until it is done', async () => {
    const stub = fresh();
    await stub.append(record({ request_id: 'new', ts: Date.now() }));
    // 120,000 expired rows straight into the table: more than one prune's budget of 100,000.
    await runInDurableObject(harness(stub), (_log: AuditLog, state) => {
      state.storage.sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120000)
         INSERT INTO audit_records (ts, request_id, user_id, client_id, grant_id, session, tool,
           arg_keys, args_hmac, args, decision, outcome, latency_ms)
         SELECT ?, 'old' || i, 'u', 'c', 'g', 's', 't', '[]', '', '{}', 'allow', 'ok', 0 FROM n`,
        Date.now() - 100 * DAY,
      );
    });
    const alarmIn = () =>
      runInDurableObject(
        harness(stub),
        async (_log: AuditLog, state) => ((await state.storage.getAlarm()) ?? 0) - Date.now(),
      );
    expect(await runDurableObjectAlarm(harness(stub))).toBe(true);
    expect((await stub.stats()).count).toBe(20_001);
    expect(await alarmIn()).toBeLessThanOrEqual(1_000);
    expect(await runDurableObjectAlarm(harness(stub))).toBe(true);
    expect((await stub.query({ limit: 10 })).records.map((r) => r.request_id)).toEqual(['new']);
    expect(await alarmIn()).toBeGreaterThan(PRUNE_INTERVAL_MS - 60_000);
  });

  it('keeps at most the row cap, deleting the oldest', async () => {
    // The cap's minimum is 1,000, so the test gives its own environment to an AuditLog built
    // on a real instance's storage (no test hook in the class).
    const { deleted, stats, oldest } = await withEnv({ AUDIT_MAX_ROWS: '1000' }, async (log) => {
      for (let i = 0; i < 1200; i++) await log.append(record({ request_id: `r${i}`, ts: T0 + i }));
      const result = log.prune(T0 + 1200);
      const last = log.query({ limit: 1, to: T0 + 200 }).records[0];
      return { deleted: result.deleted, stats: log.stats(), oldest: last };
    });
    expect(deleted).toBe(200);
    expect(stats).toMatchObject({
      count: 1000,
      oldest_ts: T0 + 200,
      newest_ts: T0 + 1199,
      max_rows: 1000,
    });
    expect(oldest?.request_id).toBe('r200');
  });

  it('reports counts, bounds and limits in stats', async () => {
    const stub = fresh();
    expect(await stub.stats()).toMatchObject({
      count: 0,
      oldest_ts: null,
      newest_ts: null,
      lost: 0,
      retention_days: 90,
      max_rows: 1_000_000,
      config_problems: [],
    });
    await stub.append(record({ ts: T0 + 7 }));
    await stub.append(record({ ts: T0 - 3 }));
    const stats = await stub.stats();
    expect(stats).toMatchObject({ count: 2, oldest_ts: T0 - 3, newest_ts: T0 + 7 });
    expect(stats.db_bytes).toBeGreaterThan(0);
  });

  it.each<[AuditEnv, number, number, number]>([
    [{}, 90, 1_000_000, 0],
    [{ AUDIT_RETENTION_DAYS: '7', AUDIT_MAX_ROWS: '5000' }, 7, 5000, 0],
    [{ AUDIT_RETENTION_DAYS: ' 3650 ', AUDIT_MAX_ROWS: '50_000_000' }, 3650, 50_000_000, 0],
    [{ AUDIT_RETENTION_DAYS: '0', AUDIT_MAX_ROWS: '999' }, 90, 1_000_000, 2],
    [{ AUDIT_RETENTION_DAYS: '1.5', AUDIT_MAX_ROWS: 'lots' }, 90, 1_000_000, 2],
    [{ AUDIT_RETENTION_DAYS: '3651', AUDIT_MAX_ROWS: '50000001' }, 90, 1_000_000, 2],
  ])('reads limits %j (invalid ones fall back to defaults)', (auditEnv, days, rows, problems) => {
    const found: string[] = [];
    const limits = auditLimits(auditEnv, found);
    expect([limits.retentionDays, limits.maxRows, found.length]).toEqual([days, rows, problems]);
  });

  it('shows configuration problems in stats', async () => {
    const stats = await withEnv({ AUDIT_RETENTION_DAYS: 'forever' }, (log) => log.stats());
    expect(stats.retention_days).toBe(90);
    expect(stats.config_problems).toEqual([
      expect.stringMatching(/^AUDIT_RETENTION_DAYS must be an integer from 1 to 3650/),
    ]);
  });

  it('counts lost records on the instance told about them', async () => {
    const lost = fresh();
    await lost.recordLost(1);
    await lost.recordLost(2);
    await lost.recordLost(0);
    expect(await lost.stats()).toMatchObject({ lost: 3, count: 0 });
    await runInDurableObject(harness(lost), (log: AuditLog) => {
      expect(() => log.recordLost(-1)).toThrow(/non-negative integer/);
    });
    expect((await fresh().stats()).lost).toBe(0);
  });

  it('clips oversized fields instead of failing', async () => {
    const stub = fresh();
    const big = { description: 'x'.repeat(MAX_ARGS_BYTES + 10) };
    await stub.append(
      record({
        args: big,
        user_id: 'u'.repeat(1000),
        latency_ms: Number.NaN,
        arg_keys: Array.from({ length: 150 }, (_, i) => `k${i}`),
      }),
    );
    const [stored] = (await stub.query({ limit: 1 })).records;
    expect(stored?.args).toEqual({ _truncated: true, bytes: expect.any(Number) });
    expect(stored?.args.bytes).toBeGreaterThan(MAX_ARGS_BYTES);
    expect(stored?.user_id).toHaveLength(256);
    expect(stored?.arg_keys).toHaveLength(100);
    expect(stored?.latency_ms).toBe(0);
  });

  it('gives the figures of recent calls: per hour by decision, what refused most, latency', async () => {
    const stub = fresh();
    const now = Date.parse('2026-11-30T12:30:00Z');
    const H = 3_600_000;
    // This hour: 20 allowed calls, their Proxmox time 1..20 ms (the call's 101..120), and two
    // refused by a rule of pve_delete_vm; the hour before: one rate-limited. Left out: a policy
    // change (not a call) and a call from 8 days ago.
    for (let i = 1; i <= 20; i++)
      await stub.append(
        record({ ts: now - i * 1000, request_id: `a${i}`, latency_ms: 100 + i, upstream_ms: i }),
      );
    for (const id of ['d1', 'd2'])
      await stub.append(
        record({
          ts: now - 60_000,
          request_id: id,
          tool: 'pve_delete_vm',
          decision: 'deny',
          rule: '/tools/pve_delete_vm/deny_if/0',
          upstream_ms: null,
        }),
      );
    await stub.append(
      record({
        ts: now - H,
        request_id: 'l1',
        decision: 'limited',
        rule: '/tools/pve_list_vms/limits/0',
      }),
    );
    await stub.append(record({ ts: now - 2000, tool: '(policy)', decision: 'none' }));
    await stub.append(record({ ts: now - 8 * DAY, request_id: 'old', decision: 'deny' }));

    const f = await stub.figures(now);
    expect([f.day.length, f.week.length]).toEqual([24, 168]);
    const hour = Date.parse('2026-11-30T12:00:00Z');
    expect(f.day.at(-1)).toEqual({
      start: hour,
      counts: { allow: 20, approval_required: 0, limited: 0, deny: 2, none: 0 },
    });
    expect(f.day.at(-2)).toEqual({
      start: hour - H,
      counts: { allow: 0, approval_required: 0, limited: 1, deny: 0, none: 0 },
    });
    expect(f.week.reduce((n, h) => n + h.counts.deny, 0)).toBe(2);
    expect(f.refusing).toEqual({
      tools: [
        { name: 'pve_delete_vm', count: 2 },
        { name: 'pve_list_vms', count: 1 },
      ],
      rules: [
        { name: '/tools/pve_delete_vm/deny_if/0', count: 2 },
        { name: '/tools/pve_list_vms/limits/0', count: 1 },
      ],
    });
    // Nearest rank: of the 22 calls (5, 5, 101..120 ms), the 11th and the 21st; of the 20 that
    // sent Proxmox something (1..20 ms), the 10th and the 19th.
    expect(f.latency.at(-1)).toEqual({
      start: hour,
      calls: 22,
      p50_ms: 109,
      p95_ms: 119,
      upstream_calls: 20,
      upstream_p50_ms: 10,
      upstream_p95_ms: 19,
    });
    expect(f.latency.at(-3)).toMatchObject({ calls: 0, p50_ms: null, upstream_p95_ms: null });
  });
});
