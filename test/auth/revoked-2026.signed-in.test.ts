// A 2026-07-28 client has no session for revocation to end: its token is what stops working. After
// a grant is revoked on /admin, or once its token has expired, the next call gets the OAuth
// library's 401, and nothing reaches Proxmox or counts against the person's rate limits.
// Policy (test/support/policies/auth.ts): pve_list_vms 3/hour per person and 2/hour per grant.

import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../src/env';
import { rawCall, revokeOnAdmin, tokenFor } from '../support/worker/eras';
import { sim } from '../support/worker/sim';
import { asEditor, ORIGIN_IP } from '../support/worker/oauth';
import { PER_USER_POLICY } from '../support/policies/auth';
import { usePolicy } from '../support/worker/policy';
import { freshDeployment } from '../support/worker/fresh';

// Limits count per person from zero: calls made in the files before this one do not count here.
freshDeployment();

usePolicy(PER_USER_POLICY, asEditor());

const listed = (r: Awaited<ReturnType<typeof rawCall>>) =>
  r.status === 200 && r.result !== undefined && !r.result.isError;

describe("a 2026-07-28 client's token", () => {
  it("after its grant is revoked: 401 with the library's challenge, no Proxmox request, no rate-limit slot taken", async () => {
    const revoked = await tokenFor('rita@example.com', 'Rita laptop');
    // The person's 1st call of 3 this hour, this grant's 1st of 2.
    expect(listed(await rawCall(revoked, 'pve_list_vms', {}))).toBe(true);
    await revokeOnAdmin('Rita laptop');
    await sim.clearLog();
    for (let i = 0; i < 3; i++) {
      const refused = await rawCall(revoked, 'pve_list_vms', {});
      expect(refused.status).toBe(401);
      expect(refused.challenge).toMatch(/^Bearer .*error="invalid_token"/);
      expect(refused.result).toBeUndefined();
    }
    expect(await sim.requests()).toEqual([]);
    // The refused calls took none of the person's slots: a new grant still has the 2nd and 3rd.
    const renewed = await tokenFor('rita@example.com', 'Rita laptop again');
    expect(listed(await rawCall(renewed, 'pve_list_vms', {}))).toBe(true);
    expect(listed(await rawCall(renewed, 'pve_list_vms', {}))).toBe(true);
    const limited = await rawCall(renewed, 'pve_list_vms', {});
    expect(limited.result?.isError).toBe(true);
    expect(JSON.stringify(limited.result?.structuredContent)).toContain('"decision":"limited"');
  });

  it('once its record has expired: 401, no Proxmox request', async () => {
    const token = await tokenFor('sam@example.com', 'Sam laptop');
    expect(listed(await rawCall(token, 'pve_list_vms', {}))).toBe(true);
    // The token's record, as the OAuth library keeps it, now expired a second ago.
    const kv = (env as unknown as AppEnv).OAUTH_KV;
    const [userId, grantId] = token.split(':');
    const keys = (await kv.list({ prefix: `token:${userId}:${grantId}:` })).keys;
    expect(keys).toHaveLength(1);
    const record = (await kv.get(keys[0]!.name, 'json')) as { expiresAt: number };
    await kv.put(
      keys[0]!.name,
      JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 1 }),
    );
    await sim.clearLog();
    const refused = await rawCall(token, 'pve_list_vms', {});
    expect(refused.status).toBe(401);
    expect(refused.result).toBeUndefined();
    expect(await sim.requests()).toEqual([]);
  });

  it("only on the origin it was issued for: at another origin it gets the library's audience refusal", async () => {
    const token = await tokenFor('tom@example.com', 'Tom laptop');
    expect(listed(await rawCall(token, 'pve_list_vms', {}))).toBe(true);
    await sim.clearLog();
    const elsewhere = await rawCall(token, 'pve_list_vms', {}, {}, 1, { origin: ORIGIN_IP });
    expect(elsewhere.status).toBe(401);
    expect(await sim.requests()).toEqual([]);
  });
});
