// A deployment from before the server keys had an object of their own, and before the argument
// HMAC was named for what it is: its stored state, seeded as that version left it, still works
// after the upgrade. The keys the audit object held are taken over (so argument HMACs and
// pending approvals stay comparable), and the audit and approvals tables keep their rows under
// the column's new name. Under the shipped policy.json (which allows the reads it calls): a
// policy set through the API would write to the audit object before the old state is seeded.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approvals } from '../../src/approvals/approvals-store';
import { hmacHex, importKey } from '../../src/audit/arg-hash';
import type { AuditLog } from '../../src/audit/audit-log';
import { canonicalJson } from '../../src/audit/canonical';
import type { AppEnv } from '../../src/env';
import type { ServerKeys } from '../../src/keys/server-keys';
import { auditRecords } from '../support/worker/audit';
import { workerFetchWith } from '../support/worker/mcp';
import { connect2026 } from '../support/worker/mcp-2026';

const appEnv = env as unknown as AppEnv;
const LEGACY_KEY = btoa(String.fromCharCode(...new Uint8Array(32).map((_, i) => 200 - i)));
const OLD_HMAC = 'b'.repeat(64);

/** The audit_records table as the previous version created it: the hash column was args_sha256. */
const OLD_AUDIT_TABLE = `CREATE TABLE audit_records (
  id INTEGER PRIMARY KEY AUTOINCREMENT, ts INTEGER NOT NULL,
  request_id TEXT NOT NULL, user_id TEXT NOT NULL, user_email TEXT, client_id TEXT NOT NULL,
  grant_id TEXT NOT NULL, session TEXT NOT NULL, tool TEXT NOT NULL, arg_keys TEXT NOT NULL,
  args_sha256 TEXT NOT NULL, args TEXT NOT NULL, decision TEXT NOT NULL, rule TEXT,
  outcome TEXT NOT NULL, error_kind TEXT, upstream_status INTEGER, latency_ms NUMERIC NOT NULL,
  vmid INTEGER, upid TEXT, approval_id TEXT, approval_channel TEXT)`;

const OLD_APPROVALS_TABLE = `CREATE TABLE approvals (
  id TEXT PRIMARY KEY, status TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
  tool TEXT NOT NULL, args TEXT NOT NULL, upstream TEXT, args_sha256 TEXT NOT NULL, grant_id TEXT NOT NULL,
  user_id TEXT NOT NULL, user_email TEXT, client_id TEXT NOT NULL, approvers TEXT, reason TEXT NOT NULL,
  rule TEXT NOT NULL, decided_by TEXT, decided_at INTEGER, used_at INTEGER)`;

const columns = (sql: SqlStorage, table: string): string[] =>
  sql
    .exec<{ name: string }>(`PRAGMA table_info(${table})`)
    .toArray()
    .map((c) => c.name);

