// The audit trail end to end (AUTH_MODE=none; policy: pve_list_vms 2/hour per session,
// pve_create_qemu_vm denied above 8192 MiB, `description` sensitive): one record per tools/call
// of every kind, no sensitive value in storage, retention pruning by the alarm, and the admin
// export with filters and pagination.

import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AuditLog, AuditLogRpc } from '../../src/audit/audit-log';
import type { StoredAuditRecord } from '../../src/audit/record';
import type { AppEnv } from '../../src/env';
import { call, connect, ORIGIN, workerFetch } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { usePolicy } from '../support/worker/policy';
import { freshDeployment } from '../support/worker/fresh';

const AUDITED_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_list_vms: { limits: [{ counter: 'lists', window: 'hour', max: 2, scope: 'session' }] },
    pve_create_qemu_vm: {
      deny_if: [{ path: 'args.memory', op: 'gt', value: 8192 }],
      sensitive: ['description'],
    },
  },
};

freshDeployment();
const policy = usePolicy(AUDITED_POLICY);

const ns = (env as unknown as AppEnv).AUDIT;
const auditStub = (name = 'audit') => ns.get(ns.idFromName(name)) as unknown as AuditLogRpc;

async function exportRecords(
  query: string,
): Promise<{ records: StoredAuditRecord[]; next: string | null; res: Response }> {
  const res = await workerFetch(`${ORIGIN}/admin/audit?${query}`);
  const body = await res.clone().text();
  const records = res.headers.get('content-type')?.includes('ndjson')
    ? body
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as StoredAuditRecord)
    : [];
  return { records, next: res.headers.get('x-next-cursor'), res };
}

