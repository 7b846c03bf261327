// A revoked grant's 2026-07-28 token asks nobody for anything: a call that needed a person's
// approval before the revocation creates none after it, and the one it asked for before is
// cancelled with the grant (see also test/auth/revoked-2026.signed-in.test.ts).
// Policy (test/support/policies/eras.ts): pve_stop_vm needs a person's approval.

import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { runtimeOf } from '../../src/compose/runtime';
import type { AppEnv } from '../../src/env';
import { sim } from '../support/worker/sim';
import { ENVELOPE, rawCall, revokeOnAdmin, tokenFor } from '../support/worker/eras';
import { ERAS_POLICY } from '../support/policies/eras';
import { usePolicy } from '../support/worker/policy';
import { asEditor } from '../support/worker/oauth';

usePolicy(ERAS_POLICY, asEditor());

/** A client that cannot be asked in the conversation: it gets the approval page's link. */
const NO_ELICITATION = { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': {} };
const STOP = { node: 'pve1', vmid: 101, confirm: true };

describe("a revoked grant's 2026-07-28 token", () => {
  it('creates no approval: 401, its earlier one cancelled, nothing sent to Proxmox', async () => {
    const pending = async () =>
      (
        await runtimeOf(env as unknown as AppEnv)
          .stores.approvals()
          .pending(Date.now())
      ).map((a) => a.id);
    // Before revocation such a call asks for an approval (so the check below could see one).
    const token = await tokenFor('vera@example.com', 'Vera laptop');
    const before = await pending();
    const asked = await rawCall(token, 'pve_stop_vm', STOP, {}, 1, { envelope: NO_ELICITATION });
    expect(JSON.stringify(asked.result?.structuredContent)).toContain(
      '"decision":"approval_required"',
    );
    const withOne = await pending();
    expect(withOne).toHaveLength(before.length + 1);

    await revokeOnAdmin('Vera laptop');
    await sim.clearLog();
    // Another guest, so that a new approval would be needed (the first one's is still pending).
    const refused = await rawCall(token, 'pve_stop_vm', { ...STOP, vmid: 100 }, {}, 2, {
      envelope: NO_ELICITATION,
    });
    expect(refused.status).toBe(401);
    expect(refused.result).toBeUndefined();
    // The revocation cancelled what the grant was waiting for; the refused call asked for nothing.
    expect(await pending()).toEqual(before);
    expect(await sim.requests()).toEqual([]);
  });
});
