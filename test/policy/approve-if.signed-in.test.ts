// A write to a guest tagged prod asks a lead, one to any other guest runs at once: `approve_if`
// on target.tags, for confirmed calls (`when args.confirm eq true`), read from the simulator
// before the policy decides. Reads and previews of the prod guest are not asked about.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decide } from '../support/worker/decide';
import { asEditor, connectSignedIn } from '../support/worker/oauth';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { setPolicy, usePolicy } from '../support/worker/policy';

const POLICY = {
  version: '1',
  default: 'deny',
  all_tools: {
    approve_if: [
      {
        path: 'target.tags',
        op: 'contains',
        value: 'prod',
        when: { path: 'args.confirm', op: 'eq', value: true },
        approvers: ['group:leads'],
        reason: 'A write to a guest tagged prod needs a lead.',
      },
    ],
  },
  tools: { pve_shutdown_vm: {}, pve_get_vm_status: {} },
};

usePolicy(POLICY, asEditor());

let agent: Client;
beforeAll(async () => {
  agent = (await connectSignedIn('http', { user: 'dana@example.com', groups: 'dev' })).client;
});
afterAll(() => agent.close());

const sent = () => sim.writeLines();

describe('approve_if target.tags contains prod', () => {
  beforeEach(async () => {
    await sim.reset();
    await sim.clearLog();
  });

  it('asks a lead before a write to a prod guest, and runs it once a lead approved', async () => {
    const shutdown = { node: 'pve1', vmid: 100, confirm: true };
    const pending = await call(agent, 'pve_shutdown_vm', shutdown);
    expect(pending.structuredContent!.policy).toMatchObject({
      decision: 'approval_required',
      rule: '/all_tools/approve_if/0',
      reason: 'A write to a guest tagged prod needs a lead.',
    });
    expect(await sent()).toEqual([]);
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    // Only a lead may: someone of another group may not even see it.
    expect((await decide(id, 'ann@example.com', 'approve', 'ops')).html).toContain(
      'Only the person who asked, the named approvers and administrators can see this approval.',
    );
    expect((await decide(id, 'lee@example.com', 'approve', 'dev,leads')).html).toContain(
      'Approved.',
    );
    const done = await call(agent, 'pve_shutdown_vm', { ...shutdown, approval_id: id });
    expect(done.isError, text(done)).toBeFalsy();
    expect(await sent()).toEqual(['POST /api2/json/nodes/pve1/qemu/100/status/shutdown']);
  });

  it('runs a write to a guest without the tag at once, and reads and previews of a prod guest', async () => {
    const other = await call(agent, 'pve_shutdown_vm', { node: 'pve2', vmid: 103, confirm: true });
    expect(other.isError, text(other)).toBeFalsy();
    expect(await sent()).toEqual(['POST /api2/json/nodes/pve2/qemu/103/status/shutdown']);
    // The rule is for confirmed calls: a read and a preview of the prod guest send what they
    // send under the same policy without it (measured side by side), reading no tags more.
    const readAndPreview = async () => {
      await sim.clearLog();
      const status = await call(agent, 'pve_get_vm_status', { node: 'pve1', vmid: 100 });
      expect(status.isError, text(status)).toBeFalsy();
      const preview = await call(agent, 'pve_shutdown_vm', { node: 'pve1', vmid: 100 });
      expect(preview.isError, text(preview)).toBeFalsy();
      expect(preview.structuredContent).toMatchObject({ mode: 'preview' });
      return (await sim.requestLines()).sort();
    };
    const underRule = await readAndPreview();
    const { all_tools: _rule, ...without } = POLICY;
    const plain = await setPolicy(without, asEditor());
    try {
      expect(await readAndPreview()).toEqual(underRule);
    } finally {
      await plain.restore();
    }
    expect(underRule.filter((r) => !r.startsWith('GET '))).toEqual([]);
  });
});
