import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text, TRANSPORTS, workerFetchWith } from '../../support/worker/mcp';
import { connect2026 } from '../../support/worker/mcp-2026';
import { sim } from '../../support/worker/sim';
import { ISO } from '../../support/worker/fixtures';
import { OPEN_POLICY, usePolicy } from '../../support/worker/policy';

usePolicy(OPEN_POLICY);

const FULL = {
  node: 'pve1',
  name: 'web-01',
  memory: 2048,
  cores: 2,
  sockets: 1,
  net0: 'virtio,bridge=vmbr0,firewall=1',
  scsi0: 'local-lvm:32,iothread=1,discard=on',
  ide2: ISO,
  ostype: 'l26',
  cpu: 'host',
  scsihw: 'virtio-scsi-single',
  boot: 'order=scsi0;ide2;net0',
  agent: true,
  tags: ['web', 'prod'],
  start: false,
  description: 'Made by a test.\nSecond line; with & and = signs',
};

async function nextFree(): Promise<number> {
  const res = await sim.api('GET', '/cluster/nextid');
  return Number(((await res.json()) as { data: string }).data);
}

describe.each(TRANSPORTS)('pve_create_qemu_vm over %s', (kind) => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect(kind);
  });
  afterAll(() => client.close());
  beforeEach(() => sim.clearLog());

  it('previews without confirm and sends no write to Proxmox', async () => {
    const expectedId = await nextFree();
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', FULL);
    expect(result.isError).toBeFalsy();
    const s = result.structuredContent!;
    expect(s.mode).toBe('preview');
    expect(s.vmid).toBe(expectedId);
    expect(s.vmid_source).toBe('next_free');
    expect(s.params).toEqual({
      vmid: String(expectedId),
      name: 'web-01',
      memory: '2048',
      cores: '2',
      sockets: '1',
      net0: 'virtio,bridge=vmbr0,firewall=1',
      scsi0: 'local-lvm:32,discard=on,iothread=1',
      ide2: `${ISO},media=cdrom`,
      ostype: 'l26',
      cpu: 'host',
      scsihw: 'virtio-scsi-single',
      boot: 'order=scsi0;ide2;net0',
      agent: '1',
      tags: 'web;prod',
      start: '0',
      description: FULL.description,
    });
    expect(text(result)).toMatch(/Preview only: nothing was sent/);
    expect(text(result)).toMatch(/confirm: true/);
    const requests = await sim.requests();
    expect(requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(requests.map((r) => r.path)).toEqual(['/api2/json/cluster/nextid']);
  });

  it('creates with confirm: one fixed-length form POST, booleans as 1/0, separators encoded', async () => {
    const expectedId = await nextFree();
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', { ...FULL, confirm: true });
    expect(result.isError).toBeFalsy();
    const s = result.structuredContent!;
    expect(s).toMatchObject({ mode: 'created', node: 'pve1', vmid: expectedId, attempts: 1 });
    expect(s.upid).toMatch(
      new RegExp(
        `^UPID:pve1:[0-9A-F]{8}:[0-9A-F]{8,9}:[0-9A-F]{8}:qmcreate:${expectedId}:root@pam!mcp:$`,
      ),
    );
    const [post, ...more] = await sim.writes();
    expect(more).toEqual([]);
    expect(post!.path).toBe('/api2/json/nodes/pve1/qemu');
    expect(post!.chunked).toBe(false);
    expect(post!.contentLength).toBe(new TextEncoder().encode(post!.body!).length);
    expect(post!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(post!.params).toEqual(s.params);
    expect(post!.params!.start).toBe('0');
    // ";" and "&" must be percent-encoded: pveproxy splits form pairs on both.
    expect(post!.body).not.toMatch(/[;]/);
    expect(post!.body).toContain('boot=order%3Dscsi0%3Bide2%3Bnet0');
    expect(post!.headers.authorization).toBe('PVEAPIToken=root@pam!mcp=<redacted>');
  });

  it('waits for the task when asked and reports its exit status', async () => {
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve2',
      name: 'waited',
      memory: 512,
      confirm: true,
      wait: true,
      timeout_s: 10,
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent!.task).toEqual({
      status: 'stopped',
      exitstatus: 'OK',
      succeeded: true,
    });
    expect(text(result)).toMatch(/The task finished: OK/);
    const polls = (await sim.requests()).filter((r) => r.path.includes('/tasks/'));
    expect(polls.length).toBeGreaterThan(0);
    expect(polls[0]!.path).toMatch(/^\/api2\/json\/nodes\/pve2\/tasks\/UPID:pve2:.*\/status$/);
  });

  it('reports a task that ends in error as an error result, with its exit status', async () => {
    await sim.fault({
      path: '^/nodes/pve1/qemu$',
      method: 'POST',
      taskExitStatus: 'unable to create image: out of space',
    });
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      scsi0: 'local-lvm:8',
      confirm: true,
      wait: true,
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent!.task).toEqual({
      status: 'stopped',
      exitstatus: 'unable to create image: out of space',
      succeeded: false,
    });
    expect(text(result)).toMatch(/The task failed: unable to create image: out of space/);
  });

  it("uses a given vmid and surfaces PVE's 500 when it already exists, without a second POST", async () => {
    const existing = (await (await sim.api('GET', '/cluster/resources?type=vm')).json()) as {
      data: { vmid: number; node: string }[];
    };
    const taken = existing.data[0]!;
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: taken.vmid,
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain(
      `Proxmox reported an error (500): unable to create VM ${taken.vmid} - VM ${taken.vmid} already exists on node '${taken.node}'`,
    );
    expect(result.structuredContent!.error).toMatchObject({
      kind: 'upstream.server_error',
      upstream_status: 500,
    });
    expect(await sim.writes()).toHaveLength(1);
  });
});

