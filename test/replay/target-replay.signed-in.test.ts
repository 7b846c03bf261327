// Replaying a draft's `target.` rules over recorded calls: a call whose record keeps the facts
// its policy read (the guest's tags) is decided again on them; one whose record keeps none is
// reported unknown, naming the fact, never guessed. The report, a shadow's disagreements and the
// policy console show the facts each such call was judged on.

import { beforeAll, describe, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/record';
import { openAsDevUser, replayInConsole } from '../support/form-browser';
import { auditRecords } from '../support/worker/audit';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { shadowPolicy, usePolicy } from '../support/worker/policy';
import { sim } from '../support/worker/sim';

const ORIGIN = 'http://localhost';

// In force while the calls are made: a rule on the tags of pve_start_vm's guest (so its records
// keep them), none on pve_shutdown_vm's.
usePolicy(
  {
    version: '1',
    default: 'deny',
    tools: {
      pve_start_vm: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'legacy' }] },
      pve_shutdown_vm: {},
    },
  },
  asEditor(),
);

const DRAFT = {
  version: '1',
  default: 'deny',
  tools: {
    pve_start_vm: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }] },
    pve_shutdown_vm: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'lab' }] },
  },
};

interface Change {
  request_id: string;
  before: { decision: string };
  after: { decision: string; rule: string | null; unknown?: string };
  guest?: Record<string, unknown>;
}

let admin: Browser;
let since: number;
let calls: StoredAuditRecord[];

beforeAll(async () => {
  await sim.reset();
  admin = new Browser();
  await openAsDevUser(admin, `${ORIGIN}/admin`, 'admin@example.com', 'ops');
  const { client } = await connectSignedIn('http', { user: 'agent@example.com', groups: 'ops' });
  since = Date.now();
  for (const [name, vmid, node] of [
    ['pve_start_vm', 100, 'pve1'],
    ['pve_start_vm', 103, 'pve2'],
    ['pve_shutdown_vm', 104, 'pve2'],
  ] as const) {
    const result = await client.callTool({ name, arguments: { node, vmid, confirm: true } });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  }
  await client.close();
  calls = await auditRecords((r) => r.ts >= since && r.tool !== '(policy)', 3);
  expect(calls.map((r) => [r.tool, r.decision, r.args['(target)'] ?? null])).toEqual([
    ['pve_start_vm', 'allow', { tags: ['prod', 'web'] }],
    ['pve_start_vm', 'allow', { tags: ['ci'] }],
    ['pve_shutdown_vm', 'allow', null],
  ]);
}, 60_000);

describe('replaying target rules', () => {
  it('decides a call again on the facts its record keeps, and one without them as unknown', async () => {
    const res = await admin.json(`${ORIGIN}/admin/api/policy/replay`, 'POST', {
      policy: DRAFT,
      since,
    });
    expect(res.status).toBe(200);
    const report = (await res.json()) as { changed: Change[] };
    const [prod, , lab] = calls;
    expect(report.changed).toEqual([
      {
        request_id: prod!.request_id,
        ts: prod!.ts,
        user: 'agent@example.com',
        tool: 'pve_start_vm',
        before: { decision: 'allow', rule: null },
        after: {
          decision: 'deny',
          rule: '/tools/pve_start_vm/deny_if/0',
          reason: 'Denied by policy: target.tags contains "prod".',
        },
        guest: { tags: ['prod', 'web'] },
      },
      {
        request_id: lab!.request_id,
        ts: lab!.ts,
        user: 'agent@example.com',
        tool: 'pve_shutdown_vm',
        before: { decision: 'allow', rule: null },
        after: expect.objectContaining({
          decision: 'unknown',
          rule: '/tools/pve_shutdown_vm/deny_if/0',
          unknown: 'target.tags',
        }),
      },
    ]);
  });

  it('shows in the policy console the facts each changed call was judged on', async () => {
    const html = await replayInConsole(
      admin,
      ORIGIN,
      { user: 'admin@example.com', groups: 'ops' },
      DRAFT,
      since,
    );
    const rows = [...html.matchAll(/<tr><td>[\s\S]*?<\/tr>/g)].map((m) => m[0]);
    const row = (id: string) => rows.find((r) => r.includes(id)) ?? '';
    expect(row(calls[0]!.request_id)).toContain('<td class="guest">tags: prod, web</td>');
    expect(row(calls[2]!.request_id)).toContain('<td class="guest"><small>not kept</small></td>');
    expect(html).not.toContain(calls[1]!.request_id);
  });
  it('keeps with a shadow disagreement the facts the call was judged on, and the console shows them', async () => {
    const shadow = await shadowPolicy(DRAFT, asEditor());
    try {
      const { client } = await connectSignedIn('http', {
        user: 'agent@example.com',
        groups: 'ops',
      });
      const since = Date.now();
      const start = await client.callTool({
        name: 'pve_start_vm',
        arguments: { node: 'pve1', vmid: 100, confirm: true },
      });
      await client.close();
      expect(start.isError, JSON.stringify(start.content)).toBeFalsy();
      type Seen = { ts: number; tool: string; shadow: { decision: string }; guest?: unknown };
      let seen: Seen | undefined;
      for (let i = 0; i < 50 && !seen; i++) {
        const res = await admin.json(`${ORIGIN}/admin/api/policy/shadow`, 'GET');
        const body = (await res.json()) as { disagreements: Seen[] };
        seen = body.disagreements.find((d) => d.ts >= since && d.tool === 'pve_start_vm');
        if (!seen) await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen).toMatchObject({
        shadow: { decision: 'deny' },
        guest: { tags: ['prod', 'web'] },
      });
      const page = await openAsDevUser(admin, `${ORIGIN}/admin/policy`, 'admin@example.com', 'ops');
      expect(page.html).toContain('<td class="guest">tags: prod, web</td>');
    } finally {
      await shadow.stop();
    }
  });
});
