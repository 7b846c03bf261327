// POST /admin/api/policy/replay in workerd: a draft evaluated against the calls this server
// recorded (the audit trail), limits counted in time order, reporting exactly the calls whose
// decision it would change. The calls are made here, through a signed-in MCP client, against
// the simulator; `since` keeps the replay to them.

import { beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StoredAuditRecord } from '../../src/audit/record';
import { Browser, connectSignedIn } from '../support/worker/oauth';
import { openAsDevUser } from '../support/form-browser';
import { auditRecords } from '../support/worker/audit';
import { sim } from '../support/worker/sim';
import { DEPLOYED } from '../support/policies/deployed';
import { freshDeployment } from '../support/worker/fresh';

freshDeployment();
const ORIGIN = 'http://localhost';
const REPLAY = `${ORIGIN}/admin/api/policy/replay`;

interface Change {
  request_id: string;
  user: string;
  tool: string;
  before: { decision: string; rule: string | null };
  after: { decision: string; rule: string | null };
}
interface Report {
  calls: number;
  truncated: boolean;
  changed: Change[];
  totals: { replayed: number; changed: number; by_change: Record<string, number> };
}

let admin: Browser;
let since: number;
let mine: StoredAuditRecord[];

async function replay(policy: unknown, extra: Record<string, unknown> = {}): Promise<Report> {
  const res = await admin.json(REPLAY, 'POST', { policy, since, ...extra });
  expect(res.status).toBe(200);
  return (await res.json()) as Report;
}

const ids = (records: StoredAuditRecord[]): string[] => records.map((r) => r.request_id);

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return client.callTool({ name, arguments: args });
}

beforeAll(async () => {
  await sim.reset();
  admin = new Browser();
  await openAsDevUser(admin, `${ORIGIN}/admin`, 'admin@example.com', 'ops');
  const [{ client: agent }, { client: bob }] = await Promise.all([
    connectSignedIn('http', { user: 'agent@example.com', groups: 'ops' }),
    connectSignedIn('http', { user: 'bob@example.com', groups: 'ops' }),
  ]);
  since = Date.now();
  await call(agent, 'pve_start_vm', { node: 'pve1', vmid: 100, confirm: true });
  await call(agent, 'pve_start_vm', { node: 'pve1', vmid: 100, confirm: true });
  await call(agent, 'pve_start_vm', { node: 'pve1', vmid: 101, confirm: true });
  await call(bob, 'pve_start_vm', { node: 'pve1', vmid: 100, confirm: true });
  await call(agent, 'pve_list_vms', {});
  await call(agent, 'pve_delete_vm', { node: 'pve1', vmid: 102, confirm: true });
  await Promise.all([agent.close(), bob.close()]);
  mine = await auditRecords((r) => r.ts >= since && r.tool !== '(policy)', 6);
  expect(mine.map((r) => [r.user_id, r.tool, r.decision])).toEqual([
    ['agent@example.com', 'pve_start_vm', 'allow'],
    ['agent@example.com', 'pve_start_vm', 'allow'],
    ['agent@example.com', 'pve_start_vm', 'allow'],
    ['bob@example.com', 'pve_start_vm', 'allow'],
    ['agent@example.com', 'pve_list_vms', 'allow'],
    ['agent@example.com', 'pve_delete_vm', 'deny'],
  ]);
}, 60_000);

describe('replay of a draft over the recorded calls', () => {
  it('lists exactly the calls a stricter draft would refuse', async () => {
    const stricter = {
      ...DEPLOYED,
      tools: {
        ...DEPLOYED.tools,
        pve_start_vm: { deny_if: [{ path: 'args.vmid', op: 'eq', value: 100 }] },
      },
    };
    const report = await replay(stricter);
    const starts100 = mine.filter((r) => r.tool === 'pve_start_vm' && r.args.vmid === 100);
    expect(starts100).toHaveLength(3);
    expect(report.changed.map((c) => c.request_id)).toEqual(ids(starts100));
    expect(report.changed[0]).toMatchObject({
      user: 'agent@example.com',
      tool: 'pve_start_vm',
      before: { decision: 'allow', rule: null },
      after: { decision: 'deny', rule: '/tools/pve_start_vm/deny_if/0' },
    });
    expect(report.calls).toBe(6);
    expect(report.totals).toMatchObject({
      replayed: 6,
      changed: 3,
      by_change: { 'allow→deny': 3 },
    });
  });

  it('lists exactly the calls a laxer draft would let through', async () => {
    const laxer = { ...DEPLOYED, tools: { ...DEPLOYED.tools, pve_delete_vm: {} } };
    const report = await replay(laxer);
    const deletes = mine.filter((r) => r.tool === 'pve_delete_vm');
    expect(report.changed.map((c) => c.request_id)).toEqual(ids(deletes));
    expect(report.changed[0]).toMatchObject({
      before: { decision: 'deny', rule: '/tools/pve_delete_vm/action' },
      after: { decision: 'allow', rule: null },
    });
  });

  it('counts a limit in time order: the calls past the maximum, per person', async () => {
    const limited = {
      ...DEPLOYED,
      tools: {
        ...DEPLOYED.tools,
        pve_start_vm: { limits: [{ counter: 'starts', window: 'hour', max: 1, scope: 'user' }] },
      },
    };
    const report = await replay(limited);
    // The agent's second and third starts; Bob's first is his own.
    const agentStarts = mine.filter(
      (r) => r.tool === 'pve_start_vm' && r.user_id === 'agent@example.com',
    );
    expect(report.changed.map((c) => c.request_id)).toEqual(ids(agentStarts.slice(1)));
    expect(report.changed.map((c) => c.after)).toEqual([
      expect.objectContaining({ decision: 'limited', rule: '/tools/pve_start_vm/limits/0' }),
      expect.objectContaining({ decision: 'limited', rule: '/tools/pve_start_vm/limits/0' }),
    ]);
  });

  it('reports a call that would need an approval', async () => {
    const asking = {
      ...DEPLOYED,
      tools: { ...DEPLOYED.tools, pve_list_vms: { action: 'require_approval' } },
    };
    const report = await replay(asking);
    expect(report.changed.map((c) => [c.request_id, c.before.decision, c.after.decision])).toEqual(
      mine
        .filter((r) => r.tool === 'pve_list_vms')
        .map((r) => [r.request_id, 'allow', 'approval_required']),
    );
  });

  it('replays the policy that decided the calls without a single change', async () => {
    const report = await replay(DEPLOYED);
    expect(report.calls).toBe(6);
    expect(report.changed).toEqual([]);
    expect(report.totals).toMatchObject({ replayed: 6, changed: 0 });
  });

  it('replays only the newest calls up to the limit, and says so', async () => {
    const report = await replay(DEPLOYED, { limit: 2 });
    expect(report.calls).toBe(2);
    expect(report.truncated).toBe(true);
    expect(report.changed).toEqual([]);
  });

  it('refuses an invalid draft with its problems, and a person who is neither admin nor editor', async () => {
    const bad = await admin.json(REPLAY, 'POST', { policy: { version: '2' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { problems: string[] }).problems.join('\n')).toMatch(/\/version/);
    const outsider = new Browser();
    await openAsDevUser(outsider, `${ORIGIN}/admin`, 'mallory@example.com', 'ops');
    const res = await outsider.json(REPLAY, 'POST', { policy: DEPLOYED });
    expect(res.status).toBe(403);
    const since = await admin.json(REPLAY, 'POST', { policy: DEPLOYED, since: 'last week' });
    expect(since.status).toBe(400);
  });
});