/** Records are written after the answer (waitUntil): wait until `n` are there. */
async function recordsOfSession(session: string, n: number): Promise<StoredAuditRecord[]> {
  for (let i = 0; i < 50; i++) {
    const { records } = await exportRecords('format=jsonl&limit=1000');
    const mine = records.filter((r) => r.session === session);
    if (mine.length >= n) return mine;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('audit records did not arrive');
}

describe('the audit trail', () => {
  let client: Client;
  let session: string;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
    session = `streamable-http:${(client.transport as StreamableHTTPClientTransport).sessionId}`;
  });

  it('keeps exactly one record per call, of every kind, without sensitive values', async () => {
    await call(client, 'pve_list_vms', { limit: 1 }); // allowed
    await call(client, 'pve_list_vms', { limit: 2 }); // allowed
    await call(client, 'pve_list_vms', { limit: 3 }); // limited
    await call(client, 'pve_create_qemu_vm', { node: 'pve1', memory: 16384 }); // denied
    await call(client, 'pve_create_qemu_vm', { node: '../x', description: 's3cr3t-invalid' }); // invalid
    await sim.fault({
      method: 'POST',
      path: '^/nodes/pve1/qemu$',
      status: 500,
      contentType: 'application/json;charset=UTF-8',
      body: { data: null, message: 'storage full\n' },
    });
    await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: 7001,
      description: 's3cr3t-failed',
      confirm: true,
    }); // failed upstream
    const created = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: 7002,
      name: 'audited',
      description: 's3cr3t-ok',
      confirm: true,
    });
    expect(created.isError).toBeFalsy();

    const records = (await recordsOfSession(session, 7)).sort((a, b) => a.id - b.id);
    expect(records).toHaveLength(7);
    expect(new Set(records.map((r) => r.request_id)).size).toBe(7);
    expect(records.map((r) => [r.tool, r.decision, r.outcome, r.rule])).toEqual([
      ['pve_list_vms', 'allow', 'ok', null],
      ['pve_list_vms', 'allow', 'ok', null],
      ['pve_list_vms', 'limited', 'denied', '/tools/pve_list_vms/limits/0'],
      ['pve_create_qemu_vm', 'deny', 'denied', '/tools/pve_create_qemu_vm/deny_if/0'],
      ['pve_create_qemu_vm', 'none', 'invalid', null],
      ['pve_create_qemu_vm', 'allow', 'error', null],
      ['pve_create_qemu_vm', 'allow', 'ok', null],
    ]);
    const [, , , , invalid, failed, ok] = records;
    expect(invalid).toMatchObject({
      error_kind: 'invalid_arguments',
      upstream_status: null,
      args: { node: '../x', description: '[redacted]' },
    });
    expect(failed).toMatchObject({
      error_kind: 'upstream.server_error',
      upstream_status: 500,
      vmid: null,
    });
    expect(ok).toMatchObject({
      user_id: 'anonymous',
      client_id: 'local',
      grant_id: 'local',
      session,
      vmid: 7002,
      upid: expect.stringMatching(/^UPID:pve1:.*:qmcreate:7002:/),
      upstream_status: 200,
      arg_keys: ['node', 'vmid', 'name', 'description', 'wait', 'timeout_s', 'confirm'],
      args: {
        node: 'pve1',
        vmid: 7002,
        name: 'audited',
        description: '[redacted]',
        confirm: true,
        wait: false,
        timeout_s: 60,
      },
      args_hmac: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(ok!.latency_ms).toBeGreaterThan(0);

    // Nothing sensitive anywhere in the audit store.
    const dump = await runInDurableObject(
      ns.get(ns.idFromName('audit')) as DurableObjectStub<AuditLog>,
      (_i, state) =>
        JSON.stringify(state.storage.sql.exec('SELECT * FROM audit_records').toArray()),
    );
    expect(dump).toContain('audited');
    expect(dump).not.toContain('s3cr3t');
  });

  it('exports with filters, as JSON Lines or CSV, page by page', async () => {
    const limited = await exportRecords('format=jsonl&tool=pve_list_vms&decision=limited');
    expect(limited.records.map((r) => r.rule)).toEqual(['/tools/pve_list_vms/limits/0']);
    expect(limited.res.headers.get('content-disposition')).toMatch(/audit\.jsonl/);

    const all = (await exportRecords('format=jsonl&limit=1000')).records;
    expect(all.length).toBeGreaterThanOrEqual(7);
    const paged: number[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const page: { records: StoredAuditRecord[]; next: string | null; res: Response } =
        await exportRecords(`format=jsonl&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...page.records.map((r) => r.id));
      sizes.push(page.records.length);
      if (page.next) expect(page.res.headers.get('link')).toContain(`cursor=${page.next}`);
      cursor = page.next;
      if (!cursor) break;
    }
    // Two records a page, the last one with what is left, each record once, in order.
    const pages = Math.ceil(all.length / 2);
    expect(sizes).toEqual([...Array(pages - 1).fill(2), all.length - 2 * (pages - 1)]);
    expect(paged).toEqual(all.map((r) => r.id));

    const from = new Date(Math.min(...all.map((r) => r.ts))).toISOString();
    const csv = await (
      await workerFetch(`${ORIGIN}/admin/audit?format=csv&tool=pve_create_qemu_vm&from=${from}`)
    ).text();
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toMatch(/^id,ts,time,request_id,user_id/);
    expect(lines.length - 1).toBe(all.filter((r) => r.tool === 'pve_create_qemu_vm').length);

    const bad = await workerFetch(`${ORIGIN}/admin/audit?format=jsonl&cursor=not-a-cursor`);
    expect(bad.status).toBe(400);
  });

  it('prunes records past the retention time with its alarm', async () => {
    const old = Date.now() - 200 * 86_400_000;
    await auditStub().append({
      ts: old,
      request_id: 'old-one',
      user_id: 'u',
      user_email: null,
      client_id: 'c',
      grant_id: 'g',
      session: 's',
      tool: 'pve_list_vms',
      arg_keys: [],
      args_hmac: '0'.repeat(64),
      args: {},
      decision: 'allow',
      rule: null,
      outcome: 'ok',
      error_kind: null,
      upstream_status: 200,
      latency_ms: 1,
      vmid: null,
      upid: null,
      approval_id: null,
      approval_channel: null,
      policy_version: null,
      user_groups: null,
      user_scopes: null,
      cluster: null,
      upstream_ms: null,
    });
    expect(
      (await auditStub().query({ limit: 1000, to: old })).records.map((r) => r.request_id),
    ).toEqual(['old-one']);
    expect(await runDurableObjectAlarm(ns.get(ns.idFromName('audit')))).toBe(true);
    expect((await auditStub().query({ limit: 1000, to: old })).records).toEqual([]);
    expect((await auditStub().query({ limit: 1000 })).records.length).toBeGreaterThanOrEqual(7);
  });

  it('shows lost records on the admin page', async () => {
    // Counted from what the page showed before: a record another file's hung audit object lost
    // late may land here too.
    const lost = async (): Promise<number> => {
      const page = await (await workerFetch(`${ORIGIN}/admin`)).text();
      return Number(/Records lost: <strong>(\d+)<\/strong>/.exec(page)?.[1] ?? 0);
    };
    const before = await lost();
    await auditStub('audit-lost').recordLost(2);
    const page = await (await workerFetch(`${ORIGIN}/admin`)).text();
    expect(page).toMatch(new RegExp(`Records lost: <strong>${before + 2}</strong>`));
    expect(page).toContain('pve_create_qemu_vm');
    expect(page).toContain(`<summary><strong>version ${policy.version}</strong> · valid · `);
  });

  it("names no Proxmox token where the server's one token acted (no PVE_IDENTITIES)", async () => {
    const since = Date.now();
    // A session of its own: the list's limit is per session.
    const own = await connect('http');
    expect((await call(own, 'pve_list_vms', {})).isError).toBeFalsy();
    await own.close();
    let mine: StoredAuditRecord[] = [];
    for (let i = 0; i < 50 && !mine.length; i++) {
      mine = (await auditStub().query({ limit: 10, from: since })).records;
      if (!mine.length) await new Promise((r) => setTimeout(r, 100));
    }
    expect(mine.map((r) => r.tool)).toEqual(['pve_list_vms']);
    expect(mine[0]).not.toHaveProperty('pve_token');
    const { records } = await exportRecords(`format=jsonl&from=${new Date(since).toISOString()}`);
    expect(records.map((r) => r.pve_token)).toEqual([null]);
  });
});
