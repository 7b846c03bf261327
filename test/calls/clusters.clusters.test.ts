// One server, two clusters (this project's PVE_CLUSTERS: lab, the default, and prod, two clusters
// of the simulator seeded alike, so VM 100 on pve1 is on both). A call goes where its `cluster`
// says and nowhere else, and the policy reads which: what each cluster was sent is read from its
// own request log.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditRecords } from '../support/worker/audit';
import { call, text, workerFetch } from '../support/worker/mcp';
import { approveAsDevUser, csrfOf, openAsDevUser, replayInConsole } from '../support/form-browser';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { usePolicy } from '../support/worker/policy';
import { simCluster } from '../support/worker/sim';

const lab = simCluster('lab');
const prod = simCluster('prod');
const STOP_100 = 'POST /api2/json/nodes/pve1/qemu/100/status/stop';
const SHUTDOWN_100 = 'POST /api2/json/nodes/pve1/qemu/100/status/shutdown';

usePolicy(
  {
    version: '1',
    default: 'allow',
    tools: {
      // At most one reboot an hour for any one guest: VM 100 on lab and VM 100 on prod are two.
      pve_reboot_vm: {
        limits: [{ counter: 'reboots', window: 'hour', max: 1, scope: 'guest' }],
      },
      // One storage listing an hour on each cluster, whoever asks: each cluster's counter apart.
      pve_list_storage: {
        limits: [
          { counter: 'storage', window: 'hour', max: 1, scope: 'global', cluster: ['lab', 'prod'] },
        ],
      },
      // Bob's node lists on prod are counted on prod's own counter: a list of every cluster
      // took no slot there, so it leaves prod out for him.
      pve_list_nodes: {
        limits: [
          {
            counter: 'prod-nodes',
            window: 'hour',
            max: 50,
            scope: 'global',
            cluster: 'prod',
            principals: ['bob@example.com'],
          },
        ],
      },
      // Bob's status reads need an administrator's approval, on every cluster.
      pve_get_cluster_status: {
        approve_if: [
          {
            path: 'args.cluster',
            op: 'in',
            value: ['lab', 'prod'],
            principals: ['bob@example.com'],
            approvers: ['admin@example.com'],
          },
        ],
      },
      // Containers on prod are not listed (a list of every cluster asks for each).
      pve_list_vms: {
        deny_if: [
          {
            path: 'args.cluster',
            op: 'eq',
            value: 'prod',
            when: { path: 'args.type', op: 'eq', value: 'lxc' },
            reason: "prod's containers are not listed",
          },
        ],
      },
      // Guests are made on prod only: asked again, after a vmid collision, with the same cluster.
      pve_create_qemu_vm: { require: [{ path: 'args.cluster', op: 'eq', value: 'prod' }] },
      // Suspending needs an administrator's approval: given for one cluster, it is for that one.
      pve_suspend_vm: { action: 'require_approval', approvers: ['admin@example.com'] },
      // The cluster a guest is on, as a fact of the guest: known without asking Proxmox...
      pve_list_snapshots: {
        deny_if: [{ path: 'target.cluster', op: 'eq', value: 'prod', reason: 'Not on prod.' }],
      },
      // ... and beside the facts that are read (VM 100 is tagged web on both).
      pve_create_snapshot: {
        deny_if: [
          {
            path: 'target.cluster',
            op: 'eq',
            value: 'prod',
            when: { path: 'target.tags', op: 'contains', value: 'web' },
            reason: "prod's web guests are snapshotted by their pipeline.",
          },
        ],
      },
      pve_stop_vm: {
        // Met only if args.cluster is filled in for a call that leaves cluster out.
        require: [{ path: 'args.cluster', op: 'in', value: ['lab', 'prod'] }],
        deny_if: [
          {
            path: 'args.cluster',
            op: 'eq',
            value: 'prod',
            reason: 'Agents do not stop guests on prod.',
          },
        ],
      },
    },
  },
  asEditor(),
);