describe('concurrent creates without a vmid', () => {
  let clients: Client[];
  beforeAll(async () => {
    await sim.reset();
    clients = await Promise.all([connect('http'), connect('http'), connect('sse')]);
  });
  afterAll(() => Promise.all(clients.map((c) => c.close())));

  it('never collide: a taken automatic vmid is replaced by the next free one', async () => {
    const first = await nextFree();
    await sim.clearLog();
    // nextid is only free "at time of check": give all three calls the same answer, as PVE
    // does when they ask at the same moment. Later nextid calls get the simulator's real one.
    // The answers are held back 1 s, so all three first asks take the three faults before any
    // retry can.
    await sim.fault({
      method: 'GET',
      path: '^/cluster/nextid$',
      times: 3,
      delayMs: 1000,
      status: 200,
      contentType: 'application/json;charset=UTF-8',
      body: { data: String(first) },
    });
    const results = await Promise.all(
      clients.map((c, i) =>
        call(c, 'pve_create_qemu_vm', { node: 'pve1', name: `race-${i}`, confirm: true }),
      ),
    );
    for (const r of results) expect(r.isError, text(r)).toBeFalsy();
    const ids = results.map((r) => r.structuredContent!.vmid as number).sort((a, b) => a - b);
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe(first);
    const posts = await sim.writes();
    // Three creations; both losers were refused at the shared id (and may race again on the
    // next one); every refused POST is accounted for in some call's attempts.
    expect(posts.filter((p) => p.status === 200)).toHaveLength(3);
    const refused = posts.filter((p) => p.status === 500).map((p) => Number(p.params!.vmid));
    expect(refused.filter((id) => id === first)).toHaveLength(2);
    for (const id of refused) expect(ids).toContain(id);
    const attempts = results.map((r) => r.structuredContent!.attempts as number);
    expect(attempts.reduce((a, b) => a + b, 0)).toBe(posts.length);
  });

  it('goes past an id that Proxmox offers again although it is taken', async () => {
    const taken = await nextFree();
    expect((await sim.api('POST', '/nodes/pve3/qemu', { vmid: String(taken) })).status).toBe(200);
    await sim.clearLog();
    await sim.fault({
      method: 'GET',
      path: '^/cluster/nextid$',
      times: 2,
      status: 200,
      contentType: 'application/json;charset=UTF-8',
      body: { data: String(taken) },
    });
    const result = await call(clients[0]!, 'pve_create_qemu_vm', { node: 'pve1', confirm: true });
    expect(result.isError, text(result)).toBeFalsy();
    const vmid = result.structuredContent!.vmid as number;
    expect(vmid).toBeGreaterThan(taken);
    const writes = (await sim.writes()).map((p) => [p.params!.vmid, p.status]);
    // The id offered twice was tried once; the id after it, then (if taken too) the real next one.
    expect(writes[0]).toEqual([String(taken), 500]);
    expect(writes[1]![0]).toBe(String(taken + 1));
    expect(writes.at(-1)).toEqual([String(vmid), 200]);
    expect(result.structuredContent!.attempts).toBe(writes.length);
  });
});

describe('wait is bounded by timeout_s', () => {
  it('never runs past it, even when a status poll hangs', async () => {
    // A Proxmox deadline of 30 s (PVE_TIMEOUT_MS, through a 2026-07-28 client: a 2025 session's
    // object reads the project's own 2 s): a poll not cut to the 1 s left would be held 30 s,
    // far past the bound below, which a busy machine cannot reach otherwise.
    const client = await connect2026({ fetch: workerFetchWith({ PVE_TIMEOUT_MS: '30000' }) });
    try {
      await sim.fault({ method: 'GET', path: '/tasks/.*/status$', hang: true, times: 10 });
      const started = Date.now();
      const result = (await client.callTool({
        name: 'pve_create_qemu_vm',
        arguments: { node: 'pve1', vmid: 7300, confirm: true, wait: true, timeout_s: 1 },
      })) as Awaited<ReturnType<typeof call>>;
      const took = Date.now() - started;
      expect(result.isError, text(result)).toBeFalsy();
      expect(result.structuredContent!.task).toEqual({
        status: 'unknown',
        exitstatus: null,
        succeeded: null,
      });
      expect(text(result)).toMatch(/did not come back within 1 s/);
      expect(took).toBeLessThan(10_000);
    } finally {
      await sim.reset();
      await client.close();
    }
  });
});
