// Each person as themselves in Proxmox (this project's PVE_IDENTITIES: alice@example.com with
// alice's token, group ops with bob's, no fallback; the simulator's ACLs give alice the lab pool
// only and bob every guest). Every call is allowed by the policy here, so Proxmox alone decides:
// which token reached it is read from the simulator's request log, never from our own code.

import { beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { forgetHeld as forgetHeldPrivileges } from '../../src/proxmox/refusal';
import { auditRecords } from '../support/worker/audit';
import { approveAsDevUser, openAsDevUser } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { usePolicy } from '../support/worker/policy';
import { aliceAndBob, tokenOf } from '../support/worker/people';
import { sim } from '../support/worker/sim';

// Every call allowed, but a shutdown of VM 101 asks an administrator first (who has no Proxmox
// identity here: whatever ran as the approver would be refused).
usePolicy(
  {
    version: '1',
    default: 'allow',
    tools: {
      pve_shutdown_vm: {
        approve_if: [{ path: 'args.vmid', op: 'eq', value: 101, approvers: ['admin@example.com'] }],
      },
    },
  },
  asEditor(),
);

const SIMULATOR_TOKENS = inject('simulatorTokens') as Record<
  'alice' | 'bob' | 'admin',
  { id: string; secret: string }
>;

describe('each person as themselves in Proxmox', () => {
  const people = aliceAndBob();
  beforeEach(async () => {
    await sim.reset();
    await sim.clearLog();
  });

  it("lists for alice what her token may see, the lab pool's guests, and asks with her token", async () => {
    const list = await call(people.alice, 'pve_list_vms', { limit: 1000 });
    expect(list.isError, text(list)).toBeFalsy();
    const guests = list.structuredContent!.guests as { vmid: number }[];
    expect(guests.map((g) => g.vmid)).toEqual([104]);
    const requests = await sim.requests();
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api2/json/cluster/resources',
    ]);
    expect(requests.map(tokenOf)).toEqual([SIMULATOR_TOKENS.alice.id]);
  });

  it("gives alice Proxmox's refusal on a prod guest, and bob (group ops) shuts it down as himself", async () => {
    const stop = { node: 'pve1', vmid: 100, confirm: true };
    const refused = await call(people.alice, 'pve_shutdown_vm', stop);
    expect(refused.isError).toBe(true);
    // Her token may not even see VM 100: Proxmox refuses the read before any write.
    expect(text(refused)).toContain(
      `Proxmox refused: alice@example.com's token (${SIMULATOR_TOKENS.alice.id}) lacks the privilege VM.Audit on /vms/100 (403 Permission check failed (/vms/100, VM.Audit))`,
    );
    expect((await sim.guest(100)).status).toBe('running');
    expect(await sim.writes()).toEqual([]);
    expect(new Set((await sim.requests()).map(tokenOf))).toEqual(
      new Set([SIMULATOR_TOKENS.alice.id]),
    );

    await sim.clearLog();
    const done = await call(people.bob, 'pve_shutdown_vm', stop);
    expect(done.isError, text(done)).toBeFalsy();
    const bobs = await sim.writes();
    expect(bobs.map((r) => `${r.method} ${r.path} ${tokenOf(r)}`)).toEqual([
      `POST /api2/json/nodes/pve1/qemu/100/status/shutdown ${SIMULATOR_TOKENS.bob.id}`,
    ]);
    // Proxmox's task log names the person's token as the task's user.
    expect(JSON.stringify(done.structuredContent)).toContain(
      `:qmshutdown:100:${SIMULATOR_TOKENS.bob.id}:`,
    );
  });

  it("explains a refusal whose text names no privilege from what the person's token holds, read once", async () => {
    forgetHeldPrivileges();
    const make = { node: 'pve1', vmid: 4300, name: 'lab-new', pool: 'lab', confirm: true };
    const refused = await call(people.alice, 'pve_create_qemu_vm', make);
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain(
      `Proxmox refused: alice@example.com's token (${SIMULATOR_TOKENS.alice.id}) lacks the privilege VM.Allocate on /vms/4300 and on /pool/lab (either would do) (403 Permission check failed). Grant it to the token`,
    );
    const asked = (await sim.requests()).filter((r) => r.path === '/api2/json/access/permissions');
    // Read side by side, so in either order.
    expect(asked.map((r) => [r.query.path, tokenOf(r)]).sort()).toEqual([
      ['/pool/lab', SIMULATOR_TOKENS.alice.id],
      ['/vms/4300', SIMULATOR_TOKENS.alice.id],
    ]);
    expect(await sim.writes()).toEqual([
      expect.objectContaining({ method: 'POST', path: '/api2/json/nodes/pve1/qemu', status: 403 }),
    ]);
    // Again within seconds: what her token holds is not read again.
    await sim.clearLog();
    expect(text(await call(people.alice, 'pve_create_qemu_vm', make))).toBe(text(refused));
    expect((await sim.requests()).map((r) => r.path)).not.toContain(
      '/api2/json/access/permissions',
    );
  });

  it('says what the token holds where a refusal names no privilege and nothing is known to be missing', async () => {
    forgetHeldPrivileges();
    const { client: root } = await connectSignedIn('http', {
      user: 'root@example.com',
      groups: 'root',
    });
    try {
      await sim.fault({
        times: 1,
        method: 'POST',
        path: '^/nodes/pve1/qemu/100/status/stop$',
        status: 403,
        reason: 'Permission check failed',
        contentType: 'application/json;charset=UTF-8',
        body: { data: null, message: 'Permission check failed\n' },
      });
      const refused = await call(root, 'pve_stop_vm', { node: 'pve1', vmid: 100, confirm: true });
      expect(text(refused)).toMatch(
        new RegExp(
          `Proxmox refused: root@example\\.com's token \\(${SIMULATOR_TOKENS.admin.id.replace(/[!.]/g, '\\$&')}\\) may not POST /nodes/pve1/qemu/100/status/stop, and Proxmox's refusal names no privilege \\(403 Permission check failed\\)\\. What the token holds, as Proxmox answers for it: on /vms/100, Datastore\\.Allocate, .* and \\d+ more\\.`,
        ),
      );
      const asked = (await sim.requests()).filter(
        (r) => r.path === '/api2/json/access/permissions',
      );
      expect(asked.map((r) => [r.query.path, tokenOf(r)])).toEqual([
        ['/vms/100', SIMULATOR_TOKENS.admin.id],
      ]);
    } finally {
      await root.close();
    }
  });

  it('names the token each call went with in its audit record, log line, /admin and both exports', async () => {
    const since = Date.now();
    const logs: string[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => {
      logs.push(a.map(String).join(' '));
    });
    try {
      // Refused by Proxmox (alice's token may not see VM 100), then done by bob.
      await call(people.alice, 'pve_shutdown_vm', { node: 'pve1', vmid: 100, confirm: true });
      await call(people.bob, 'pve_shutdown_vm', { node: 'pve1', vmid: 100, confirm: true });
    } finally {
      spy.mockRestore();
    }
    const tokenBy = (records: { user_email: string | null; pve_token?: string | null }[]) =>
      Object.fromEntries(records.map((r) => [r.user_email, r.pve_token]));
    const both = {
      'alice@example.com': SIMULATOR_TOKENS.alice.id,
      'bob@example.com': SIMULATOR_TOKENS.bob.id,
    };
    const records = await auditRecords((r) => r.ts >= since, 2);
    expect(tokenBy(records)).toEqual(both);
    expect(records.map((r) => [r.user_email, r.outcome, r.upstream_status])).toEqual(
      expect.arrayContaining([
        ['alice@example.com', 'error', 403],
        ['bob@example.com', 'ok', 200],
      ]),
    );
    const lines = logs
      .filter((line) => line.includes('"msg":"tool_call"'))
      .map((line) => JSON.parse(line) as { user: string; pve_token?: string });
    expect(lines.map((l) => l.pve_token)).toEqual([
      SIMULATOR_TOKENS.alice.id,
      SIMULATOR_TOKENS.bob.id,
    ]);

    const admin = new Browser();
    const open = async (path: string) =>
      (await openAsDevUser(admin, `http://localhost${path}`, 'admin@example.com', 'ops')).html;
    const page = await open('/admin?tool=pve_shutdown_vm');
    for (const [who, id] of Object.entries(both))
      expect(page).toMatch(new RegExp(`${who}<br><small>in Proxmox: <code>${id}</code></small>`));
    const from = new Date(since).toISOString();
    const jsonl = await open(`/admin/audit?format=jsonl&tool=pve_shutdown_vm&from=${from}`);
    expect(
      tokenBy(
        jsonl
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ),
    ).toEqual(both);
    const [head, ...rows] = (
      await open(`/admin/audit?format=csv&tool=pve_shutdown_vm&from=${from}`)
    )
      .trim()
      .split('\r\n');
    const columns = head!.split(',');
    // After cluster; the columns up to user_email and from pve_token on hold no comma (ids,
    // numbers): each row's cells there are plain, counted from either end.
    expect(columns.indexOf('pve_token')).toBe(columns.indexOf('cluster') + 1);
    const at = columns.indexOf('user_email');
    const fromEnd = columns.indexOf('pve_token') - columns.length;
    expect(
      Object.fromEntries(rows.map((row) => [row.split(',')[at], row.split(',').at(fromEnd)])),
    ).toEqual(both);
  });

  it('refuses a person PVE_IDENTITIES maps to no token, before anything is sent, and audits it', async () => {
    const { client: carol } = await connectSignedIn('http', {
      user: 'carol@example.com',
      groups: 'dev',
    });
    try {
      const since = Date.now();
      const refused = await call(carol, 'pve_list_vms', {});
      expect(refused.isError).toBe(true);
      expect(text(refused)).toBe(
        '[NO PROXMOX IDENTITY] No Proxmox identity for carol@example.com: PVE_IDENTITIES maps no token to them, and names no fallback. Ask an operator to add one. Nothing was sent to Proxmox.',
      );
      expect(refused.structuredContent).toMatchObject({ error: { kind: 'no_identity' } });
      expect(await sim.requests()).toEqual([]);
      const [record] = await auditRecords(
        (r) => r.ts >= since && r.user_email === 'carol@example.com',
      );
      // Recorded as any refusal is: what was asked, and why.
      expect(record).toMatchObject({
        tool: 'pve_list_vms',
        decision: 'deny',
        rule: '(no Proxmox identity)',
        args: { limit: 100 },
      });
    } finally {
      await carol.close();
    }
  });

  it("runs an approved call with the requester's token, never the approver's", async () => {
    const ask = { node: 'pve1', vmid: 101, confirm: true };
    const pending = await call(people.bob, 'pve_shutdown_vm', ask);
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    expect(id, text(pending)).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
    const admin = { user: 'admin@example.com', groups: 'ops' };
    expect(await approveAsDevUser(new Browser(), 'http://localhost', id, admin)).toBe(303);
    const done = await call(people.bob, 'pve_shutdown_vm', { ...ask, approval_id: id });
    expect(done.isError, text(done)).toBeFalsy();
    const writes = await sim.writes();
    expect(writes.map((r) => `${r.method} ${r.path} ${tokenOf(r)}`)).toEqual([
      `POST /api2/json/nodes/pve1/qemu/101/status/shutdown ${SIMULATOR_TOKENS.bob.id}`,
    ]);
    // Every request of the call, the reads before the question included, was bob's.
    expect(new Set((await sim.requests()).map(tokenOf))).toEqual(
      new Set([SIMULATOR_TOKENS.bob.id]),
    );
  });

  it('keeps every token secret out of results, log lines, the audit trail and the pages', async () => {
    const since = Date.now();
    const logs: string[] = [];
    const spies = (['log', 'warn', 'error'] as const).map((level) =>
      vi
        .spyOn(console, level)
        .mockImplementation((...a: unknown[]) => void logs.push(a.map(String).join(' '))),
    );
    let results: unknown[];
    try {
      results = [
        // Refused by Proxmox (a 403), asked for approval (its page), and a plain read.
        await call(people.alice, 'pve_shutdown_vm', { node: 'pve1', vmid: 100, confirm: true }),
        await call(people.bob, 'pve_shutdown_vm', { node: 'pve1', vmid: 101, confirm: true }),
        await call(people.bob, 'pve_list_vms', { limit: 5 }),
      ];
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(logs.some((line) => line.includes('"msg":"tool_call"'))).toBe(true);
    const records = await auditRecords((r) => r.ts >= since, 3);
    const { approval_id: id } = (results[1] as { structuredContent: { approval_id: string } })
      .structuredContent;
    const admin = new Browser();
    const pages = await Promise.all(
      [`http://localhost/approvals/${id}`, 'http://localhost/admin'].map(
        async (url) => (await openAsDevUser(admin, url, 'admin@example.com', 'ops')).html,
      ),
    );
    expect(pages[0]).toContain('Shut down VM 101');
    const seen = JSON.stringify([results, logs, records, pages]);
    for (const token of Object.values(SIMULATOR_TOKENS)) expect(seen).not.toContain(token.secret);
  });
});
