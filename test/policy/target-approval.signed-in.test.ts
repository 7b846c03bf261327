// An approval is for the guest as it was judged: the facts a `target.` rule read (pool, tags,
// template) are shown to the approver, kept in the audit trail, and bound to the approval, so a
// tag added between the approval and the approved call makes the call ask again; nothing is sent.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decide } from '../support/worker/decide';
import { openAsDevUser } from '../support/form-browser';
import { auditRecords } from '../support/worker/audit';
import { asEditor, Browser, connectSignedIn, type ElicitAnswer } from '../support/worker/oauth';
import { call, ORIGIN, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { usePolicy } from '../support/worker/policy';

usePolicy(
  {
    version: '1',
    default: 'deny',
    tools: {
      pve_stop_vm: {
        action: 'require_approval',
        approvers: ['group:leads'],
        reason: 'A lead approves each hard stop.',
        deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }],
      },
      // Asked in the conversation: no named approvers.
      pve_reboot_vm: {
        action: 'require_approval',
        deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }],
      },
    },
  },
  asEditor(),
);

let agent: Client;
beforeAll(async () => {
  agent = (await connectSignedIn('http', { user: 'dana@example.com', groups: 'dev' })).client;
});
afterAll(() => agent.close());

describe('an approval of a call judged on its guest', () => {
  beforeEach(async () => {
    await sim.reset();
    await sim.clearLog();
  });

  const stop = { node: 'pve2', vmid: 103, confirm: true };

  async function askAndApprove(): Promise<string> {
    const pending = await call(agent, 'pve_stop_vm', stop);
    expect(pending.isError, text(pending)).toBe(true);
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    expect((await decide(id, 'lee@example.com', 'approve', 'dev,leads')).html).toContain(
      'Approved.',
    );
    return id;
  }

  it('shows the approver the facts the call was judged on, and keeps them in the audit trail', async () => {
    const since = Date.now();
    const pending = await call(agent, 'pve_stop_vm', stop);
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    // What the approver is shown of the guest (its blast radius) reuses the policy's read.
    const reads = (await sim.requestLines()).filter((r) => r.endsWith('/cluster/resources'));
    expect(reads).toEqual(['GET /api2/json/cluster/resources']);
    const page = await openAsDevUser(
      new Browser(),
      `${ORIGIN}/approvals/${id}`,
      'lee@example.com',
      'dev,leads',
    );
    expect(page.html).toContain('(target)');
    expect(page.html).toContain('{&quot;tags&quot;:[&quot;ci&quot;]}');
    const [record] = await auditRecords((r) => r.ts >= since && r.approval_id === id);
    expect(record!.args['(target)']).toEqual({ tags: ['ci'] });
  });

  it('runs when the guest is as it was judged', async () => {
    const id = await askAndApprove();
    await sim.clearLog();
    const done = await call(agent, 'pve_stop_vm', { ...stop, approval_id: id });
    expect(done.isError, text(done)).toBeFalsy();
    expect(await sim.writeLines()).toEqual(['POST /api2/json/nodes/pve2/qemu/103/status/stop']);
    // The facts were read once for the approved call: the approval is bound to what was read.
    const reads = (await sim.requests()).filter((r) => r.path === '/api2/json/cluster/resources');
    expect(reads).toHaveLength(1);
  });

  it('asks again, sending nothing, when a tag was added after the approval', async () => {
    const id = await askAndApprove();
    // Not the tag the rule denies: any change to the tags is a guest the person did not judge.
    const tagged = await sim.api('PUT', '/nodes/pve2/qemu/103/config', { tags: 'ci;nightly' });
    expect(tagged.status).toBe(200);
    await sim.clearLog();
    const again = await call(agent, 'pve_stop_vm', { ...stop, approval_id: id });
    expect(again.isError).toBe(true);
    expect(text(again)).toContain(
      'This approval is for a different call (tool or arguments differ). Approvals are bound to the exact call.',
    );
    // Asked without the spent approval, the call is put to a person again, on the guest as it is.
    const asked = await call(agent, 'pve_stop_vm', stop);
    expect(asked.structuredContent!.policy).toMatchObject({ decision: 'approval_required' });
    const { approval_id: next } = asked.structuredContent as { approval_id: string };
    expect(next).not.toBe(id);
    expect(await sim.writes()).toEqual([]);
  });

  it('is refused outright once the added tag is one the rule denies', async () => {
    const id = await askAndApprove();
    await sim.api('PUT', '/nodes/pve2/qemu/103/config', { tags: 'ci;prod' });
    await sim.clearLog();
    const again = await call(agent, 'pve_stop_vm', { ...stop, approval_id: id });
    expect(again.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_stop_vm/deny_if/0',
    });
    expect(await sim.writes()).toEqual([]);
  });
});

describe('an approval given in the conversation', () => {
  it('is for the guest as it was when the person was asked: a tag added before they answer refuses the call', async () => {
    await sim.reset();
    let asked = 0;
    // The person is asked; while they read, someone tags the guest in Proxmox; then they accept.
    const acceptAfterTagging: ElicitAnswer = async () => {
      asked++;
      await sim.api('PUT', '/nodes/pve2/qemu/103/config', { tags: 'ci;nightly' });
      return { action: 'accept', content: { approve: true } };
    };
    const { client } = await connectSignedIn(
      'http',
      { user: 'ann@example.com', groups: 'ops' },
      undefined,
      acceptAfterTagging,
    );
    try {
      await sim.clearLog();
      const result = await call(client, 'pve_reboot_vm', {
        node: 'pve2',
        vmid: 103,
        confirm: true,
      });
      expect(asked).toBe(1);
      expect(result.structuredContent!.policy).toMatchObject({
        decision: 'deny',
        rule: '/tools/pve_reboot_vm/action',
      });
      expect(text(result)).toBe(
        "[POLICY DENIED] The guest's tags changed since the call was approved: the approval is for the guest as it was judged. Nothing was sent. Call again without approval_id to ask for a new approval.",
      );
      // The only write is the test's own tagging.
      expect(await sim.writeLines()).toEqual(['PUT /api2/json/nodes/pve2/qemu/103/config']);
    } finally {
      await client.close();
    }
  });
});
