import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text, TRANSPORTS } from '../../support/worker/mcp';
import { sim } from '../../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../../support/worker/policy';

usePolicy(OPEN_POLICY);

interface RawItem {
  type: string;
  vmid: number;
  name?: string;
  node: string;
  status: string;
  tags?: string;
  template?: number;
  maxmem?: number;
}

async function clusterGuests(): Promise<RawItem[]> {
  const res = await sim.api('GET', '/cluster/resources?type=vm');
  const body = (await res.json()) as { data: RawItem[] };
  return body.data.sort((a, b) => a.vmid - b.vmid);
}

describe.each(TRANSPORTS)('pve_list_vms over %s', (kind) => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect(kind);
  });
  afterAll(() => client.close());
  beforeEach(() => sim.clearLog());

  it('lists every guest of the cluster, sorted by vmid, from one GET /cluster/resources?type=vm', async () => {
    const expected = await clusterGuests();
    await sim.clearLog();
    const result = await call(client, 'pve_list_vms', {});
    expect(result.isError).toBeFalsy();
    const guests = result.structuredContent!.guests as { vmid: number; type: string }[];
    expect(guests.map((g) => g.vmid)).toEqual(expected.map((g) => g.vmid));
    expect(new Set(guests.map((g) => g.type))).toEqual(new Set(['qemu', 'lxc']));
    expect(result.structuredContent!.total).toBe(expected.length);
    expect(result.structuredContent!.next_cursor).toBeNull();
    const requests = await sim.requests();
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api2/json/cluster/resources',
    ]);
    expect(requests[0]!.query).toEqual({ type: 'vm' });
    expect(text(result)).toContain(`${expected.length} guests match`);
  });

  it('converts units and PVE 0/1 booleans', async () => {
    const [first] = await clusterGuests();
    const result = await call(client, 'pve_list_vms', { limit: 1 });
    const g = (result.structuredContent!.guests as Record<string, unknown>[])[0]!;
    expect(g.vmid).toBe(first!.vmid);
    expect(g.maxmem_mib).toBe(Math.round((first!.maxmem! / 1048576) * 100) / 100);
    expect(typeof g.template).toBe('boolean');
    expect(Array.isArray(g.tags)).toBe(true);
  });

  it('lists a paused VM as Proxmox does, and among the running ones', async () => {
    await sim.setQmpStatus(103, 'paused');
    try {
      const vmids = async (status: string) =>
        (
          (await call(client, 'pve_list_vms', { status })).structuredContent!.guests as RawItem[]
        ).map((g) => g.vmid);
      const running = await call(client, 'pve_list_vms', { status: 'running' });
      const paused = (running.structuredContent!.guests as RawItem[]).find((g) => g.vmid === 103);
      expect(paused?.status).toBe('paused');
      expect(await vmids('stopped')).not.toContain(103);
    } finally {
      await sim.setQmpStatus(103, 'running');
    }
  });

  it('filters by node, type, status, tag and name substring', async () => {
    const all = await clusterGuests();
    const byNode = await call(client, 'pve_list_vms', { node: 'pve2' });
    expect((byNode.structuredContent!.guests as RawItem[]).map((g) => g.vmid)).toEqual(
      all.filter((g) => g.node === 'pve2').map((g) => g.vmid),
    );
    const lxc = await call(client, 'pve_list_vms', { type: 'lxc', status: 'running' });
    expect((lxc.structuredContent!.guests as RawItem[]).map((g) => g.vmid)).toEqual(
      all.filter((g) => g.type === 'lxc' && g.status === 'running').map((g) => g.vmid),
    );
    const tagged = all.find((g) => g.tags);
    const tag = tagged!.tags!.split(';')[0]!;
    const byTag = await call(client, 'pve_list_vms', { tag: tag.toUpperCase() });
    expect((byTag.structuredContent!.guests as RawItem[]).map((g) => g.vmid)).toEqual(
      all.filter((g) => g.tags?.split(/[;, ]/).includes(tag)).map((g) => g.vmid),
    );
    const named = all.find((g) => g.name && g.name.length > 3)!;
    const fragment = named.name!.slice(1, 4).toUpperCase();
    const byName = await call(client, 'pve_list_vms', { name: fragment });
    expect((byName.structuredContent!.guests as RawItem[]).map((g) => g.vmid)).toEqual(
      all.filter((g) => g.name?.toLowerCase().includes(fragment.toLowerCase())).map((g) => g.vmid),
    );
  });

  it('pages with an opaque cursor until next_cursor is null', async () => {
    const all = await clusterGuests();
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const result = await call(client, 'pve_list_vms', {
        limit: 5,
        ...(cursor ? { cursor } : {}),
      });
      expect(result.structuredContent!.total).toBe(all.length);
      seen.push(...(result.structuredContent!.guests as RawItem[]).map((g) => g.vmid));
      cursor = (result.structuredContent!.next_cursor as string | null) ?? undefined;
      if (!cursor) break;
      expect(text(result)).toContain(cursor);
    }
    expect(seen).toEqual(all.map((g) => g.vmid));
  });

  it('refuses a forged cursor, naming the field', async () => {
    const result = await call(client, 'pve_list_vms', { cursor: btoa('after:-1') });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/cursor: not a cursor from this tool/);
    expect(await sim.requests()).toEqual([]);
  });
});

describe('pve_list_vms with odd but valid PVE data', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('accepts string numbers, 0/1 and "1" booleans, unknown keys and non-guest items', async () => {
    await sim.fault({
      method: 'GET',
      path: '^/cluster/resources$',
      status: 200,
      body: {
        data: [
          {
            id: 'qemu/120',
            type: 'qemu',
            vmid: '120',
            name: 'str',
            node: 'pve1',
            status: 'running',
            maxmem: '2147483648',
            maxcpu: '2',
            template: '0',
            uptime: '42',
            'new-key-in-pve-10': { nested: true },
          },
          {
            id: 'lxc/110',
            type: 'lxc',
            vmid: 110,
            node: 'pve2',
            status: 'stopped',
            template: 1,
            tags: 'a;b',
            memhost: 1,
          },
          { id: 'storage/pve1/local', type: 'storage', storage: 'local', node: 'pve1' },
          { id: 'qemu/bad', type: 'qemu', vmid: 'not-a-number' },
        ],
      },
      contentType: 'application/json;charset=UTF-8',
    });
    const result = await call(client, 'pve_list_vms', {});
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent!.guests).toEqual([
      {
        vmid: 110,
        name: null,
        type: 'lxc',
        node: 'pve2',
        status: 'stopped',
        tags: ['a', 'b'],
        cpus: null,
        maxmem_mib: null,
        mem_mib: null,
        maxdisk_gib: null,
        uptime_s: null,
        template: true,
      },
      {
        vmid: 120,
        name: 'str',
        type: 'qemu',
        node: 'pve1',
        status: 'running',
        tags: [],
        cpus: 2,
        maxmem_mib: 2048,
        mem_mib: null,
        maxdisk_gib: null,
        uptime_s: 42,
        template: false,
      },
    ]);
  });
});
