// Approvals of a grant that no longer exists are offered to nobody. Revoking a grant on /admin
// asks first (the question changes nothing), then revokes it and cancels the approvals it was
// waiting for; an approval whose grant went another way (expired, revoked elsewhere) shows as
// "grant revoked" on /admin and on its page, and approving it is refused.
// Policy (test/support/policies/approvals.ts): pve_create_qemu_vm needs a person's approval; ADMIN_USERS=admin@example.com.

import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { GRANT_REVOKED } from '../../src/approvals/rules';
import { runtimeOf } from '../../src/compose/runtime';
import type { AppEnv } from '../../src/env';
import {
  asEditor,
  Browser,
  connectSignedIn,
  formField,
  grantRow,
  TestOAuthClient,
} from '../support/worker/oauth';
import { csrfOf, openAsDevUser } from '../support/form-browser';
import { call, ORIGIN } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { APPROVALS_POLICY } from '../support/policies/approvals';
import { usePolicy } from '../support/worker/policy';

usePolicy(APPROVALS_POLICY, asEditor());

const runtime = () => runtimeOf(env as unknown as AppEnv);
const kv = (env as unknown as AppEnv).OAUTH_KV;
const approval = (id: string) => runtime().stores.approvals().get(id);
const grantKey = (user: string, grant: string) => `grant:${user}:${grant}`;
const CREATE = { node: 'pve1', name: 'waits-for-ok', memory: 1024, confirm: true };

/** A call of `user`'s client `clientName` waiting for approval: its id and grant. */
async function waitingCall(user: string, clientName: string) {
  const { client } = await connectSignedIn(
    'http',
    { user, groups: 'ops' },
    new TestOAuthClient(clientName),
  );
  const asked = await call(client, 'pve_create_qemu_vm', CREATE);
  const id = asked.structuredContent!.approval_id as string;
  expect(id).toBeTruthy();
  const { grant_id, user_id } = (await approval(id))!;
  return { client, id, grant: grant_id, user: user_id };
}

/** /admin as the administrator: its HTML, and the browser signed in to it. */
async function adminPage(admin = new Browser()) {
  const { status, html } = await openAsDevUser(
    admin,
    `${ORIGIN}/admin`,
    'admin@example.com',
    'ops',
  );
  expect(status).toBe(200);
  return { admin, html };
}

/** The offered count in the heading equals the Approve buttons on the page. */
function offered(html: string): number {
  const heading = Number(/<h2 id="approvals">Pending approvals \((\d+)\)<\/h2>/.exec(html)![1]);
  expect(html.match(/value="approve"/g)?.length ?? 0).toBe(heading);
  return heading;
}

beforeAll(() => sim.reset());

describe('revoking a grant on /admin', () => {
  it('asks first; confirmed, it revokes the grant and cancels its pending approval, which can no longer be approved', async () => {
    const rita = await waitingCall('rita@example.com', "Rita's laptop");
    const { admin, html } = await adminPage();
    expect(html).toContain('aria-label="Approve pve_create_qemu_vm for rita@example.com"');
    const { field } = grantRow(html, 'Rita&#39;s laptop');
    expect(field('grant')).toBe(rita.grant);

    // The question: the person, the client, the grant and the approval that will be cancelled.
    const query = new URLSearchParams({ user: field('user'), grant: field('grant') });
    const asked = await admin.get(`${ORIGIN}/admin/grants/revoke?${query}`);
    expect(asked.status).toBe(200);
    const question = await asked.text();
    expect(question).toContain('Rita&#39;s laptop');
    expect(question).toContain('rita@example.com');
    expect(question).toContain(rita.grant);
    expect(question).toContain('<strong>1 pending approval</strong> of it is cancelled');
    // Asking changed nothing: the grant is there, its approval still waits.
    expect(await kv.get(grantKey(rita.user, rita.grant))).not.toBeNull();
    expect((await approval(rita.id))!.status).toBe('pending');

    const revoked = await admin.post(`${ORIGIN}/admin/grants/revoke`, {
      csrf: formField(question, 'csrf'),
      user: formField(question, 'user'),
      grant: formField(question, 'grant'),
      confirm: formField(question, 'confirm'),
    });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toMatch(/^\/admin\?revoked=\d+&cancelled=1#grants$/);
    expect(await kv.get(grantKey(rita.user, rita.grant))).toBeNull();
    expect(await approval(rita.id)).toMatchObject({
      status: 'revoked',
      decided_by: 'admin@example.com',
    });

    // /admin no longer offers it, nor lists the grant; approving it is refused.
    const after = await (
      await admin.get(`${ORIGIN}${revoked.headers.get('location')!.replace(/#.*/, '')}`)
    ).text();
    expect(after).toContain('1 pending approval cancelled.');
    expect(after).not.toContain('Approve pve_create_qemu_vm for rita@example.com');
    expect(after).not.toContain('Rita&#39;s laptop');
    offered(after);
    const approve = await admin.post(`${ORIGIN}/approvals/${rita.id}`, {
      csrf: csrfOf(after),
      decision: 'approve',
    });
    expect(approve.status).toBe(403);
    expect(await approve.text()).toContain(GRANT_REVOKED.replace(/'/g, '&#39;'));
    expect((await approval(rita.id))!.status).toBe('revoked');
    // And the client's token is dead.
    await expect(call(rita.client, 'pve_list_vms', {})).rejects.toThrow();
  });
});

describe('an approval whose grant is gone another way', () => {
  it('shows as grant revoked on /admin and on its page, and approving it is refused', async () => {
    const sam = await waitingCall('sam@example.com', "Sam's desktop");
    const live = await waitingCall('tia@example.com', "Tia's desktop");
    // The grant goes without /admin (it expired, or another deployment revoked it).
    await kv.delete(grantKey(sam.user, sam.grant));

    const { admin, html } = await adminPage();
    const row = html.split('<tr>').find((r) => r.includes(`/approvals/${sam.id}"`))!;
    expect(row).toContain('grant revoked');
    expect(row).not.toContain('value="approve"');
    expect(html).not.toContain('Approve pve_create_qemu_vm for sam@example.com');
    expect(html).toContain('Approve pve_create_qemu_vm for tia@example.com');
    offered(html);

    const shown = await (await admin.get(`${ORIGIN}/approvals/${sam.id}`)).text();
    expect(shown).toContain('Status: <strong>grant revoked</strong>');
    expect(shown).not.toContain('name="decision"');

    const approve = await admin.post(`${ORIGIN}/approvals/${sam.id}`, {
      csrf: csrfOf(html),
      decision: 'approve',
    });
    expect(approve.status).toBe(403);
    // Refused, and cancelled for good; the live grant's approval is untouched.
    expect((await approval(sam.id))!.status).toBe('revoked');
    expect((await approval(live.id))!.status).toBe('pending');
    await live.client.close();
  });
});
