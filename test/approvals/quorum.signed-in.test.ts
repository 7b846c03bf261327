// A quorum (approvals_required: 2, approvers group:leads) for deleting a guest: one lead's yes is
// not enough, the same lead twice is not two, the person who asked cannot count even as a lead,
// one denial ends it; after the second lead's yes the call goes through, once.

import { describe, expect, it } from 'vitest';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { openAsDevUser } from '../support/form-browser';
import { call } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { decide as decideAs, postDecision } from '../support/worker/decide';
import { APPROVALS_POLICY } from '../support/policies/approvals';
import { usePolicy } from '../support/worker/policy';

usePolicy(APPROVALS_POLICY, asEditor());

const DELETE = { node: 'pve2', vmid: 104, confirm: true };

/** A lead (or `groups`) decides on the approval page. */
const decide = (id: string, user: string, decision: 'approve' | 'deny', groups = 'ops,leads') =>
  decideAs(id, user, decision, groups);

async function ask(user: string, groups = 'ops') {
  const { client } = await connectSignedIn('http', { user, groups });
  const pending = await call(client, 'pve_delete_vm', DELETE);
  expect(pending.isError).toBe(true);
  const { approval_id: id } = pending.structuredContent as { approval_id: string };
  return { client, id };
}

describe('two leads must approve a delete', () => {
  it('waits for two different leads, never counts the asker, then runs once', async () => {
    await sim.reset();
    // Lee is a lead and asks: Lee cannot count towards the quorum.
    const { client, id } = await ask('lee@example.com', 'ops,leads');
    const own = await decide(id, 'lee@example.com', 'approve');
    expect(own.html).toMatch(/You asked for this call; 2 other people must approve it\./);
    // Nor by posting the decision by hand, with the CSRF token of another delete Lee may decide.
    const spare = await ask('max@example.com');
    await spare.client.close();
    const forgedOwn = await postDecision(id, 'lee@example.com', 'approve', 'ops,leads', spare.id);
    expect(forgedOwn.status).toBe(403);

    // The page reads as the decision it asks for.
    const page = await openAsDevUser(
      new Browser(),
      `http://localhost/approvals/${id}`,
      'lead1@example.com',
      'ops,leads',
    );
    expect(page.html).toContain('<h1 id="approval-title">Destroy VM 104 (win11-lab) on pve2?</h1>');
    expect(page.html).toMatch(
      /through <strong>Test MCP client<\/strong> <small>\(a name the client gave itself/,
    );
    expect(page.html).toMatch(/expires in 1[45] minutes \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)/);
    const first = await decide(id, 'lead1@example.com', 'approve');
    expect(first.status).toBe(303);
    expect(first.html).toContain('Your approval is recorded; 1 more needed from other people.');
    expect(first.html).toMatch(/Approvals: <strong>1 of 2<\/strong> — by lead1@example.com/);
    // /admin shows how far it got.
    const admin = await openAsDevUser(
      new Browser(),
      'http://localhost/admin',
      'admin@example.com',
      'ops',
    );
    expect(admin.html).toContain('approvals 1 of 2 (by lead1@example.com)');
    // Not yet: the agent's retry is refused, nothing sent.
    const early = await call(client, 'pve_delete_vm', { ...DELETE, approval_id: id });
    expect(early.isError).toBe(true);
    expect(await sim.writes()).toEqual([]);
    // The same lead again is not a second approval (nor under another spelling of the email).
    const again = await decide(id, 'LEAD1@example.com', 'approve');
    expect(again.html).toMatch(
      /You have approved it already; it needs 1 more approval from other people\./,
    );
    const forgedTwice = await postDecision(
      id,
      'LEAD1@example.com',
      'approve',
      'ops,leads',
      spare.id,
    );
    expect(forgedTwice.status).toBe(403);
    // Still one of two (Lee's and the second post counted for nothing): the retry is refused.
    expect((await decide(id, 'lead1@example.com', 'approve')).html).toMatch(
      /Approvals: <strong>1 of 2<\/strong> — by lead1@example.com/,
    );
    expect((await call(client, 'pve_delete_vm', { ...DELETE, approval_id: id })).isError).toBe(
      true,
    );
    // Someone who is not a lead cannot count either.
    const outsider = await decide(id, 'ops-person@example.com', 'approve', 'ops');
    expect(outsider.status).toBe(403);

    const second = await decide(id, 'lead2@example.com', 'approve');
    expect(second.html).toContain('Approved. The agent can now make this call once.');
    expect(second.html).toMatch(
      /Approvals: <strong>2 of 2<\/strong> — by lead1@example.com, lead2@example.com/,
    );
    const done = await call(client, 'pve_delete_vm', { ...DELETE, approval_id: id });
    expect(done.isError, JSON.stringify(done.structuredContent)).toBeFalsy();
    expect((await sim.writes()).map((w) => `${w.method} ${w.path}`)).toEqual([
      'DELETE /api2/json/nodes/pve2/qemu/104',
    ]);
    const twice = await call(client, 'pve_delete_vm', { ...DELETE, approval_id: id });
    expect(twice.isError).toBe(true);
    expect(await sim.writes()).toHaveLength(1);
    await client.close();
  });

  it('ends at one denial, whatever was approved before', async () => {
    await sim.reset();
    const { client, id } = await ask('ann@example.com');
    await decide(id, 'lead1@example.com', 'approve');
    const denied = await decide(id, 'lead2@example.com', 'deny');
    expect(denied.html).toContain('Denied.');
    // Nobody can approve it any more: the page says denied and offers no form.
    const late = await decide(id, 'lead3@example.com', 'approve');
    expect(late.html).toMatch(/Status: <strong>denied<\/strong> — by lead2@example.com/);
    expect(late.html).not.toContain('name="decision"');
    const retry = await call(client, 'pve_delete_vm', { ...DELETE, approval_id: id });
    expect(retry.isError).toBe(true);
    expect(await sim.writes()).toEqual([]);
    await client.close();
  });
});
