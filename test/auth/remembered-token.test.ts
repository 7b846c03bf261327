// A 2026-07-28 call on a token this isolate has seen accepted starts before its token's record is
// read again (src/auth/remembered-tokens.ts); these prove it is still checked on every call, and
// that nothing acts for a token that fails: a revoked grant or an expired token gets the OAuth
// library's 401, Proxmox gets no request, the rate-limit slots the call took meanwhile are given
// back, and the audit trail records the attempt. Each test first makes one call that the library
// accepts (so the token is remembered), then one on the remembered path.
// Policy (auth-dev project): pve_list_vms 3/hour per person and 2/hour per grant.

import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../src/env';
import { rawCall, revokeOnAdmin, tokenFor } from '../eras/helpers';
import { auditRecords } from '../worker/helpers/audit';
import { sim } from '../worker/helpers/sim';
import { ORIGIN_IP } from './helpers/oauth';

const listed = (r: Awaited<ReturnType<typeof rawCall>>) => r.status === 200 && r.result !== undefined && !r.result.isError;

describe('a remembered token is confirmed on every 2026-07-28 call', () => {
  it('after its grant is revoked: 401 from the OAuth library, no Proxmox request, the attempt audited, its rate-limit slots given back', async () => {
    const revoked = await tokenFor('rita@example.com', 'Rita laptop');
    // Accepted by the library (and so remembered): the person's 1st of 3, this grant's 1st of 2.
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
    // The first attempt ran on the remembered path (the library alone would not have let it in
    // at all) and was stopped there, before Proxmox; the token was then forgotten, so the others
    // met the library at the door and left no record.
    const grantId = revoked.split(':')[1]!;
    await new Promise((r) => setTimeout(r, 300));
    const stopped = await auditRecords((r) => r.grant_id === grantId && r.outcome !== 'ok');
    expect(stopped.map((r) => [r.outcome, r.error_kind, r.upstream_status, r.decision])).toEqual([['error', 'unauthorized', null, 'none']]);
    // The slots that attempt took while the token was checked went back: a new grant of the same
    // person still has the person's 2nd and 3rd call of the hour (a slot kept would leave one).
    const renewed = await tokenFor('rita@example.com', 'Rita laptop again');
    expect(listed(await rawCall(renewed, 'pve_list_vms', {}))).toBe(true);
    expect(listed(await rawCall(renewed, 'pve_list_vms', {}))).toBe(true);
    const limited = await rawCall(renewed, 'pve_list_vms', {});
    expect(limited.result?.isError).toBe(true);
    expect(JSON.stringify(limited.result?.structuredContent)).toContain('"decision":"limited"');
  });

  it('whose record has expired: 401, no Proxmox request', async () => {
    const token = await tokenFor('sam@example.com', 'Sam laptop');
    expect(listed(await rawCall(token, 'pve_list_vms', {}))).toBe(true);
    // The token's record, as the OAuth library keeps it, now expired a second ago.
    const kv = (env as unknown as AppEnv).OAUTH_KV;
    const [userId, grantId] = token.split(':');
    const keys = (await kv.list({ prefix: `token:${userId}:${grantId}:` })).keys;
    expect(keys).toHaveLength(1);
    const record = (await kv.get(keys[0]!.name, 'json')) as { expiresAt: number };
    await kv.put(keys[0]!.name, JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 1 }));
    await sim.clearLog();
    const refused = await rawCall(token, 'pve_list_vms', {});
    expect(refused.status).toBe(401);
    expect(refused.result).toBeUndefined();
    expect(await sim.requests()).toEqual([]);
  });

  it('only on the origin it was accepted on: the same token at another origin gets the library\'s audience refusal', async () => {
    const token = await tokenFor('tom@example.com', 'Tom laptop');
    expect(listed(await rawCall(token, 'pve_list_vms', {}))).toBe(true);
    expect(listed(await rawCall(token, 'pve_list_vms', {}))).toBe(true);
    await sim.clearLog();
    const elsewhere = await rawCall(token, 'pve_list_vms', {}, {}, 1, { origin: ORIGIN_IP });
    expect(elsewhere.status).toBe(401);
    expect(await sim.requests()).toEqual([]);
  });
});
