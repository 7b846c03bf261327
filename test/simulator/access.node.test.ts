// Tokens as people (simulator/access/acl.ts): ACLs on paths with roles and propagation, a guest's
// pool granting what its pool's ACL grants, groups, privilege separation (a token holds what its
// own ACLs and its user's both grant), PVE's 403 for a missing privilege, empty lists for a token
// that may see nothing, and tasks that name the token that started them.

import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, getData, useSimulator, waitTask } from '../support/sim-harness.ts';

const client = useSimulator('access');
const { alice, bob, carol, dave } = SIMULATOR_TOKENS;
type Token = { id: string; secret: string };
type Permissions = Record<string, Record<string, number>>;

const guests = async (token: Token) => {
  const res = await client().api('GET', '/cluster/resources', { token, query: { type: 'vm' } });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as { vmid: number }[]).map((g) => g.vmid);
};

const privilegesOn = async (userid: string, path: string): Promise<string[]> => {
  const map = await getData<Permissions>(client(), '/access/permissions', { path, userid });
  return Object.keys(map[path] ?? {});
};

describe('alice: the lab pool only, her token privilege-separated', () => {
  it("lists only lab's guests, starts one as herself, and gets PVE's 403 on a prod guest", async () => {
    const c = client();
    expect(await guests(alice)).toEqual([104]);
    const start = await c.api('POST', '/nodes/pve2/qemu/104/status/start', { token: alice });
    expect(start.status, start.text).toBe(200);
    expect(String(start.body.data)).toMatch(/:qmstart:104:alice@pve!mcp:$/);
    const ended = await waitTask(c, start.body.data);
    // As PVE reports a token's task: its user, and the token beside it.
    expect(ended.status).toMatchObject({ user: 'alice@pve', tokenid: 'mcp', exitstatus: 'OK' });
    expectError(
      await c.api('POST', '/nodes/pve1/qemu/100/status/stop', { token: alice }),
      403,
      'Permission check failed (/vms/100, VM.PowerMgmt)',
    );
    expect((await c.guest(100)).status).toBe('running');
  });

  it('holds on a lab guest what both she and her token hold: not VM.Allocate, which she has', async () => {
    const token = await privilegesOn(alice.id, '/vms/104');
    expect(token).toContain('VM.PowerMgmt');
    expect(token).toContain('VM.Audit');
    expect(token).not.toContain('VM.Allocate');
    expect(await privilegesOn('alice@pve', '/vms/104')).toContain('VM.Allocate');
    expect(await privilegesOn(alice.id, '/vms/100')).toEqual([]);
    expectError(
      await client().api('DELETE', '/nodes/pve2/qemu/104', { token: alice }),
      403,
      'Permission check failed (/vms/104, VM.Allocate)',
    );
  });
});

describe('bob: group ops, every guest', () => {
  it('stops a prod guest, the task his token’s', async () => {
    const c = client();
    expect(await guests(bob)).toHaveLength(13);
    const stop = await c.api('POST', '/nodes/pve1/qemu/100/status/stop', { token: bob });
    expect(stop.status, stop.text).toBe(200);
    const ended = await waitTask(c, stop.body.data);
    expect(ended.status).toMatchObject({ user: 'bob@pve', tokenid: 'mcp', exitstatus: 'OK' });
    expect(String(stop.body.data)).toMatch(/:qmstop:100:bob@pve!mcp:$/);
    // The group's Datastore.AllocateSpace is not his token's to use.
    expect(await privilegesOn('bob@pve', '/storage/local-lvm')).toContain(
      'Datastore.AllocateSpace',
    );
    expect(await privilegesOn(bob.id, '/storage/local-lvm')).toEqual([]);
  });
});

describe('dave: a token granted much, whose user holds nothing', () => {
  it('gets empty lists, not 403s, no permissions, and 403 for anything it does', async () => {
    const c = client();
    expect(await guests(dave)).toEqual([]);
    expect((await c.api('GET', '/nodes/pve1/qemu', { token: dave })).body.data).toEqual([]);
    expect((await c.api('GET', '/access/permissions', { token: dave })).body.data).toEqual({});
    expectError(
      await c.api('POST', '/nodes/pve1/qemu/100/status/stop', { token: dave }),
      403,
      'Permission check failed (/vms/100, VM.PowerMgmt)',
    );
  });
});

describe('carol: a token without privilege separation', () => {
  it('is its user: VM 104 alone, not what lies below or beside it', async () => {
    const c = client();
    expect(await guests(carol)).toEqual([104]);
    const all = await getData<Permissions>(c, '/access/permissions', { userid: carol.id });
    expect(Object.keys(all)).toEqual(['/vms/104']);
    // Held there, not below it: the entry does not propagate (0).
    expect(all['/vms/104']).toMatchObject({ 'VM.PowerMgmt': 0, 'VM.Allocate': 0 });
    const start = await c.api('POST', '/nodes/pve2/qemu/104/status/start', { token: carol });
    expect(start.status, start.text).toBe(200);
    expectError(
      await c.api('POST', '/nodes/pve2/qemu/103/status/stop', { token: carol }),
      403,
      'Permission check failed (/vms/103, VM.PowerMgmt)',
    );
  });
});