describe('two clusters behind one endpoint', () => {
  let client: Client;
  beforeAll(async () => {
    ({ client } = await connectSignedIn('http', { user: 'alice@example.com', groups: 'ops' }));
  });
  afterAll(() => client.close());
  beforeEach(async () => {
    for (const cluster of [lab, prod]) {
      await cluster.reset();
      await cluster.clearLog();
    }
  });

  it('lists cluster on every tool, one of the configured names, the first the default', async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(30);
    for (const tool of tools) {
      expect(tool.inputSchema.properties?.cluster, tool.name).toEqual({
        type: 'string',
        enum: ['lab', 'prod'],
        description: 'Cluster: lab, prod (default lab).',
      });
      expect(tool.inputSchema.required ?? []).not.toContain('cluster');
    }
  });

  it('reads the cluster it names, and the default without one', async () => {
    const onProd = await call(client, 'pve_get_vm_status', {
      node: 'pve1',
      vmid: 100,
      cluster: 'prod',
    });
    expect(onProd.isError).toBeFalsy();
    expect(await prod.requestLines()).toEqual([
      'GET /api2/json/nodes/pve1/qemu/100/status/current',
    ]);
    expect(await lab.requestLines()).toEqual([]);
    await prod.clearLog();
    await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100 });
    expect(await lab.requestLines()).toEqual(['GET /api2/json/nodes/pve1/qemu/100/status/current']);
    expect(await prod.requestLines()).toEqual([]);
  });

  it("names the cluster's own settings when its Proxmox refuses the token", async () => {
    await prod.fault({ method: 'GET', path: '^/nodes/pve1/qemu/100/status/current$', status: 401 });
    try {
      const refused = await call(client, 'pve_get_vm_status', {
        node: 'pve1',
        vmid: 100,
        cluster: 'prod',
      });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(
        /Proxmox rejected the API token \(401 [^)]*\)\. Check cluster prod's token_id and PROD_TOKEN_SECRET/,
      );
      expect(text(refused)).not.toMatch(/PVE_TOKEN|PVE_BASE_URL/);
    } finally {
      await prod.clearFaults();
    }
  });

  it('shuts VM 100 down only where cluster says: the other cluster is sent nothing', async () => {
    // The preview says which cluster it would go to.
    const preview = await call(client, 'pve_shutdown_vm', {
      node: 'pve1',
      vmid: 100,
      cluster: 'prod',
    });
    expect(preview.structuredContent).toMatchObject({ mode: 'preview', cluster: 'prod' });
    expect(text(preview)).toMatch(/^Cluster prod: Preview only: nothing was sent to Proxmox\.\n/);
    expect(await prod.writeLines()).toEqual([]);
    const shut = await call(client, 'pve_shutdown_vm', {
      node: 'pve1',
      vmid: 100,
      cluster: 'prod',
      confirm: true,
    });
    expect(shut.isError, text(shut)).toBeFalsy();
    // What it did says where.
    expect(text(shut)).toMatch(/^Cluster prod: /);
    expect(await prod.writeLines()).toEqual([SHUTDOWN_100]);
    expect(await lab.requestLines()).toEqual([]);
    expect((await lab.guest(100)).status).toBe('running');
  });

  it('stops VM 100 only where cluster says: a rule on args.cluster refuses prod, lab is stopped, prod sent nothing', async () => {
    const stop = { node: 'pve1', vmid: 100, confirm: true };
    const refused = await call(client, 'pve_stop_vm', { ...stop, cluster: 'prod' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_stop_vm/deny_if/0',
    });
    expect(text(refused)).toContain('Agents do not stop guests on prod.');
    expect(await prod.requestLines()).toEqual([]);
    expect(await lab.requestLines()).toEqual([]);

    // Without cluster, the default (lab): args.cluster is filled in.
    const done = await call(client, 'pve_stop_vm', stop);
    expect(done.isError, text(done)).toBeFalsy();
    expect(await lab.writeLines()).toEqual([STOP_100]);
    expect(await prod.requestLines()).toEqual([]);

    // The audit record keeps which cluster each call was for.
    const records = await auditRecords(
      (r) => r.tool === 'pve_stop_vm' && r.user_email === 'alice@example.com',
      2,
    );
    expect(records.map((r) => [r.args.cluster, r.decision])).toEqual([
      ['prod', 'deny'],
      ['lab', 'allow'],
    ]);
  });

  it('judges target.cluster as the cluster the call is for, read from nowhere', async () => {
    const guest = { node: 'pve1', vmid: 100 };
    const listed = await call(client, 'pve_list_snapshots', { ...guest, cluster: 'prod' });
    expect(listed.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_list_snapshots/deny_if/0',
    });
    // Nothing read to know it: neither cluster was asked anything.
    expect(await prod.requestLines()).toEqual([]);
    expect(await lab.requestLines()).toEqual([]);
    const onLab = await call(client, 'pve_list_snapshots', guest);
    expect(onLab.isError, text(onLab)).toBeFalsy();
    expect(await lab.requestLines()).toEqual(['GET /api2/json/nodes/pve1/qemu/100/snapshot']);
    await lab.clearLog();

    // With a fact that is read: read from the cluster the call is for, and only from it.
    const snap = { ...guest, snapname: 'before', confirm: true };
    const refused = await call(client, 'pve_create_snapshot', { ...snap, cluster: 'prod' });
    expect(refused.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_create_snapshot/deny_if/0',
    });
    expect(text(refused)).toContain("prod's web guests are snapshotted by their pipeline.");
    expect(await prod.requestLines()).toEqual(['GET /api2/json/cluster/resources']);
    expect(await lab.requestLines()).toEqual([]);
    const made = await call(client, 'pve_create_snapshot', snap);
    expect(made.isError, text(made)).toBeFalsy();
    expect(await lab.writeLines()).toEqual(['POST /api2/json/nodes/pve1/qemu/100/snapshot']);
    expect(await prod.writeLines()).toEqual([]);
  });

  it('counts a guest limit per cluster: the same vmid on the other cluster has its own', async () => {
    const reboot = (cluster: string) =>
      call(client, 'pve_reboot_vm', { node: 'pve1', vmid: 100, cluster, confirm: true });
    expect((await reboot('lab')).isError).toBeFalsy();
    const onProd = await reboot('prod');
    expect(onProd.isError, text(onProd)).toBeFalsy();
    const again = await reboot('lab');
    expect(again.structuredContent!.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_reboot_vm/limits/0',
    });
    const REBOOT_100 = 'POST /api2/json/nodes/pve1/qemu/100/status/reboot';
    expect(await lab.writeLines()).toEqual([REBOOT_100]);
    expect(await prod.writeLines()).toEqual([REBOOT_100]);
  });

  it('counts a limit for some clusters on a counter per cluster, whoever asks', async () => {
    const list = (cluster: string) => call(client, 'pve_list_storage', { cluster });
    expect((await list('lab')).isError).toBeFalsy();
    const onProd = await list('prod');
    expect(onProd.isError, text(onProd)).toBeFalsy();
    const again = await list('lab');
    expect(again.structuredContent!.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_list_storage/limits/0',
    });
    expect(text(again)).toContain('per global on cluster lab');
    expect(await lab.requestLines()).toEqual(['GET /api2/json/storage']);
    expect(await prod.requestLines()).toEqual(['GET /api2/json/storage']);
    // Another person: the same counters.
    const { client: bob } = await connectSignedIn('http', {
      user: 'bob@example.com',
      groups: 'ops',
    });
    const byBob = await call(bob, 'pve_list_storage', { cluster: 'prod' });
    await bob.close();
    expect(byBob.structuredContent!.policy).toMatchObject({ decision: 'limited' });
    expect(await prod.requestLines()).toEqual(['GET /api2/json/storage']);
  });

  it('binds an approval to its cluster: approved on lab, it does not suspend VM 100 on prod', async () => {
    const suspend = { node: 'pve1', vmid: 100, confirm: true };
    const pending = await call(client, 'pve_suspend_vm', { ...suspend, cluster: 'lab' });
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    expect(id).toMatch(/^[A-Za-z0-9_-]{16,64}$/);

    const admin = new Browser();
    const url = `http://localhost/approvals/${id}`;
    const page = await openAsDevUser(admin, url, 'admin@example.com', 'ops');
    expect(page.html).toMatch(/Suspend VM 100 (\([^)]*\) )?on lab\/pve1/);
    // What it touches, as read from lab, says so too.
    expect(page.html).toContain('VM 100 (web01) on lab/pve1, as read');
    const answered = await admin.post(url, { csrf: csrfOf(page.html), decision: 'approve' });
    expect(answered.status).toBe(303);

    const elsewhere = await call(client, 'pve_suspend_vm', {
      ...suspend,
      cluster: 'prod',
      approval_id: id,
    });
    expect(elsewhere.isError).toBe(true);
    expect(text(elsewhere)).toMatch(/approval/i);
    expect(await prod.requestLines()).toEqual([]);

    const approved = await call(client, 'pve_suspend_vm', {
      ...suspend,
      cluster: 'lab',
      approval_id: id,
    });
    expect(approved.isError, text(approved)).toBeFalsy();
    expect(await lab.writeLines()).toEqual(['POST /api2/json/nodes/pve1/qemu/100/status/suspend']);
    expect(await prod.requestLines()).toEqual([]);
  });

  it('asks the policy again with the same cluster after a vmid collision', async () => {
    // 4000 exists on prod; nextid offers it once, the POST is refused, the next free id is taken.
    expect((await prod.api('POST', '/nodes/pve2/qemu', { vmid: '4000' })).status).toBe(200);
    await prod.clearLog();
    await prod.fault({
      method: 'GET',
      path: '^/cluster/nextid$',
      status: 200,
      contentType: 'application/json;charset=UTF-8',
      body: { data: '4000' },
    });
    const made = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      cluster: 'prod',
      confirm: true,
    });
    expect(made.isError, text(made)).toBeFalsy();
    const writes = await prod.writes();
    expect(writes.map((w) => w.params!.vmid)).toHaveLength(2);
    expect(writes[0]).toMatchObject({ params: { vmid: '4000' }, status: 500 });
    expect(writes[1]!.status).toBe(200);
    expect(await lab.requestLines()).toEqual([]);
  });

  it('lists every cluster without cluster, each guest marked with its own, paged exactly', async () => {
    const all = await call(client, 'pve_list_vms', { limit: 1000 });
    const guests = all.structuredContent!.guests as { cluster: string; vmid: number }[];
    const perCluster = guests.filter((g) => g.cluster === 'lab').length;
    expect(perCluster).toBeGreaterThan(5);
    // Seeded alike: the same vmids on both, lab's first (the configured order), then by vmid.
    expect(guests.map((g) => `${g.cluster}/${g.vmid}`)).toEqual([
      ...guests.slice(0, perCluster).map((g) => `lab/${g.vmid}`),
      ...guests.slice(0, perCluster).map((g) => `prod/${g.vmid}`),
    ]);
    expect(all.structuredContent!.total).toBe(2 * perCluster);
    expect(text(all)).toContain(`prod/${guests[0]!.vmid} `);
    expect(all.structuredContent!.unreachable).toBeUndefined();

    // Three at a time, cursor after cursor: every guest once, in the same order.
    const paged: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await call(client, 'pve_list_vms', { limit: 3, ...(cursor ? { cursor } : {}) });
      const rows = page.structuredContent!.guests as { cluster: string; vmid: number }[];
      paged.push(...rows.map((g) => `${g.cluster}/${g.vmid}`));
      cursor = page.structuredContent!.next_cursor ?? undefined;
      if (!cursor) break;
    }
    expect(paged).toEqual(guests.map((g) => `${g.cluster}/${g.vmid}`));

    // Naming one: that cluster's only.
    const onProd = await call(client, 'pve_list_vms', { cluster: 'prod', limit: 1000 });
    const prodGuests = onProd.structuredContent!.guests as { cluster: string }[];
    expect(prodGuests).toHaveLength(perCluster);
    expect(new Set(prodGuests.map((g) => g.cluster))).toEqual(new Set(['prod']));
  });

  it('lists only the clusters the policy allows as calls to them, naming the one it refuses', async () => {
    const listed = await call(client, 'pve_list_vms', { type: 'lxc', limit: 1000 });
    expect(listed.isError, text(listed)).toBeFalsy();
    const guests = listed.structuredContent!.guests as { cluster: string; type: string }[];
    expect(guests.length).toBeGreaterThan(0);
    expect(new Set(guests.map((g) => `${g.cluster} ${g.type}`))).toEqual(new Set(['lab lxc']));
    expect(listed.structuredContent!.refused).toEqual([
      { cluster: 'prod', reason: "prod's containers are not listed" },
    ]);
    expect(text(listed)).toContain('Cluster prod is not listed: the policy refuses it');
    expect(await prod.requestLines()).toEqual([]);
    // Named, the call itself is refused; VMs on prod are listed as before.
    const named = await call(client, 'pve_list_vms', { type: 'lxc', cluster: 'prod' });
    expect(named.structuredContent!.policy).toMatchObject({ decision: 'deny' });
    expect(await prod.requestLines()).toEqual([]);
    const vms = await call(client, 'pve_list_vms', { type: 'qemu', limit: 1000 });
    const clusters = (vms.structuredContent!.guests as { cluster: string }[]).map((g) => g.cluster);
    expect(new Set(clusters)).toEqual(new Set(['lab', 'prod']));
  });

  it("refuses another listing's cursor: one naming a cluster this list does not read", async () => {
    const page = await call(client, 'pve_list_vms', { type: 'qemu', limit: 1 });
    const cursor = page.structuredContent!.next_cursor as string;
    expect(atob(cursor)).toMatch(/^after:lab:\d+$/);
    const forged = btoa('after:staging:100').replace(/=+$/, '');
    for (const bad of [forged, cursor]) {
      const other = await call(client, 'pve_list_vms', {
        type: 'qemu',
        limit: 1,
        ...(bad === cursor ? { cluster: 'prod' } : {}),
        cursor: bad,
      });
      expect(other.isError, text(other)).toBe(true);
      expect(text(other)).toMatch(/cursor/i);
    }
  });

  it('lists the clusters that answer and names the one that does not', async () => {
    await prod.fault({ method: 'GET', path: '^/cluster/resources', status: 503, times: 4 });
    try {
      const listed = await call(client, 'pve_list_vms', { limit: 1000 });
      expect(listed.isError, text(listed)).toBeFalsy();
      const guests = listed.structuredContent!.guests as { cluster: string }[];
      expect(guests.length).toBeGreaterThan(5);
      expect(new Set(guests.map((g) => g.cluster))).toEqual(new Set(['lab']));
      expect(listed.structuredContent!.unreachable).toEqual([
        { cluster: 'prod', reason: expect.stringContaining('503') },
      ]);
      expect(text(listed)).toContain('Cluster prod did not answer');
    } finally {
      await prod.clearFaults();
    }
  });

  it("lists every cluster's nodes and status without cluster, each marked with its own", async () => {
    const nodes = await call(client, 'pve_list_nodes', {});
    expect(nodes.isError, text(nodes)).toBeFalsy();
    const rows = nodes.structuredContent!.nodes as { cluster: string; node: string }[];
    expect(rows.map((n) => `${n.cluster}/${n.node}`)).toEqual([
      'lab/pve1',
      'lab/pve2',
      'lab/pve3',
      'prod/pve1',
      'prod/pve2',
      'prod/pve3',
    ]);
    expect(text(nodes)).toMatch(/^6 nodes:\nlab\/pve1 online, CPU/);
    expect(await lab.requestLines()).toEqual(['GET /api2/json/nodes']);
    expect(await prod.requestLines()).toEqual(['GET /api2/json/nodes']);

    await prod.setNode('pve3', 'offline');
    const status = await call(client, 'pve_get_cluster_status', {});
    expect(status.isError, text(status)).toBeFalsy();
    expect(status.structuredContent!.clusters).toEqual([
      { cluster: 'lab', status: { name: 'pve-sim', quorate: true, nodes: 3 } },
      { cluster: 'prod', status: { name: 'pve-sim', quorate: true, nodes: 3 } },
    ]);
    const members = status.structuredContent!.nodes as { cluster: string; name: string }[];
    expect(members.map((n) => `${n.cluster}/${n.name}`)).toHaveLength(6);
    expect(text(status)).toBe(
      [
        'Cluster lab: Cluster pve-sim: quorate; 3 of 3 nodes online.',
        'Cluster prod: Cluster pve-sim: quorate; 2 of 3 nodes online (offline: pve3).',
      ].join('\n'),
    );

    // One named: that cluster's alone, in the shape one cluster always had.
    const onProd = await call(client, 'pve_get_cluster_status', { cluster: 'prod' });
    expect(onProd.structuredContent!.cluster).toEqual({ name: 'pve-sim', quorate: true, nodes: 3 });
    expect(onProd.structuredContent!.clusters).toBeUndefined();
    expect(text(onProd)).toBe(
      'Cluster prod: Cluster pve-sim: quorate; 2 of 3 nodes online (offline: pve3).',
    );

    // A cluster that does not answer is named; the other is still shown.
    await prod.fault({ method: 'GET', path: '^/nodes$', status: 503, times: 4 });
    try {
      const some = await call(client, 'pve_list_nodes', {});
      expect(some.isError, text(some)).toBeFalsy();
      const left = some.structuredContent!.nodes as { cluster: string }[];
      expect(new Set(left.map((n) => n.cluster))).toEqual(new Set(['lab']));
      expect(some.structuredContent!.unreachable).toEqual([
        { cluster: 'prod', reason: expect.stringContaining('503') },
      ]);
      expect(text(some)).toContain('Cluster prod did not answer');
    } finally {
      await prod.clearFaults();
    }
  });

  it('leaves out of a list of every cluster one whose calls a limit counts apart, and lists it when named', async () => {
    const { client: bob } = await connectSignedIn('http', {
      user: 'bob@example.com',
      groups: 'ops',
    });
    try {
      const all = await call(bob, 'pve_list_nodes', {});
      expect(all.isError, text(all)).toBeFalsy();
      const rows = all.structuredContent!.nodes as { cluster: string }[];
      expect(new Set(rows.map((n) => n.cluster))).toEqual(new Set(['lab']));
      expect(all.structuredContent!.refused).toEqual([
        {
          cluster: 'prod',
          reason:
            'the limit prod-nodes counts calls to cluster prod on a counter of its own: name cluster prod to list it',
        },
      ]);
      expect(await prod.requestLines()).toEqual([]);
      const named = await call(bob, 'pve_list_nodes', { cluster: 'prod' });
      expect(named.isError, text(named)).toBeFalsy();
      expect(await prod.requestLines()).toEqual(['GET /api2/json/nodes']);
    } finally {
      await bob.close();
    }
  });

  it('reads, of a list a person approved, the cluster approved; one needing its own approval is left out', async () => {
    const { client: bob } = await connectSignedIn('http', {
      user: 'bob@example.com',
      groups: 'ops',
    });
    try {
      const pending = await call(bob, 'pve_get_cluster_status', {});
      const { approval_id: id } = pending.structuredContent as { approval_id: string };
      expect(id, text(pending)).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
      const admin = { user: 'admin@example.com', groups: 'ops' };
      expect(await approveAsDevUser(new Browser(), 'http://localhost', id, admin)).toBe(303);
      await prod.clearLog();
      const approved = await call(bob, 'pve_get_cluster_status', { approval_id: id });
      expect(approved.isError, text(approved)).toBeFalsy();
      const clusters = approved.structuredContent!.clusters as { cluster: string }[];
      expect(clusters.map((c) => c.cluster)).toEqual(['lab']);
      // The person approved the call as judged, on lab: prod asks for its own.
      expect(approved.structuredContent!.refused).toEqual([
        {
          cluster: 'prod',
          reason: expect.stringMatching(
            /: cluster prod needs an approval of its own, name it to ask for one$/,
          ),
        },
      ]);
      expect(await prod.requestLines()).toEqual([]);
    } finally {
      await bob.close();
    }
  });

  it('keeps the cluster in the audit record, exports it, and filters /admin by it', async () => {
    await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100, cluster: 'prod' });
    await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100 });
    const records = await auditRecords(
      (r) => r.tool === 'pve_get_vm_status' && r.user_email === 'alice@example.com',
      2,
    );
    expect(records.slice(-2).map((r) => r.cluster)).toEqual(['prod', 'lab']);

    const admin = new Browser();
    const page = await openAsDevUser(
      admin,
      'http://localhost/admin?tool=pve_get_vm_status&cluster=prod',
      'admin@example.com',
      'ops',
    );
    expect(page.html).toContain('<option value="prod" selected>prod</option>');
    for (const format of ['jsonl', 'csv']) {
      const exported = await admin.get(
        `http://localhost/admin/audit?format=${format}&tool=pve_get_vm_status&cluster=prod`,
      );
      expect(exported.status).toBe(200);
      const body = await exported.text();
      if (format === 'jsonl') {
        const rows = body
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { cluster: string });
        expect(rows.length).toBeGreaterThan(0);
        expect(new Set(rows.map((r) => r.cluster))).toEqual(new Set(['prod']));
      } else {
        const [header, ...rows] = body.trim().split('\r\n');
        const at = header!.split(',').indexOf('cluster');
        expect(at).toBeGreaterThan(0);
        expect(new Set(rows.map((r) => r.split(',').at(at - header!.split(',').length)))).toEqual(
          new Set(['prod']),
        );
      }
    }
  });

  it('names the cluster of each call a replay would decide otherwise, in the API and the console', async () => {
    const since = Date.now();
    for (const cluster of ['lab', 'prod'])
      await call(client, 'pve_get_vm_config', { node: 'pve1', vmid: 100, cluster });
    await auditRecords((r) => r.ts >= since && r.tool === 'pve_get_vm_config', 2);
    const draft = {
      version: '1',
      default: 'allow',
      tools: {
        pve_get_vm_config: { deny_if: [{ path: 'target.cluster', op: 'eq', value: 'prod' }] },
      },
    };
    // An administrator: a replay shows an editor only their own calls, and these are alice's.
    const editor = await asEditor({ user: 'admin@example.com', groups: 'ops' })();
    const res = await workerFetch('http://localhost/admin/api/policy/replay', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost', ...editor },
      body: JSON.stringify({ policy: draft, since }),
    });
    expect(res.status).toBe(200);
    const { changed } = (await res.json()) as { changed: { tool: string; cluster?: string }[] };
    expect(changed.map((c) => [c.tool, c.cluster])).toEqual([['pve_get_vm_config', 'prod']]);

    const page = await replayInConsole(
      new Browser(),
      'http://localhost',
      { user: 'admin@example.com', groups: 'ops' },
      draft,
      since,
    );
    const table = /<table id="replay-changes">[\s\S]*?<\/table>/.exec(page)?.[0] ?? page;
    expect(table).toContain('<th scope="col">Tool</th><th scope="col">Cluster</th>');
    expect(table).toMatch(/<code>pve_get_vm_config<\/code><\/td><td>prod<\/td>/);
  });

  it('warns of a policy naming a cluster it does not reach: a warning, not an error', async () => {
    const editor = await asEditor()();
    const res = await workerFetch('http://localhost/admin/api/policy/check', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost', ...editor },
      body: JSON.stringify({
        policy: {
          version: '1',
          default: 'allow',
          tools: {
            pve_stop_vm: {
              deny_if: [
                { path: 'args.cluster', op: 'eq', value: 'staging' },
                { path: 'target.cluster', op: 'in', value: ['lab', 'dr'] },
              ],
            },
          },
        },
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      ok: true,
      problems: [],
      warnings: [
        expect.stringContaining(
          '"staging": no cluster of this server is named so (it reaches lab, prod)',
        ),
        expect.stringContaining('"dr": no cluster of this server is named so'),
      ],
    });
  });

  it('refuses a cluster it does not reach, naming the ones it does, and sends nothing', async () => {
    const result = await call(client, 'pve_stop_vm', {
      node: 'pve1',
      vmid: 100,
      cluster: 'staging',
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/cluster/);
    expect(text(result)).toMatch(/lab.*prod/);
    expect([...(await lab.requestLines()), ...(await prod.requestLines())]).toEqual([]);
  });
});
