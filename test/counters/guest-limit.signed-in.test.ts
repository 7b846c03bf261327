// A `guest` limit counts the calls on one guest, whoever makes them and through whichever client,
// wherever the guest runs: "at most 3 reboots an hour for any one guest" holds across two people,
// two clients of one of them, and a migration of the guest to another node.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { openAsDevUser } from '../support/form-browser';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { call, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { usePolicy } from '../support/worker/policy';

usePolicy(
  {
    version: '1',
    default: 'deny',
    tools: {
      pve_reboot_vm: {
        limits: [{ counter: 'reboots', window: 'hour', max: 3, scope: 'guest' }],
      },
      pve_migrate_vm: {},
      pve_clone_vm: { limits: [{ counter: 'clones', window: 'hour', max: 5, scope: 'guest' }] },
    },
  },
  asEditor(),
);

const clients: Client[] = [];
let dana: Client;
let danaAgain: Client;
let ann: Client;
beforeAll(async () => {
  await sim.reset();
  await sim.config({ taskDurationMs: 50 });
  const connect = async (user: string, groups: string) => {
    const { client } = await connectSignedIn('http', { user, groups });
    clients.push(client);
    return client;
  };
  dana = await connect('dana@example.com', 'dev');
  danaAgain = await connect('dana@example.com', 'dev');
  ann = await connect('ann@example.com', 'ops');
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

const reboot = (client: Client, node: string, vmid: number) =>
  call(client, 'pve_reboot_vm', { node, vmid, confirm: true });

describe('a limit per guest', () => {
  it('counts one guest across people, clients and a migration; another guest has its own', async () => {
    expect((await reboot(dana, 'pve1', 102)).isError).toBeFalsy();
    expect((await reboot(ann, 'pve1', 102)).isError).toBeFalsy();
    const moved = await call(dana, 'pve_migrate_vm', {
      node: 'pve1',
      vmid: 102,
      target: 'pve2',
      online: true,
      confirm: true,
      wait: true,
    });
    expect(moved.isError, text(moved)).toBeFalsy();
    expect((await sim.guest(102)).node).toBe('pve2');
    // Now on pve2: the same guest, the same count.
    expect((await reboot(danaAgain, 'pve2', 102)).isError).toBeFalsy();
    await sim.clearLog();
    const fourth = await reboot(ann, 'pve2', 102);
    expect(fourth.isError).toBe(true);
    expect(fourth.structuredContent!.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_reboot_vm/limits/0',
    });
    expect(await sim.writes()).toEqual([]);
    // Another guest is counted apart.
    expect((await reboot(ann, 'pve1', 100)).isError).toBeFalsy();
  });
  it("lists on /admin each guest's counters, for the guest the tool names (a clone's source)", async () => {
    const clone = await call(ann, 'pve_clone_vm', {
      node: 'pve1',
      source_vmid: 9000,
      name: 'from-template',
      confirm: true,
    });
    expect(clone.isError, text(clone)).toBeFalsy();
    const admin = await openAsDevUser(
      new Browser(),
      'http://localhost/admin',
      'admin@example.com',
      'ops',
    );
    const rows = [...admin.html.matchAll(/<tr><td data-label="Scope"[\s\S]*?<\/tr>/g)].map((m) =>
      m[0]
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
    const row = (object: string, key: string) =>
      rows.find((r) => r.startsWith(`${object} `) && r.includes(key));
    expect(row('guest:102', 'pve_reboot_vm/ reboots')).toContain('3 / 3 per hour');
    expect(row('guest:9000', 'pve_clone_vm/ clones')).toContain('1 / 5 per hour');
  });
});
