// Human approval of calls the policy marks require_approval, in workerd:
//   pve_create_qemu_vm: require_approval (no approvers: the caller or an admin may approve);
//   pve_list_vms: require_approval with approvers ["group:approvers"] (never the caller).
// In the conversation (MCP elicitation, driven by the SDK client's handler) and out of band
// (the approval page, signed in through the dev IdP; then a retry with approval_id).

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Approvals } from '../../src/approvals/approvals-store';
import type { StoredAuditRecord } from '../../src/audit/record';
import type { AppEnv } from '../../src/env';
import { asEditor, Browser, connectSignedIn, type ElicitAnswer } from '../support/worker/oauth';
import { csrfOf, openAsDevUser } from '../support/form-browser';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { decide, postDecision } from '../support/worker/decide';
import { auditRecords } from '../support/worker/audit';
import { APPROVALS_POLICY } from '../support/policies/approvals';
import { usePolicy } from '../support/worker/policy';

usePolicy(APPROVALS_POLICY, asEditor());

const CREATE = {
  node: 'pve1',
  name: 'approved-vm',
  memory: 1024,
  net0: 'virtio,bridge=vmbr0',
  description: 'top s3cr3t notes',
  confirm: true,
};

beforeAll(() => sim.reset());

const auditedWith = (approvalId: string, n: number): Promise<StoredAuditRecord[]> =>
  auditRecords((r) => r.approval_id === approvalId, n);

async function dumpTable(ns: DurableObjectNamespace, name: string, table: string): Promise<string> {
  return runInDurableObject(ns.get(ns.idFromName(name)), (_i, state) =>
    JSON.stringify(state.storage.sql.exec(`SELECT * FROM ${table}`).toArray()),
  );
}

/**
 * The asker's own approval, decided by a post made by hand (their page offers no form), with the
 * CSRF token of a page they may decide (`other` asks for a listing the approvers decide): the
 * decision route refuses it by itself, and the approval still waits.
 */
async function expectOwnPostRefused(id: string, asker: string, other: string): Promise<void> {
  const { client } = await connectSignedIn('http', { user: other, groups: 'ops' });
  const theirs = (await call(client, 'pve_list_vms', { limit: 1 })).structuredContent!
    .approval_id as string;
  await client.close();
  const forged = await postDecision(id, asker, 'approve', 'ops,approvers', theirs);
  expect(forged.status).toBe(403);
  expect(forged.html).toMatch(/the policy requires someone else to approve it/);
  expect(await approvalStatus(id)).toBe('pending');
}

/** An approval's status as the approvals object stores it. */
async function approvalStatus(id: string): Promise<string | undefined> {
  const stored = JSON.parse(
    await dumpTable((env as unknown as AppEnv).APPROVALS, 'approvals', 'approvals'),
  ) as { id: string; status: string }[];
  return stored.find((a) => a.id === id)?.status;
}

describe('approval in the conversation (elicitation)', () => {
  it('asks the user with the exact Proxmox parameters, proceeds on accept, and asks again next time', async () => {
    const asked: ElicitRequest['params'][] = [];
    const accept: ElicitAnswer = (params) => {
      asked.push(params);
      return { action: 'accept', content: { approve: true } };
    };
    const { client } = await connectSignedIn(
      'http',
      { user: 'ann@example.com', groups: 'ops' },
      undefined,
      accept,
    );
    await sim.clearLog();
    const first = await call(client, 'pve_create_qemu_vm', CREATE);
    expect(first.isError, text(first)).toBeFalsy();
    expect(first.structuredContent!.mode).toBe('created');
    expect(asked).toHaveLength(1);
    const message = (asked[0] as { message: string }).message;
    expect(message).toContain("Creating VMs needs a person's OK.");
    expect(message).toContain('ann@example.com');
    expect(message).toContain('pve_create_qemu_vm, sending Proxmox these parameters');
    expect(message).toContain('net0=virtio,bridge=vmbr0');
    expect(message).not.toContain('s3cr3t');
    expect(await sim.writes()).toHaveLength(1);
    // An answer is good for one call only.
    expect(
      (await call(client, 'pve_create_qemu_vm', { ...CREATE, name: 'second-vm' })).isError,
    ).toBeFalsy();
    expect(asked).toHaveLength(2);
    // A preview sends nothing to Proxmox: no approval asked.
    const { confirm: _confirm, ...preview } = CREATE;
    expect((await call(client, 'pve_create_qemu_vm', preview)).structuredContent!.mode).toBe(
      'preview',
    );
    expect(asked).toHaveLength(2);
    // The audit trail says how these calls were approved.
    // (Other files' calls approved in their conversations are in the shared trail too.)
    const audit = await auditRecords(
      (r) => r.approval_id === 'elicitation' && r.user_id === 'ann@example.com',
      2,
    );
    expect(audit.map((r) => [r.user_id, r.decision, r.outcome, r.approval_channel])).toEqual([
      ['ann@example.com', 'allow', 'ok', 'conversation'],
      ['ann@example.com', 'allow', 'ok', 'conversation'],
    ]);
    await client.close();
  });

  it.each([
    ['decline', { action: 'decline' as const }, /declined the call/],
    ['cancel', { action: 'cancel' as const }, /cancelled the approval request/],
    [
      'accept without approving',
      { action: 'accept' as const, content: { approve: false } },
      /declined the call/,
    ],
  ])('denies on %s, sending nothing to Proxmox', async (_label, answer, message) => {
    const { client } = await connectSignedIn(
      'sse',
      { user: 'bea@example.com', groups: 'ops' },
      undefined,
      () => answer,
    );
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', CREATE);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^\[POLICY DENIED\] bea@example\.com /);
    expect(text(result)).toMatch(message);
    expect(await sim.writes()).toEqual([]);
    await client.close();
  });
});

