// The read tools over both transports against the simulator: each returns structured data that
// matches its output schema (the SDK client checks), with the figures Proxmox has, and sends
// nothing but reads.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text, TRANSPORTS } from '../../support/worker/mcp';
import { sim } from '../../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../../support/worker/policy';

usePolicy(OPEN_POLICY);

describe.each(TRANSPORTS)('read tools over %s', (kind) => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect(kind);
  });
  afterAll(async () => {
    // Reads only: not one write reached Proxmox.
    expect(await sim.writes()).toEqual([]);
    await client.close();
  });

  it('pve_get_version', async () => {
    const r = await call(client, 'pve_get_version', {});
    expect(r.structuredContent).toEqual({
      version: '9.1.3',
      release: '9.1',
      repoid: expect.any(String),
    });
    expect(text(r)).toMatch(/^Proxmox VE 9\.1\.3/);
  });

  it('pve_get_cluster_status: quorum and who is offline', async () => {
    const all = await call(client, 'pve_get_cluster_status', {});
    expect(all.structuredContent!.cluster).toMatchObject({ quorate: true, nodes: 3 });
    expect(
      all.structuredContent!.nodes.map((n: { name: string; online: boolean }) => [
        n.name,
        n.online,
      ]),
    ).toEqual([
      ['pve1', true],
      ['pve2', true],
      ['pve3', true],
    ]);
    await sim.setNode('pve3', 'offline');
    try {
      const one = await call(client, 'pve_get_cluster_status', {});
      expect(text(one)).toMatch(/2 of 3 nodes online \(offline: pve3\)/);
    } finally {
      await sim.setNode('pve3', 'online');
    }
  });

  it('pve_list_nodes and pve_get_node_metrics', async () => {
    const nodes = await call(client, 'pve_list_nodes', {});
    const list = nodes.structuredContent!.nodes as {
      node: string;
      status: string;
      maxmem_mib: number;
      cpus: number;
    }[];
    expect(list.map((n) => n.node)).toEqual(['pve1', 'pve2', 'pve3']);
    expect(list.every((n) => n.status === 'online' && n.maxmem_mib > 1024 && n.cpus >= 1)).toBe(
      true,
    );
    const metrics = await call(client, 'pve_get_node_metrics', { node: 'pve1' });
    const m = metrics.structuredContent!;
    expect(m).toMatchObject({
      node: 'pve1',
      pve_version: expect.stringContaining('pve-manager/9.1.3'),
    });
    expect(m.memory.total_gib).toBeGreaterThan(m.memory.used_gib);
    expect(m.loadavg).toHaveLength(3);
    expect(m.uptime_s).toBeGreaterThan(0);
  });

  it('pve_list_resources: by type, pools included, paged', async () => {
    const byType = async (resource_type?: string) =>
      (await call(client, 'pve_list_resources', resource_type ? { resource_type } : {}))
        .structuredContent!.resources as { id: string; type: string }[];
    const vms = await byType('vm');
    expect(new Set(vms.map((r) => r.type))).toEqual(new Set(['qemu', 'lxc']));
    expect((await byType('storage')).every((r) => r.type === 'storage')).toBe(true);
    expect((await byType('node')).map((r) => r.id)).toEqual([
      'node/pve1',
      'node/pve2',
      'node/pve3',
    ]);
    expect((await byType('pool')).map((r) => r.id)).toEqual(['/pool/lab', '/pool/prod']);
    const everything = await byType();
    const first = await call(client, 'pve_list_resources', { limit: 5 });
    expect(first.structuredContent!.resources).toEqual(everything.slice(0, 5));
    const second = await call(client, 'pve_list_resources', {
      limit: 5,
      cursor: first.structuredContent!.next_cursor,
    });
    expect(second.structuredContent!.resources).toEqual(everything.slice(5, 10));
    const forged = await call(client, 'pve_list_resources', { cursor: 'bm90LWEtY3Vyc29y' });
    expect(forged.structuredContent!.error).toMatchObject({
      kind: 'invalid_arguments',
      fields: [{ field: 'cursor' }],
    });
  });

  it('pve_get_vm_status: a running VM, with its IPs from the guest agent', async () => {
    const r = await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100, guest_ips: true });
    const s = r.structuredContent!;
    expect(s).toMatchObject({
      vmid: 100,
      status: 'running',
      qmpstatus: 'running',
      agent_enabled: true,
      ips_note: null,
    });
    const eth0 = (s.interfaces as { name: string; addresses: string[] }[]).find(
      (i) => i.name === 'eth0',
    )!;
    expect(eth0.addresses).toContain('10.10.0.120/24');
    expect(text(r)).toMatch(/IP addresses:\neth0 10\.10\.0\.120\/24/);
  });

  it.each([
    ['no agent configured', 'pve2', 103, /QEMU guest agent is not enabled for VM 103/],
    [
      'an agent that does not answer',
      'pve3',
      105,
      /QEMU guest agent did not answer \(QEMU guest agent is not running\)/,
    ],
    ['a stopped VM', 'pve2', 104, /VM 104 .*is not running/],
  ])(
    'pve_get_vm_status with guest_ips: %s says why there are no IPs',
    async (_label, node, vmid, note) => {
      const r = await call(client, 'pve_get_vm_status', { node, vmid, guest_ips: true });
      expect(r.isError, text(r)).toBeFalsy();
      expect(r.structuredContent!.interfaces).toBeNull();
      expect(r.structuredContent!.ips_note).toMatch(note);
    },
  );

  it('pve_get_vm_status: a container, its IPs from its own interfaces', async () => {
    const r = await call(client, 'pve_get_vm_status', {
      node: 'pve1',
      vmid: 110,
      vm_type: 'lxc',
      guest_ips: true,
    });
    expect(r.structuredContent).toMatchObject({
      status: 'running',
      interfaces: [{ name: 'eth0', addresses: ['10.10.0.53/24'] }],
    });
  });

  it('pve_get_vm_status of a guest that is not there names what Proxmox said', async () => {
    const r = await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 110 }); // a container, asked as a VM
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(
      /Configuration file 'nodes\/pve1\/qemu-server\/110\.conf' does not exist/,
    );
  });

  it('pve_get_vm_config: fields of property strings, secrets redacted, the digest', async () => {
    const r = await call(client, 'pve_get_vm_config', { node: 'pve1', vmid: 9000 });
    const s = r.structuredContent!;
    expect(s.config.cipassword).toBe('[redacted]');
    expect(s.redacted).toEqual(['cipassword']);
    expect(s.fields.net0).toMatchObject({
      model: 'virtio',
      bridge: 'vmbr0',
      macaddr: expect.stringMatching(/^[0-9A-F:]{17}$/i),
    });
    expect(s.fields.scsi0).toMatchObject({ volume: 'local-lvm:base-9000-disk-0', discard: 'on' });
    expect(s.digest).toMatch(/^[0-9a-f]{40}$/);
    expect(JSON.stringify(r)).not.toMatch(/\$5\$|\$6\$/); // no crypted password either
    const lxc = await call(client, 'pve_get_vm_config', {
      node: 'pve1',
      vmid: 110,
      vm_type: 'lxc',
    });
    expect(lxc.structuredContent!.fields.net0).toMatchObject({
      name: 'eth0',
      bridge: 'vmbr0',
      ip: '10.10.0.53/24',
    });
  });

  it("pve_list_storage: the configuration, or one node's with usage", async () => {
    const all = await call(client, 'pve_list_storage', {});
    const local = (
      all.structuredContent!.storages as {
        storage: string;
        content: string[];
        total_gib: number | null;
      }[]
    ).find((s) => s.storage === 'local')!;
    expect(local.content).toEqual(expect.arrayContaining(['iso', 'vztmpl', 'backup']));
    expect(local.total_gib).toBeNull();
    const node = await call(client, 'pve_list_storage', { node: 'pve1' });
    const used = (
      node.structuredContent!.storages as {
        storage: string;
        total_gib: number;
        used_percent: number;
      }[]
    ).find((s) => s.storage === 'local')!;
    expect(used.total_gib).toBeGreaterThan(0);
    expect(used.used_percent).toBeGreaterThan(0);
  });

  it('pve_list_backups: newest first, notes and protection, one guest', async () => {
    const r = await call(client, 'pve_list_backups', { node: 'pve1', storage: 'local', vmid: 100 });
    const backups = r.structuredContent!.backups as {
      volid: string;
      vmid: number;
      notes: string;
      protected: boolean;
      created: string;
    }[];
    expect(backups.map((b) => [b.vmid, b.notes, b.protected])).toEqual([
      [100, 'nightly', false],
      [100, 'weekly, before kernel 6.14', true],
    ]);
    expect(backups[0]!.created > backups[1]!.created).toBe(true);
  });

  it('pve_list_storage_content: real volume ids to pick from, paged', async () => {
    const isos = await call(client, 'pve_list_storage_content', {
      node: 'pve1',
      storage: 'local',
      content: 'iso',
    });
    const volids = (isos.structuredContent!.volumes as { volid: string }[]).map((v) => v.volid);
    expect(volids).toContain('local:iso/debian-12.7.0-amd64-netinst.iso');
    const page = await call(client, 'pve_list_storage_content', {
      node: 'pve1',
      storage: 'local',
      content: 'iso',
      limit: 1,
    });
    expect(page.structuredContent!.volumes).toHaveLength(1);
    const next = await call(client, 'pve_list_storage_content', {
      node: 'pve1',
      storage: 'local',
      content: 'iso',
      limit: 1,
      cursor: page.structuredContent!.next_cursor,
    });
    expect(next.structuredContent!.volumes[0].volid).toBe(volids[1]);
    const templates = await call(client, 'pve_list_storage_content', {
      node: 'pve1',
      storage: 'local',
      content: 'vztmpl',
    });
    expect(
      (templates.structuredContent!.volumes as { volid: string }[]).every((v) =>
        v.volid.startsWith('local:vztmpl/'),
      ),
    ).toBe(true);
  });
});
