// `"approval": "web"`: a person approves on the approval page, never in the conversation, even
// when the client could be asked there (an agent relays the conversation; it could answer for
// the person). The audit trail says which channel approved.

import { describe, expect, it } from 'vitest';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { csrfOf, openAsDevUser } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { auditRecords } from '../support/worker/audit';
import { APPROVALS_WEB_POLICY } from '../support/policies/approvals-web';
import { usePolicy } from '../support/worker/policy';

usePolicy(APPROVALS_WEB_POLICY, asEditor());

describe('"approval": "web"', () => {
  it('sends an eliciting client the link instead of asking in the conversation', async () => {
    let asked = 0;
    const { client } = await connectSignedIn(
      'http',
      { user: 'wes@example.com', groups: 'ops' },
      undefined,
      () => {
        asked++;
        return { action: 'accept', content: { approve: true } };
      },
    );
    await sim.reset();
    const args = { node: 'pve1', vmid: 3100, name: 'web-approved', confirm: true };
    const pending = await call(client, 'pve_create_qemu_vm', args);
    expect(asked).toBe(0);
    expect(pending.isError).toBe(true);
    const s = pending.structuredContent!;
    expect(text(pending)).toMatch(
      /^\[APPROVAL REQUIRED\] A person approves new VMs on the approval page\./,
    );
    expect(text(pending).split('\n')).toContain(s.approval_url);
    expect(await sim.writes()).toEqual([]);

    const browser = new Browser();
    const opened = await openAsDevUser(browser, s.approval_url as string, 'wes@example.com', 'ops');
    expect(opened.status).toBe(200);
    const decided = await browser.post(s.approval_url as string, {
      csrf: csrfOf(opened.html),
      decision: 'approve',
    });
    expect(decided.status).toBe(303);

    const done = await call(client, 'pve_create_qemu_vm', { ...args, approval_id: s.approval_id });
    expect(done.isError, text(done)).toBeFalsy();
    expect(asked).toBe(0);
    expect((await sim.writes()).map((w) => w.params!.vmid)).toEqual(['3100']);
    const records = await auditRecords((r) => r.approval_id === s.approval_id, 2);
    expect(records.map((r) => [r.outcome, r.approval_channel])).toEqual([
      ['approval_pending', null],
      ['ok', 'web'],
    ]);
    await client.close();
  });
});