describe('approval out of band', () => {
  it('returns an approval link; once approved on the page, the retry with approval_id creates the VM once', async () => {
    const { client } = await connectSignedIn('http', { user: 'carl@example.com', groups: 'ops' });
    await sim.clearLog();
    const pending = await call(client, 'pve_create_qemu_vm', CREATE);
    expect(pending.isError).toBe(true);
    const s = pending.structuredContent!;
    expect(s.policy).toMatchObject({
      decision: 'approval_required',
      rule: '/tools/pve_create_qemu_vm/action',
    });
    expect(s.approval_url).toBe(`http://localhost/approvals/${s.approval_id}`);
    expect(Date.parse(s.expires_at as string) - Date.now()).toBeGreaterThan(14 * 60_000);
    // Written to be relayed as is: what to tell the user, the link alone on its line, how to retry.
    const lines = text(pending).split('\n');
    expect(lines[0]).toMatch(/^\[APPROVAL REQUIRED\] .*Nothing was sent to Proxmox\.$/);
    expect(lines[1]).toMatch(/^Tell the user: a person must approve this exact call/);
    expect(lines[2]).toBe(s.approval_url);
    expect(lines[3]).toMatch(new RegExp(`approval_id: "${s.approval_id}"`));
    expect(await sim.writes()).toEqual([]);

    // Waiting: the retry is refused until someone decides.
    const early = await call(client, 'pve_create_qemu_vm', {
      ...CREATE,
      approval_id: s.approval_id,
    });
    expect(text(early)).toMatch(/has not been approved yet/);

    const page = await decide(s.approval_id as string, 'carl@example.com', 'approve');
    expect(page.status).toBe(303);
    expect(page.html).toMatch(/Approved\. The agent can now make this call once\./);
    expect(page.html).toContain('net0');
    expect(page.html).not.toContain('s3cr3t');

    const done = await call(client, 'pve_create_qemu_vm', {
      ...CREATE,
      approval_id: s.approval_id,
    });
    expect(done.isError, text(done)).toBeFalsy();
    expect(done.structuredContent!.mode).toBe('created');
    expect(await sim.writes()).toHaveLength(1);

    const replay = await call(client, 'pve_create_qemu_vm', {
      ...CREATE,
      approval_id: s.approval_id,
    });
    expect(text(replay)).toMatch(/^\[POLICY DENIED\] This approval was already used/);
    expect(await sim.writes()).toHaveLength(1);
    await client.close();

    // The audit trail has the whole story under the approval id, and no secret anywhere.
    const audit = await auditedWith(s.approval_id as string, 4);
    expect(audit.map((r) => [r.decision, r.outcome, r.approval_channel])).toEqual([
      ['approval_required', 'approval_pending', null],
      ['deny', 'denied', null],
      ['allow', 'ok', 'web'],
      ['deny', 'denied', null],
    ]);
    const stores = await Promise.all([
      dumpTable((env as unknown as AppEnv).APPROVALS, 'approvals', 'approvals'),
      dumpTable((env as unknown as AppEnv).AUDIT, 'audit', 'audit_records'),
    ]);
    for (const dump of stores) expect(dump).not.toContain('s3cr3t');
  });

  it('answers 413 to an approval form over 64 KiB sent without a length, and approves nothing', async () => {
    const { client } = await connectSignedIn('http', { user: 'ivo@example.com', groups: 'ops' });
    await sim.clearLog();
    const id = (await call(client, 'pve_create_qemu_vm', CREATE)).structuredContent!
      .approval_id as string;
    const browser = new Browser();
    const opened = await openAsDevUser(
      browser,
      `http://localhost/approvals/${id}`,
      'ivo@example.com',
      'ops',
    );
    const form = { csrf: csrfOf(opened.html), decision: 'approve' };
    const big = await browser.postChunked(`http://localhost/approvals/${id}`, {
      ...form,
      pad: 'x'.repeat(70 * 1024),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({
      error: 'payload_too_large',
      message: 'The request body is larger than 65536 bytes.',
    });
    const retry = await call(client, 'pve_create_qemu_vm', { ...CREATE, approval_id: id });
    expect(text(retry)).toMatch(/has not been approved yet/);
    expect(await sim.writes()).toEqual([]);
    // The same form at its own size is taken: the size alone was refused.
    expect((await browser.post(`http://localhost/approvals/${id}`, form)).status).toBe(303);
    await client.close();
  });

  it('refuses a denied approval, a different call, a forged id, and an expired approval', async () => {
    const { client, auth } = await connectSignedIn('http', {
      user: 'dina@example.com',
      groups: 'ops',
    });
    const ask = async (args = CREATE) =>
      (await call(client, 'pve_create_qemu_vm', args)).structuredContent!.approval_id as string;

    const denied = await ask();
    expect((await decide(denied, 'admin@example.com', 'deny')).html).toMatch(/Denied\./);
    expect(
      text(await call(client, 'pve_create_qemu_vm', { ...CREATE, approval_id: denied })),
    ).toMatch(/A person denied this call/);

    const approved = await ask();
    await decide(approved, 'dina@example.com', 'approve');
    const other = await call(client, 'pve_create_qemu_vm', {
      ...CREATE,
      memory: 4096,
      approval_id: approved,
    });
    expect(text(other)).toMatch(/for a different call/);

    // The same approval from another client of the same person is another grant.
    const second = await connectSignedIn('http', { user: 'dina@example.com', groups: 'ops' });
    expect(
      text(await call(second.client, 'pve_create_qemu_vm', { ...CREATE, approval_id: approved })),
    ).toMatch(/another client/);
    await second.client.close();

    const forged = await call(client, 'pve_create_qemu_vm', {
      ...CREATE,
      approval_id: 'AAAAAAAAAAAAAAAAAAAAAA',
    });
    expect(text(forged)).toMatch(/does not exist/);

    const expiring = await ask();
    await decide(expiring, 'dina@example.com', 'approve');
    const ns = (env as unknown as AppEnv).APPROVALS;
    await runInDurableObject(
      ns.get(ns.idFromName('approvals')) as unknown as DurableObjectStub<Approvals>,
      (_i, state) => {
        state.storage.sql.exec(
          'UPDATE approvals SET expires_at = ? WHERE id = ?',
          Date.now() - 1,
          expiring,
        );
      },
    );
    expect(
      text(await call(client, 'pve_create_qemu_vm', { ...CREATE, approval_id: expiring })),
    ).toMatch(/expired/);
    void auth;
    await client.close();
  });

  it('never lets the caller approve their own call when the policy names approvers', async () => {
    // Even with the elicitation capability, named approvers mean out of band.
    const { client } = await connectSignedIn(
      'http',
      { user: 'eve@example.com', groups: 'ops,approvers' },
      undefined,
      () => ({ action: 'accept', content: { approve: true } }),
    );
    const pending = await call(client, 'pve_list_vms', { limit: 1 });
    const id = pending.structuredContent!.approval_id as string;
    expect(id).toBeTruthy();

    const self = await decide(id, 'eve@example.com', 'approve', 'ops,approvers');
    expect(self.html).toMatch(/the policy requires someone else to approve it/);
    expect(self.html).not.toMatch(/name="decision" value="approve"/);
    await expectOwnPostRefused(id, 'eve@example.com', 'walt@example.com');

    const outsider = await decide(id, 'admin@example.com', 'approve');
    expect(outsider.html).toMatch(/Only group:approvers may approve calls to pve_list_vms/);

    const stranger = await openAsDevUser(
      new Browser(),
      `http://localhost/approvals/${id}`,
      'zoe@example.com',
      'ops',
    );
    expect(stranger.status).toBe(403);
    expect(stranger.html).toMatch(
      /Only the person who asked, the named approvers and administrators/,
    );

    const approver = await decide(id, 'fred@example.com', 'approve', 'ops,approvers');
    expect(approver.status).toBe(303);
    const listed = await call(client, 'pve_list_vms', { limit: 1, approval_id: id });
    expect(listed.isError, text(listed)).toBeFalsy();
    await client.close();
  });

  it('knows the person who asked by their verified email too: the same person under another id cannot approve their own call', async () => {
    const { client } = await connectSignedIn('http', {
      user: 'vera@example.com',
      groups: 'ops,approvers',
    });
    const id = (await call(client, 'pve_list_vms', { limit: 2 })).structuredContent!
      .approval_id as string;
    expect(id).toBeTruthy();
    // The dev IdP keeps ids apart by case (as OIDC subs are opaque), but the email is one address.
    const again = await decide(id, 'Vera@Example.COM', 'approve', 'ops,approvers');
    expect(again.status).toBe(200);
    expect(again.html).toMatch(
      /You asked for this call, and the policy requires someone else to approve it/,
    );
    expect(again.html).not.toMatch(/name="decision" value="approve"/);
    await expectOwnPostRefused(id, 'Vera@Example.COM', 'wren@example.com');
    const refused = await call(client, 'pve_list_vms', { limit: 2, approval_id: id });
    expect(text(refused)).toMatch(/has not been approved yet/);
    await client.close();
  });

  it('gives a spent approval back when the call fails before any write, and spends it once a write was sent, whatever Proxmox answered', async () => {
    const { client } = await connectSignedIn('http', { user: 'ivy@example.com', groups: 'ops' });
    const args = { node: 'pve1', vmid: 100, config: { memory: 3072 }, confirm: true };
    const id = (await call(client, 'pve_set_vm_config', args)).structuredContent!
      .approval_id as string;
    await decide(id, 'ivy@example.com', 'approve');
    const JSON_TYPE = 'application/json;charset=UTF-8';

    // The config read before the write fails: nothing was written, the approval comes back.
    await sim.clearLog();
    await sim.fault({
      method: 'GET',
      path: '^/nodes/pve1/qemu/100/config$',
      status: 500,
      contentType: JSON_TYPE,
      body: { data: null, message: 'cluster not ready\n' },
    });
    expect(text(await call(client, 'pve_set_vm_config', { ...args, approval_id: id }))).toMatch(
      /cluster not ready/,
    );
    expect(await sim.writes()).toEqual([]);

    // The write reaches Proxmox, which answers 500 (it may have done part of the work): spent.
    await sim.fault({
      method: 'POST',
      path: '^/nodes/pve1/qemu/100/config$',
      status: 500,
      contentType: JSON_TYPE,
      body: { data: null, message: 'lock timeout\n' },
    });
    const failed = await call(client, 'pve_set_vm_config', { ...args, approval_id: id });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/lock timeout/);
    expect(await sim.writes()).toHaveLength(1);

    const again = await call(client, 'pve_set_vm_config', { ...args, approval_id: id });
    expect(text(again)).toMatch(/already used/);
    expect(await sim.writes()).toHaveLength(1);
    const stored = JSON.parse(
      await dumpTable((env as unknown as AppEnv).APPROVALS, 'approvals', 'approvals'),
    ) as { id: string; status: string }[];
    expect(stored.find((a) => a.id === id)?.status).toBe('used');
    await client.close();
  });

  it('asks once for the same call and caps what waits', async () => {
    const { client } = await connectSignedIn('http', { user: 'hugo@example.com', groups: 'ops' });
    const args = { ...CREATE, name: 'retry-vm' };
    const first = (await call(client, 'pve_create_qemu_vm', args)).structuredContent!.approval_id;
    const again = (await call(client, 'pve_create_qemu_vm', args)).structuredContent!.approval_id;
    expect(again).toBe(first);
    // Decided, so it no longer waits: 20 others may.
    await decide(first as string, 'hugo@example.com', 'deny');

    const waiting = [];
    for (let i = 0; i < 21; i++)
      waiting.push(await call(client, 'pve_create_qemu_vm', { ...CREATE, name: `queued-${i}` }));
    expect(
      waiting.slice(0, 20).every((r) => typeof r.structuredContent!.approval_id === 'string'),
    ).toBe(true);
    expect(text(waiting[20]!)).toMatch(
      /Too many calls from this client are already waiting for approval/,
    );
    await client.close();
  });

  it("refuses a decision posted without the page's CSRF token", async () => {
    const { client } = await connectSignedIn('http', { user: 'gus@example.com', groups: 'ops' });
    const id = (await call(client, 'pve_create_qemu_vm', CREATE)).structuredContent!
      .approval_id as string;
    const browser = new Browser();
    await openAsDevUser(browser, `http://localhost/approvals/${id}`, 'gus@example.com', 'ops');
    const forged = await browser.post(`http://localhost/approvals/${id}`, {
      csrf: 'guess',
      decision: 'approve',
    });
    expect(forged.status).toBe(403);
    const crossSite = await browser.post(`http://localhost/approvals/${id}`, {
      decision: 'approve',
    });
    expect(crossSite.status).toBe(403);
    const page = await openAsDevUser(
      browser,
      `http://localhost/approvals/${id}`,
      'gus@example.com',
      'ops',
    );
    const unknown = await browser.post('http://localhost/approvals/AAAAAAAAAAAAAAAAAAAAAA', {
      csrf: csrfOf(page.html),
      decision: 'approve',
    });
    expect(unknown.status).toBe(404);
    await client.close();
  });
});
