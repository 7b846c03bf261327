// readTargetFacts against the simulator over HTTP, with the real Proxmox client: a call that shows
// the guest's status has its facts from that one read, and a fresh read (after a person's answer)
// keeps nothing the call read before it, whichever request answers the facts then.

import { describe, expect, it } from 'vitest';
import { isNoSuchGuest, Unread } from '../../src/policy/conditions.ts';
import type { PveClient } from '../../src/proxmox/client.ts';
import { guestAt, readGuestState } from '../../src/proxmox/guest-state.ts';
import { readTargetFacts, TARGET_FACTS_BUDGET_MS } from '../../src/proxmox/target-facts.ts';
import { pveFor, useSimulator } from '../support/sim-harness.ts';

const client = useSimulator('facts');

const VM100 = { node: 'pve1', vmid: 100, vm_type: 'qemu' as const };
const sent = (pve: PveClient) => pve.calls.map((c) => `${c.method} ${c.path}`);

describe("a guest's facts", () => {
  it('come from the status the call shows, read once', async () => {
    const pve = pveFor(client());
    const facts = await readTargetFacts(pve, guestAt(VM100), new Set(['tags', 'template']));
    expect(facts).toEqual({ tags: ['prod', 'web'], template: false });
    const shown = await readGuestState(pve, VM100, true);
    expect(shown.status).toBe('running');
    expect(sent(pve)).toEqual(['GET /nodes/pve1/qemu/100/status/current']);
    // A write's state is its own read, never the shared one.
    await readGuestState(pve, VM100);
    expect(sent(pve)).toHaveLength(2);
  });

  it('read from the status the call shows wait for it as the call would, past their budget', async () => {
    const sim = client();
    const pve = pveFor(sim);
    // Slower than the facts' budget, within the client's 10 s: the call without a rule waits.
    await sim.fault({
      path: '^/nodes/pve1/qemu/100/status/current$',
      delayMs: TARGET_FACTS_BUDGET_MS + 500,
      times: 3,
    });
    // From the status alone, and after the list (a pool rule beside a qmpstatus one).
    const own = await readTargetFacts(pve, guestAt(VM100), new Set(['tags']));
    expect(own).toEqual({ tags: ['prod', 'web'] });
    const listed = await readTargetFacts(pve, guestAt(VM100), new Set(['qmpstatus', 'pool']), true);
    expect(listed).toEqual({ qmpstatus: 'running', pool: 'prod' });
    // A call that does not show the status gives it the budget only.
    const write = await readTargetFacts(pve, { vmid: 100 }, new Set(['qmpstatus']), true);
    expect(write.qmpstatus).toBeInstanceOf(Unread);
    expect((write.qmpstatus as Unread).why).toMatch(/did not answer .* within 3 s/);
  }, 20_000);

  it('read fresh, keep nothing the call read before, also where the list answers them', async () => {
    const sim = client();
    const pve = pveFor(sim);
    await readTargetFacts(pve, guestAt(VM100), new Set(['tags']));
    expect((await readGuestState(pve, VM100, true)).name).toBe('web01');
    // While the person reads the question, the guest is renamed; the policy now in force also
    // reaches its pool, which only the cluster's list answers.
    const renamed = await sim.api('PUT', '/nodes/pve1/qemu/100/config', {
      form: { name: 'web01-new' },
    });
    expect(renamed.status).toBe(200);
    const fresh = await readTargetFacts(pve, guestAt(VM100), new Set(['tags', 'pool']), true);
    expect(fresh).toEqual({ tags: ['prod', 'web'], pool: 'prod' });
    // What the call then shows is the guest as it is, not as it was before the answer.
    expect((await readGuestState(pve, VM100, true)).name).toBe('web01-new');
    expect(sent(pve)).toEqual([
      'GET /nodes/pve1/qemu/100/status/current',
      'GET /cluster/resources',
      'GET /nodes/pve1/qemu/100/status/current',
    ]);
  });

  it('of a guest that does not exist: unread, or, for a call that needs none, none, said so', async () => {
    const pve = pveFor(client());
    // Proxmox is asked whether its id is in use: it is not.
    const refused = await readTargetFacts(pve, { vmid: 4242 }, new Set(['tags', 'pool']));
    expect((refused.tags as Unread).why).toBe('guest 4242 does not exist');
    expect(sent(pve)).toEqual(['GET /cluster/resources', 'GET /cluster/nextid']);
    // A backup's deletion, a task's status: of no guest.
    const none = await readTargetFacts(pve, { vmid: 4242, gone: true }, new Set(['tags', 'pool']));
    expect(Object.keys(none)).toEqual([]);
    expect(isNoSuchGuest(none)).toBe(true);
    // Where the call makes the guest, the facts of the one it makes.
    const made = await readTargetFacts(
      pve,
      { vmid: 4242, absent: { tags: [], template: false } },
      new Set(['tags']),
    );
    expect(made).toEqual({ tags: [] });
    expect(isNoSuchGuest(made)).toBe(false);
  });

  it("of a guest a backup's config makes are read as Proxmox reads the file", async () => {
    const sim = client();
    const restore = (vmid: number) => ({
      vmid,
      absent: { node: 'pve1' },
      archive: { node: 'pve1', volume: 'local:backup/vzdump-qemu-100-2026_12_01-02_00_00.vma.zst' },
    });
    const answer = (config: string) =>
      sim.fault({
        path: '^/nodes/pve1/vzdump/extractconfig$',
        status: 200,
        contentType: 'application/json;charset=UTF-8',
        body: { data: config },
      });
    const wanted = new Set(['tags', 'name', 'template']);
    // Spaces around a value, a boolean PVE spells "yes", a snapshot's section after the guest's.
    await answer(
      '#described\nname: web01  \ntags: Web;ci\ntemplate: yes\n\n[before]\ntags: prod\n',
    );
    expect(await readTargetFacts(pveFor(sim), restore(4242), wanted)).toEqual({
      name: 'web01',
      tags: ['ci', 'web'],
      template: true,
    });
    await answer('hostname: ct01\ntemplate: maybe\n');
    const odd = await readTargetFacts(pveFor(sim), restore(4242), wanted);
    expect(odd).toMatchObject({ name: 'ct01', tags: [] });
    expect((odd.template as Unread).why).toBe(
      'the backup\'s config: template "maybe" is no boolean',
    );
    // Restored over a guest (VM 103, tagged ci): its tags with the backup's added.
    await answer('tags: prod\n');
    const over = pveFor(sim);
    expect(await readTargetFacts(over, restore(103), new Set(['tags', 'node']))).toEqual({
      tags: ['ci', 'prod'],
      node: 'pve2',
    });
    expect(sent(over)).toEqual(['GET /cluster/resources', 'GET /nodes/pve1/vzdump/extractconfig']);
    // A backup that cannot be read leaves those tags unknown, never the guest's alone.
    await sim.fault({
      path: '^/nodes/pve1/vzdump/extractconfig$',
      status: 403,
      reason: 'Permission check failed (/vms/100, VM.Backup)',
      contentType: 'application/json;charset=UTF-8',
      body: { data: null },
    });
    const hidden = await readTargetFacts(pveFor(sim), restore(103), new Set(['tags', 'node']));
    expect(hidden.node).toBe('pve2');
    expect((hidden.tags as Unread).why).toMatch(/^the backup's config: .*VM\.Backup/);
  });

  it("of a guest the server's token may not see are unread, never none: its id is in use", async () => {
    // alice's token sees the lab pool's guests only: VM 100 (pool prod) is not listed for it.
    const pve = pveFor(client(), 'alice');
    const facts = await readTargetFacts(pve, { vmid: 100 }, new Set(['tags']));
    expect(facts.tags).toBeInstanceOf(Unread);
    expect((facts.tags as Unread).why).toBe(
      "guest 100 is not among the cluster's resources this server's API token sees, but its id is in use",
    );
    expect(isNoSuchGuest(facts)).toBe(false);
    // So too where the call would make a guest at that id: it is there, unseen.
    const over = await readTargetFacts(
      pve,
      { vmid: 100, absent: { tags: [], template: false } },
      new Set(['tags']),
    );
    expect(over.tags).toBeInstanceOf(Unread);
  });

  it("of the guest a restore makes are its backup's: its tags, name and template flag, read only for a rule", async () => {
    const sim = client();
    const pve = pveFor(sim);
    const listed = await sim.api('GET', '/nodes/pve1/storage/local/content', {
      query: { content: 'backup', vmid: 100 },
    });
    const volume = String((listed.body.data as { volid: string }[])[0]!.volid);
    const restore = {
      vmid: 4242,
      absent: { node: 'pve1', vm_type: 'qemu' },
      archive: { node: 'pve1', volume },
    };
    const made = await readTargetFacts(pve, restore, new Set(['tags', 'name', 'template', 'node']));
    expect(made).toEqual({ tags: ['prod', 'web'], name: 'web01', template: false, node: 'pve1' });
    expect(sent(pve)).toEqual([
      'GET /cluster/resources',
      'GET /cluster/nextid',
      'GET /nodes/pve1/vzdump/extractconfig',
    ]);
    // A rule on its node alone reads no backup.
    const onNode = pveFor(sim);
    expect(await readTargetFacts(onNode, restore, new Set(['node']))).toEqual({ node: 'pve1' });
    expect(sent(onNode)).not.toContain('GET /nodes/pve1/vzdump/extractconfig');
    // A backup this server's token may not read: those facts are unread, never "none".
    const refused = await readTargetFacts(pveFor(sim, 'audit'), restore, new Set(['tags', 'node']));
    expect(refused.node).toBe('pve1');
    expect(refused.tags).toBeInstanceOf(Unread);
    expect((refused.tags as Unread).why).toMatch(
      /^the backup's config: .*Datastore\.AllocateSpace/,
    );
  });

  it('of a guest not listed, where Proxmox does not say whether its id is in use, are unread', async () => {
    const sim = client();
    const pve = pveFor(sim);
    await sim.fault({
      path: '^/cluster/nextid$',
      status: 500,
      contentType: 'application/json;charset=UTF-8',
      body: { data: null, message: "cfs-lock 'file-vmids' error: got lock request timeout\n" },
    });
    const facts = await readTargetFacts(pve, { vmid: 4242 }, new Set(['tags']));
    expect(facts.tags).toBeInstanceOf(Unread);
    expect((facts.tags as Unread).why).toMatch(
      /^guest 4242 is not among the cluster's resources this server's API token sees; whether guest 4242 exists: .*got lock request timeout/,
    );
    expect(isNoSuchGuest(facts)).toBe(false);
  });

  it("come from the guest's entry whatever its load figures say, which are no fact", async () => {
    const sim = client();
    const pve = pveFor(sim);
    // A load figure no schema of a number takes: the entry is the guest's all the same.
    await sim.fault({
      path: '^/cluster/resources$',
      status: 200,
      contentType: 'application/json;charset=UTF-8',
      body: {
        data: [
          {
            id: 'qemu/100',
            type: 'qemu',
            vmid: 100,
            node: 'pve1',
            name: 'web01',
            pool: 'prod',
            tags: 'web;prod',
            status: 'running',
            template: 0,
            maxmem: 'lots',
            cpu: 'busy',
          },
        ],
      },
    });
    const facts = await readTargetFacts(pve, { vmid: 100 }, new Set(['pool', 'tags', 'template']));
    expect(facts).toEqual({ pool: 'prod', tags: ['prod', 'web'], template: false });
    expect(sent(pve)).toEqual(['GET /cluster/resources']);
  });
});
