// A command inside a guest that needs a lead's approval: the agent is told to wait, the page shows
// the exact argv, and once a lead approved, the same call runs the program once and returns its
// output; the approval is then spent. A command with stdin the policy marks sensitive is refused
// before anyone is asked: an approver would see "[redacted]" and approve what they cannot read.

import { describe, expect, it } from 'vitest';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { openAsDevUser } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { decide } from '../support/worker/decide';
import { auditRecords } from '../support/worker/audit';
import { APPROVALS_POLICY } from '../support/policies/approvals';
import { usePolicy } from '../support/worker/policy';

usePolicy(APPROVALS_POLICY, asEditor());

const EXEC = {
  node: 'pve1',
  vmid: 100,
  command: ['uname', '-r'],
  confirm: true,
};

describe('a command in a guest, approved by a lead', () => {
  it('waits for the approval, shows the argv, runs once after it', async () => {
    await sim.reset();
    const { client } = await connectSignedIn('http', {
      user: 'ann@example.com',
      groups: 'ops',
      // Commands inside guests: the person ticks it, it is never ticked for them.
      scopes: ['pve:read', 'pve:guest'],
    });
    const pending = await call(client, 'pve_guest_exec', EXEC);
    expect(pending.isError).toBe(true);
    expect(text(pending)).toMatch(/^\[APPROVAL REQUIRED\] A command in a guest needs a lead\./);
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    expect(await sim.writes()).toEqual([]);

    const page = await openAsDevUser(
      new Browser(),
      `http://localhost/approvals/${id}`,
      'lead1@example.com',
      'ops,leads',
    );
    expect(page.html).toContain(
      '<h1 id="approval-title">Run &quot;uname&quot; &quot;-r&quot; in VM 100 (web01) on pve1?</h1>',
    );
    expect(page.html).toMatch(/<code>command\.0<\/code><\/th><td><code class="uri">uname<\/code>/);
    // What it touches: the VM's facts.
    expect(page.html).toMatch(
      /<tr data-fact="status"><th scope="row">State<\/th><td class="uri">running<\/td>/,
    );

    expect((await decide(id, 'lead1@example.com', 'approve', 'ops,leads')).html).toContain(
      'Approved.',
    );
    const done = await call(client, 'pve_guest_exec', { ...EXEC, approval_id: id });
    expect(done.isError, text(done)).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ mode: 'exited', exitcode: 0 });
    expect((done.structuredContent as { stdout: string }).stdout).toMatch(/^\d+\.\d+/);
    expect((await sim.writes()).map((w) => w.path)).toEqual([
      '/api2/json/nodes/pve1/qemu/100/agent/exec',
    ]);
    const again = await call(client, 'pve_guest_exec', { ...EXEC, approval_id: id });
    expect(again.isError).toBe(true);
    expect((await sim.writes()).length).toBe(1);
  });
});

describe('a command with stdin the policy hides from approvers', () => {
  it('is refused before anyone is asked, and nothing is sent or stored as pending', async () => {
    await sim.reset();
    await sim.clearLog();
    const { client } = await connectSignedIn('http', {
      user: 'ann@example.com',
      groups: 'ops',
      scopes: ['pve:read', 'pve:guest'],
    });
    const refused = await call(client, 'pve_guest_exec', {
      ...EXEC,
      command: ['cat'],
      input_data: 'db-password=hunter2\n',
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(
      /input_data holds, which an approver would not see \(shown "\[redacted\]" or cut\): input_data \(the policy marks it sensitive, and it is what the call runs, reads or writes\)\. Nobody was asked and nothing was sent\./,
    );
    expect(refused.structuredContent).not.toHaveProperty('approval_id');
    expect(JSON.stringify(refused)).not.toContain('hunter2');
    expect(await sim.writes()).toEqual([]);
    const records = await auditRecords(
      (r) =>
        r.tool === 'pve_guest_exec' && r.user_id === 'ann@example.com' && r.approval_id === null,
    );
    expect(records.at(-1)).toMatchObject({
      decision: 'deny',
      outcome: 'denied',
      rule: '/tools/pve_guest_exec/action',
    });
    expect(JSON.stringify(records)).not.toContain('hunter2');
  });
});
