// Read endpoints over HTTP: cluster and node status, guest status, storages and their content,
// each following state and permissions.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, getData, useSimulator } from '../support/sim-harness.ts';

const client = useSimulator('reads');
const audit = { token: SIMULATOR_TOKENS.audit };

const volids = (items: unknown) => (items as { volid: string }[]).map((item) => item.volid);

describe('cluster and node status', () => {
  it('reports the cluster, its quorum and each node', async () => {
    const c = client();
    const status = await getData<Record<string, unknown>[]>(c, '/cluster/status');
    expect(status[0]).toEqual({
      type: 'cluster',
      id: 'cluster',
      name: 'pve-sim',
      nodes: 3,
      version: expect.any(Number),
      quorate: 1,
    });
    expect(status.slice(1)).toEqual([
      {
        type: 'node',
        id: 'node/pve1',
        name: 'pve1',
        nodeid: 1,
        local: 1,
        online: 1,
        ip: '10.10.0.11',
        level: '',
      },
      {
        type: 'node',
        id: 'node/pve2',
        name: 'pve2',
        nodeid: 2,
        local: 0,
        online: 1,
        ip: '10.10.0.12',
        level: '',
      },
      {
        type: 'node',
        id: 'node/pve3',
        name: 'pve3',
        nodeid: 3,
        local: 0,
        online: 1,
        ip: '10.10.0.13',
        level: '',
      },
    ]);
    await c.setNodeOnline('pve2', false);
    await c.setNodeOnline('pve3', false);
    const split = await getData<Record<string, unknown>[]>(c, '/cluster/status');
    expect(split[0]?.quorate).toBe(0);
    expect(split[2]).toEqual({
      type: 'node',
      id: 'node/pve2',
      name: 'pve2',
      nodeid: 2,
      local: 0,
      online: 0,
      ip: '10.10.0.12',
    });
    expectError(
      await c.api('POST', '/nodes/pve1/qemu/9000/clone', { form: { newid: 150 } }),
      500,
      'cluster not ready - no quorum?',
    );
  });

  it("reports a node's kernel, CPU, memory, swap and root fs", async () => {
    const c = client();
    const node = await getData<Record<string, Record<string, unknown>>>(c, '/nodes/pve2/status');
    expect(node.cpuinfo).toMatchObject({
      cpus: 12,
      sockets: 1,
      model: 'AMD Ryzen 9 5900X 12-Core Processor',
    });
    expect(node.memory).toMatchObject({ total: 33_567_911_936, used: 8_127_873_024 });
    expect(node['boot-info']).toEqual({ mode: 'efi', secureboot: 0 });
    expect(node.pveversion).toBe('pve-manager/9.1.3/e5010dcea566a205');
    expect(node.uptime).toBeGreaterThan(800_000);
    await c.setNodeOnline('pve2', false);
    expect((await c.api('GET', '/nodes/pve2/status')).status).toBe(595);
    expectError(
      await c.api('GET', '/nodes/nope/status'),
      500,
      "hostname lookup 'nope' failed - failed to get address info for: nope: Name or service not known",
    );
  });

  it('lists resources by type, with pools only in the full list', async () => {
    const c = client();
    const types = async (query: Record<string, string>) =>
      [
        ...new Set(
          (await getData<{ type: string }[]>(c, '/cluster/resources', query)).map((r) => r.type),
        ),
      ].sort();
    expect(await types({})).toEqual(['lxc', 'node', 'pool', 'qemu', 'storage']);
    expect(await types({ type: 'vm' })).toEqual(['lxc', 'qemu']);
    expect(await types({ type: 'node' })).toEqual(['node']);
    expect(await getData<unknown[]>(c, '/cluster/resources', { type: 'sdn' })).toEqual([]);
  });
});

describe('guest status', () => {
  it("reports a VM's QMP status and whether its config enables the agent", async () => {
    const c = client();
    expect(await getData(c, '/nodes/pve1/qemu/100/status/current')).toMatchObject({
      status: 'running',
      qmpstatus: 'running',
      agent: 1,
      ha: { managed: 0 },
      name: 'web01',
      cpus: 2,
    });
    expect(await getData(c, '/nodes/pve2/qemu/103/status/current')).not.toHaveProperty('agent');
    const stopped = await getData(c, '/nodes/pve2/qemu/104/status/current');
    expect(stopped).toMatchObject({ status: 'stopped', qmpstatus: 'stopped', uptime: 0 });
    expect(stopped).not.toHaveProperty('pid');
    expect(await getData(c, '/nodes/pve1/qemu/9000/status/current')).toMatchObject({
      template: 1,
      serial: 1,
    });
    await c.setQmpStatus(100, 'prelaunch');
    expect(await getData(c, '/nodes/pve1/qemu/100/status/current')).toMatchObject({
      status: 'running',
      qmpstatus: 'prelaunch',
    });
    expectError(
      await c.api('GET', '/nodes/pve2/qemu/100/status/current'),
      500,
      "Configuration file 'nodes/pve2/qemu-server/100.conf' does not exist",
    );
  });

  it('reports a container with its swap and disk figures', async () => {
    const c = client();
    const ct = await getData(c, '/nodes/pve2/lxc/201/status/current');
    expect(ct).toMatchObject({
      type: 'lxc',
      status: 'running',
      name: 'monitoring',
      cpus: 2,
      maxmem: 2048 * 1024 ** 2,
      maxswap: 512 * 1024 ** 2,
      maxdisk: 32 * 1024 ** 3,
      ha: { managed: 0 },
    });
    expectError(
      await c.api('GET', '/nodes/pve1/lxc/100/status/current'),
      500,
      "Configuration file 'nodes/pve1/lxc/100.conf' does not exist",
    );
  });
});

