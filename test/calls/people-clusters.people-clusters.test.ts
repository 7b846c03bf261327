// Two clusters where PVE_IDENTITIES names prod only (this project's: lab, the default, with the
// cluster's own token for everyone; prod, where group ops acts with bob's token and nobody else
// has one). A list across both leaves prod out for a person without a token there, naming it
// and sending it nothing; a call to prod alone is refused before anything is sent; a person with
// a token there lists both, each cluster with its own token. What each cluster was sent, and
// with which token, is read from its own request log.

import { beforeEach, describe, expect, inject, it } from 'vitest';
import { auditRecords } from '../support/worker/audit';
import { call, text } from '../support/worker/mcp';
import { aliceAndBob, tokenOf } from '../support/worker/people';
import { simCluster } from '../support/worker/sim';

const lab = simCluster('lab');
const prod = simCluster('prod');
const TOKENS = inject('simulatorTokens') as Record<'admin' | 'bob', { id: string }>;

describe('PVE_IDENTITIES on one cluster of two', () => {
  const people = aliceAndBob();
  beforeEach(async () => {
    for (const cluster of [lab, prod]) {
      await cluster.reset();
      await cluster.clearLog();
    }
  });

  it('lists lab for a person with no token on prod, names prod as left out, and sends it nothing', async () => {
    const since = Date.now();
    const list = await call(people.alice, 'pve_list_vms', { limit: 1000 });
    expect(list.isError, text(list)).toBeFalsy();
    const out = list.structuredContent as {
      guests: { cluster: string }[];
      refused?: { cluster: string; reason: string }[];
    };
    expect(new Set(out.guests.map((g) => g.cluster))).toEqual(new Set(['lab']));
    expect(out.refused).toEqual([
      {
        cluster: 'prod',
        reason:
          'No Proxmox identity for alice@example.com on cluster prod: PVE_IDENTITIES maps no token to them, and names no fallback. Ask an operator to add one. Nothing was sent to Proxmox.',
      },
    ]);
    expect(text(list)).toContain(
      'Cluster prod is not listed: No Proxmox identity for alice@example.com on cluster prod',
    );
    expect(await prod.requests()).toEqual([]);
    // Lab, which PVE_IDENTITIES does not name, is read with the cluster's own token.
    expect((await lab.requests()).map(tokenOf)).toEqual([TOKENS.admin.id]);
    // The record names the token that acted: lab's own.
    const [record] = await auditRecords(
      (r) => r.ts >= since && r.user_email === 'alice@example.com' && r.tool === 'pve_list_vms',
    );
    expect(record).toMatchObject({ decision: 'allow', outcome: 'ok', pve_token: TOKENS.admin.id });
  });

  it('refuses a call to prod alone before anything is sent', async () => {
    const refused = await call(people.alice, 'pve_get_vm_status', {
      node: 'pve1',
      vmid: 100,
      cluster: 'prod',
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain(
      '[NO PROXMOX IDENTITY] No Proxmox identity for alice@example.com on cluster prod:',
    );
    expect(await prod.requests()).toEqual([]);
    expect(await lab.requests()).toEqual([]);
  });

  it('lists both for a person with a token on prod, each cluster read with its own token', async () => {
    const since = Date.now();
    const list = await call(people.bob, 'pve_list_vms', { limit: 1000 });
    expect(list.isError, text(list)).toBeFalsy();
    const out = list.structuredContent as { guests: { cluster: string }[]; refused?: unknown };
    expect(new Set(out.guests.map((g) => g.cluster))).toEqual(new Set(['lab', 'prod']));
    expect(out.refused).toBeUndefined();
    expect((await lab.requests()).map(tokenOf)).toEqual([TOKENS.admin.id]);
    expect((await prod.requests()).map(tokenOf)).toEqual([TOKENS.bob.id]);
    // The record names both tokens that acted, each once.
    const [record] = await auditRecords(
      (r) => r.ts >= since && r.user_email === 'bob@example.com' && r.tool === 'pve_list_vms',
    );
    expect(record?.pve_token?.split(' ').sort()).toEqual([TOKENS.admin.id, TOKENS.bob.id].sort());
  });
});