describe('an upgrade from the version that kept keys in the audit object', () => {
  const keys = appEnv.SERVER_KEYS.get(
    appEnv.SERVER_KEYS.idFromName('keys'),
  ) as unknown as DurableObjectStub<ServerKeys>;
  const audit = appEnv.AUDIT.get(
    appEnv.AUDIT.idFromName('audit'),
  ) as unknown as DurableObjectStub<AuditLog>;
  type KeyRow = { name: string; value: string };
  const keyRows = (): Promise<KeyRow[]> =>
    runInDurableObject(keys, (_i: ServerKeys, state) =>
      state.storage.sql.exec<KeyRow>('SELECT name, value FROM server_keys').toArray(),
    );
  // The project's files share this Worker's objects: the keys the files before made are put
  // back afterwards, and the old version's key taken away, so the files after find the keys
  // their isolates hold.
  let before: KeyRow[] = [];
  beforeAll(async () => {
    before = await keyRows();
  });
  afterAll(async () => {
    await runInDurableObject(keys, (_i: ServerKeys, state) => {
      state.storage.sql.exec('DELETE FROM server_keys');
      for (const row of before)
        state.storage.sql.exec(
          'INSERT INTO server_keys (name, value) VALUES (?, ?)',
          row.name,
          row.value,
        );
    });
    // Emptied, not dropped: the audit object, once it has seen the table, reads it on.
    await runInDurableObject(audit, (_i: AuditLog, state) => {
      state.storage.sql.exec('DELETE FROM audit_keys');
    });
  });

  it('takes over its argument-HMAC key: a new call is hashed under the key the old version made', async () => {
    // The old version's audit object, with the key it made on its first call; the keys object
    // is new: nothing of its own yet.
    await runInDurableObject(audit, (_instance: AuditLog, state) => {
      state.storage.sql.exec(
        'CREATE TABLE IF NOT EXISTS audit_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL)',
      );
      state.storage.sql.exec(
        'INSERT OR REPLACE INTO audit_keys (name, value) VALUES (?, ?)',
        'args_hmac',
        LEGACY_KEY,
      );
    });
    await runInDurableObject(keys, (_i: ServerKeys, state) => {
      state.storage.sql.exec('DELETE FROM server_keys');
    });
    expect(await keyRows()).toEqual([]);

    // The new version's first isolate: a Runtime of its own (workerFetchWith builds one for the
    // env it is given), which has read no key yet.
    const client = await connect2026({ fetch: workerFetchWith({}) });
    const args = { node: 'pve1', vmid: 100 };
    const result = await client.callTool({ name: 'pve_get_vm_status', arguments: args });
    expect(result.isError).toBeFalsy();
    await client.close();

    const record = (await auditRecords((r) => r.tool === 'pve_get_vm_status')).at(-1);
    const shown = canonicalJson({ ...args, vm_type: 'qemu', guest_ips: false });
    expect(record!.args_hmac).toBe(await hmacHex(await importKey(LEGACY_KEY), shown));
    // Taken over for good: the keys object holds it now, and a key the old version never made
    // is made once, then kept.
    expect(await keyRows()).toContainEqual({ name: 'args_hmac', value: LEGACY_KEY });
    const state1 = await runInDurableObject(keys, (i: ServerKeys) => i.key('request_state'));
    const state2 = await runInDurableObject(keys, (i: ServerKeys) => i.key('request_state'));
    expect(state1).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(state2).toBe(state1);
  });

  it("keeps the audit trail's rows, their hash under its new name args_hmac", async () => {
    const stub = appEnv.AUDIT.get(
      appEnv.AUDIT.idFromName('upgrade-audit'),
    ) as unknown as DurableObjectStub<AuditLog>;
    const records = await runInDurableObject(stub, async (instance: AuditLog, state) => {
      const sql = state.storage.sql;
      sql.exec(OLD_AUDIT_TABLE);
      sql.exec(
        `INSERT INTO audit_records (ts, request_id, user_id, client_id, grant_id, session, tool,
           arg_keys, args_sha256, args, decision, outcome, latency_ms)
         VALUES (1, 'req-old', 'alice', 'client', 'grant', 'session', 'pve_list_vms', '[]', ?,
           '{}', 'allow', 'ok', 5)`,
        OLD_HMAC,
      );
      const page = await instance.query({ limit: 10 });
      return { page, columns: columns(sql, 'audit_records') };
    });
    expect(records.columns).toContain('args_hmac');
    expect(records.columns).not.toContain('args_sha256');
    expect(records.page.records).toEqual([
      expect.objectContaining({ request_id: 'req-old', args_hmac: OLD_HMAC }),
    ]);
  });

  it('keeps a pending approval, which a call with the same arguments can still spend', async () => {
    const stub = appEnv.APPROVALS.get(
      appEnv.APPROVALS.idFromName('upgrade-approvals'),
    ) as unknown as DurableObjectStub<Approvals>;
    const now = Date.now();
    const outcome = await runInDurableObject(stub, async (instance: Approvals, state) => {
      const sql = state.storage.sql;
      sql.exec(OLD_APPROVALS_TABLE);
      sql.exec(
        `INSERT INTO approvals (id, status, created_at, expires_at, tool, args, args_sha256,
           grant_id, user_id, client_id, reason, rule, decided_by, decided_at)
         VALUES ('old-approval-0001', 'approved', ?, ?, 'pve_stop_vm', '{}', ?, 'grant', 'alice',
           'client', 'A person confirms stops.', '/tools/pve_stop_vm', 'lead', ?)`,
        now - 1_000,
        now + 600_000,
        OLD_HMAC,
        now - 500,
      );
      const before = await instance.get('old-approval-0001');
      const wrong = await instance.consume(
        'old-approval-0001',
        { tool: 'pve_stop_vm', args_hmac: 'c'.repeat(64), grant_id: 'grant' },
        now,
      );
      const spent = await instance.consume(
        'old-approval-0001',
        { tool: 'pve_stop_vm', args_hmac: OLD_HMAC, grant_id: 'grant' },
        now,
      );
      return { before, wrong, spent, after: await instance.get('old-approval-0001') };
    });
    expect(outcome.before).toMatchObject({ id: 'old-approval-0001', args_hmac: OLD_HMAC });
    // Another call's arguments (their hash differs) cannot spend it; the same arguments can.
    expect(outcome.wrong).toBe('other_call');
    expect(outcome.spent).toEqual({ upstream: null });
    expect(outcome.after).toMatchObject({ status: 'used' });
  });
});