describe('storages', () => {
  it("lists the storage configuration and each node's storages, filtered like PVE", async () => {
    const c = client();
    expect(await getData<unknown[]>(c, '/storage')).toHaveLength(5);
    expect(await getData<{ storage: string }[]>(c, '/storage', { type: 'rbd' })).toEqual([
      expect.objectContaining({ storage: 'ceph-pool', type: 'rbd', content: 'images,rootdir' }),
    ]);
    expect(
      (await getData<{ storage: string }[]>(c, '/nodes/pve1/storage', { content: 'rootdir' })).map(
        (s) => s.storage,
      ),
    ).toEqual(['local-lvm', 'ceph-pool', 'local-zfs']);
    expect(
      (await getData<{ storage: string }[]>(c, '/nodes/pve1/storage', { target: 'pve2' })).map(
        (s) => s.storage,
      ),
    ).toEqual(['ceph-pool', 'pbs-backup']);
    expectError(await c.api('GET', '/nodes/pve1/storage', { query: { storage: 'nope' } }), 400, {
      storage: 'No such storage.',
    });
    expect((await c.api('GET', '/storage', audit)).body.data).toEqual([]);
  });

  it("lists a node's volumes by content type, with backup notes and protection", async () => {
    const c = client();
    expect(
      volids(
        await getData<Record<string, unknown>[]>(c, '/nodes/pve1/storage/local/content', {
          content: 'iso',
        }),
      ),
    ).toContain('local:iso/Win11_24H2_English_x64.iso');
    expect(
      volids(await getData(c, '/nodes/pve2/storage/local/content', { content: 'iso' })),
    ).not.toContain('local:iso/Win11_24H2_English_x64.iso');
    expect(await getData(c, '/nodes/pve2/storage/local/content', { content: 'vztmpl' })).toEqual([
      {
        volid: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
        content: 'vztmpl',
        format: 'tzst',
        size: 129_435_417,
        ctime: expect.any(Number),
      },
    ]);
    expect(
      volids(await getData(c, '/nodes/pve1/storage/local/content', { content: 'import' })),
    ).toEqual([
      'local:import/debian-12-genericcloud-amd64.qcow2',
      'local:import/ubuntu-24.04-server-cloudimg.ova',
    ]);
    const backups = await getData<Record<string, unknown>[]>(
      c,
      '/nodes/pve1/storage/local/content',
      {
        content: 'backup',
        vmid: 100,
      },
    );
    expect(backups).toHaveLength(2);
    expect(backups.find((b) => b.protected === 1)).toMatchObject({
      content: 'backup',
      format: 'vma.zst',
      vmid: 100,
      subtype: 'qemu',
      notes: 'weekly, before kernel 6.14',
    });
    expect(
      await getData<Record<string, unknown>[]>(c, '/nodes/pve1/storage/local/content', {
        content: 'images',
      }),
    ).toEqual([]);
    const rootdirs = await getData<Record<string, unknown>[]>(
      c,
      '/nodes/pve2/storage/local-lvm/content',
      {
        content: 'rootdir',
      },
    );
    expect(rootdirs.map((v) => v.volid)).toEqual([
      'local-lvm:vm-200-disk-0',
      'local-lvm:vm-201-disk-1',
    ]);
  });

  it('refuses unknown content types and storages, and callers without datastore rights', async () => {
    const c = client();
    expectError(
      await c.api('GET', '/nodes/pve1/storage/local/content', { query: { content: 'bogus' } }),
      400,
      { content: "invalid format - invalid content type 'bogus'\n" },
    );
    expectError(
      await c.api('GET', '/nodes/pve1/storage/nope/content'),
      500,
      "storage 'nope' does not exist",
    );
    expectError(
      await c.api('GET', '/nodes/pve1/storage/local/content', audit),
      403,
      'Permission check failed (/storage/local, Datastore.Audit|Datastore.AllocateSpace)',
    );
  });
});
