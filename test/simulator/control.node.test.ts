// The control API: request log, faults, tenants, offline nodes, reset and config.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SEED_SUMMARY,
  SIMULATOR_TOKENS,
  startSimulator,
  type RunningSimulator,
} from '../../simulator/server.ts';
import { createSimClient, rawRequest } from '../../simulator/control/sim-client.ts';
import { getData } from '../support/sim-harness.ts';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ authFailDelayMs: 50, taskDurationMs: 100 });
});
afterAll(() => sim.close());

const client = () => createSimClient(sim.url, `ctl-${randomUUID().slice(0, 8)}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A GET over a bare socket (`Connection: close`), its head and body as sent, framing and all:
 * what fetch would undo (compression, chunks) or refuse. Read until the server closes, or for
 * `forMs` at most.
 */
async function rawGet(
  url: string,
  forMs = 5_000,
): Promise<{ head: string; body: Buffer; closed: boolean }> {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), forMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  socket.destroy();
  const raw = Buffer.concat(chunks);
  const split = raw.indexOf('\r\n\r\n');
  return {
    head: raw.subarray(0, split + 2).toString(),
    body: raw.subarray(split + 4),
    closed,
  };
}

describe('request log', () => {
  it('records method, path, query, redacted auth, body, params and framing', async () => {
    const c = client();
    await c.api('GET', '/cluster/resources', { query: { type: 'vm' } });
    await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 106, tags: 'a;b' } });
    await rawRequest(`${c.root}/api2/json/nodes/pve1/qemu`, {
      method: 'POST',
      body: 'vmid=107',
      chunked: true,
    });
    const [get, post, chunked] = await c.requests();
    expect(get).toMatchObject({
      seq: 1,
      method: 'GET',
      path: '/api2/json/cluster/resources',
      query: { type: 'vm' },
      body: null,
      status: 200,
      chunked: false,
      contentLength: null,
    });
    expect(get?.headers.authorization).toBe(`PVEAPIToken=${SIMULATOR_TOKENS.admin.id}=<redacted>`);
    expect(JSON.stringify(get)).not.toContain(SIMULATOR_TOKENS.admin.secret);
    expect(post).toMatchObject({
      method: 'POST',
      body: 'vmid=106&tags=a%3Bb',
      params: { vmid: '106', tags: 'a;b' },
      contentLength: 19,
      chunked: false,
      status: 200,
    });
    expect(chunked).toMatchObject({
      chunked: true,
      contentLength: null,
      body: 'vmid=107',
      status: 501,
    });
  });

  it('logs the decoded path pveproxy routes on, and the raw one as sent', async () => {
    const c = client();
    const upid = 'UPID:pve1:00001234:00005678:6B0D6503:qmcreate:999:root@pam!mcp:';
    await c.api('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`);
    const [entry] = await c.requests();
    expect(entry?.path).toBe(`/api2/json/nodes/pve1/tasks/${upid}/status`);
    expect(entry?.rawPath).toBe(`/api2/json/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`);
  });

  it('does not log control requests and can be cleared', async () => {
    const c = client();
    await c.api('GET', '/version');
    await c.requests();
    expect(await c.requests()).toHaveLength(1);
    await c.clearRequests();
    expect(await c.requests()).toEqual([]);
  });
});

describe('faults', () => {
  it('serves an injected status and HTML body, once by default', async () => {
    const c = client();
    const page = '<html><title>Sign in ・ Cloudflare Access</title></html>';
    await c.fault({
      path: '^/cluster/resources$',
      status: 200,
      body: page,
      contentType: 'text/html',
    });
    const faulted = await c.api('GET', '/cluster/resources');
    expect([faulted.status, faulted.headers.get('content-type'), faulted.text]).toEqual([
      200,
      'text/html',
      page,
    ]);
    expect((await c.api('GET', '/cluster/resources')).body.data).toBeInstanceOf(Array);
  });

  it('can redirect like Cloudflare Access', async () => {
    const c = client();
    const location = 'https://team.cloudflareaccess.com/cdn-cgi/access/login/pve.example.com';
    await c.fault({ path: '.*', status: 302, headers: { Location: location } });
    const res = await c.api('GET', '/version');
    expect([res.status, res.headers.get('location')]).toEqual([302, location]);
  });

  it('applies a fault `times` times, matching the method', async () => {
    const c = client();
    await c.fault({
      method: 'GET',
      path: '^/version$',
      status: 530,
      body: 'error code: 1033',
      times: 2,
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await c.api('GET', '/version')).status);
    expect(statuses).toEqual([530, 530, 200]);
  });

  it('sends a JSON object body as JSON with a custom reason', async () => {
    const c = client();
    await c.fault({
      path: '^/nodes$',
      status: 596,
      reason: 'Connection timed out',
      body: { data: null },
    });
    const res = await c.api('GET', '/nodes');
    expect([res.status, res.reason, res.body]).toEqual([
      596,
      'Connection timed out',
      { data: null },
    ]);
  });

  it('drops the connection without a response', async () => {
    const c = client();
    await c.fault({ path: '^/version$', drop: true });
    await expect(c.api('GET', '/version')).rejects.toThrow();
    expect((await c.requests())[0]?.status).toBeNull();
  });

  it('hangs until the client gives up', async () => {
    const c = client();
    await c.fault({ path: '^/version$', hang: true });
    await expect(rawRequest(`${c.root}/api2/json/version`, { timeoutMs: 200 })).rejects.toThrow(
      'timeout',
    );
  });

  it('delays a normal answer with delayMs alone', async () => {
    const c = client();
    await c.fault({ path: '^/version$', delayMs: 250 });
    const started = Date.now();
    expect((await c.api('GET', '/version')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
  });

  it.each([true, false])(
    'streams a body of streamBytes bytes (chunked: %s) and logs what it sent',
    async (chunked) => {
      const c = client();
      await c.fault({ path: '^/version$', streamBytes: 200_000, chunked });
      const res = await fetch(`${c.root}/api2/json/version`);
      expect(res.headers.get('content-length')).toBe(chunked ? null : '200000');
      const body = await res.text();
      expect([body.length, body.slice(0, 12), body.slice(-4)]).toEqual([
        200_000,
        '{"data":"xxx',
        'xx"}',
      ]);
      await sleep(20);
      expect((await c.requests())[0]?.streamed).toEqual({ bytes: 200_000, complete: true });
    },
  );

  it('streams a gzip-compressed body, its length the compressed one', async () => {
    const c = client();
    await c.fault({ path: '^/version$', streamBytes: 4 * 1024 * 1024, gzip: true, chunked: false });
    const { head, body } = await rawGet(`${c.root}/api2/json/version`);
    expect(head).toMatch(/\r\nContent-Encoding: gzip\r\n/);
    const declared = Number(/\r\nContent-Length: (\d+)\r\n/.exec(head)?.[1]);
    expect(declared).toBe(body.length);
    expect(declared).toBeLessThan(64 * 1024);
    const plain = gunzipSync(body).toString();
    expect([plain.length, plain.slice(0, 12), plain.slice(-4)]).toEqual([
      4 * 1024 * 1024,
      '{"data":"xxx',
      'xx"}',
    ]);
  });

  it('stalls a stream after its first piece (hang), the socket left open', async () => {
    const c = client();
    await c.fault({ path: '^/version$', streamBytes: 1000, chunked: false, hang: true });
    const { head, body, closed } = await rawGet(`${c.root}/api2/json/version`, 300);
    expect(head).toMatch(/\r\nContent-Length: 1000\r\n/);
    expect([body.toString(), closed]).toEqual(['{"data":"', false]);
  });

  it('sends a stream fault its headers: a Content-Length beside chunked framing', async () => {
    const c = client();
    const headers = { 'Content-Length': '10', 'Transfer-Encoding': 'chunked' };
    await c.fault({ path: '^/version$', streamBytes: 100, headers });
    const { head, body } = await rawGet(`${c.root}/api2/json/version`);
    expect(head).toMatch(/\r\nContent-Length: 10\r\n/);
    expect(head).toMatch(/\r\nTransfer-Encoding: chunked\r\n/);
    // Framed in chunks (hex length lines), 100 bytes of JSON in all.
    const unchunked = body.toString().replace(/(^|\r\n)[0-9a-f]+\r\n/g, '');
    expect(unchunked.replace(/\r\n$/, '')).toHaveLength(100);
  });

  const DROP_ALONE = "'drop' is a fault of its own: not with 'hang' or 'streamBytes'";
  const GZIP_STREAM = "'gzip' must be true or false, and true only with a streamBytes";
  it.each([
    [{ path: '.*', drop: true, hang: true }, DROP_ALONE],
    [{ path: '.*', drop: true, streamBytes: 100 }, DROP_ALONE],
    [{ path: '.*', gzip: true }, GZIP_STREAM],
    [{ path: '.*', gzip: true, streamBytes: 65 * 1024 * 1024 }, GZIP_STREAM],
  ])('refuses the fault %j', async (fault, message) => {
    const res = await fetch(`${client().root}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify(fault),
    });
    expect([res.status, await res.text()]).toEqual([400, expect.stringContaining(message)]);
  });

  it('makes the next create task fail with taskExitStatus', async () => {
    const c = client();
    await c.fault({
      method: 'POST',
      path: '^/nodes/[^/]+/qemu$',
      taskExitStatus: "unable to create VM 106 - can't lock file",
    });
    const res = await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 106 } });
    expect(res.status).toBe(200);
    await sleep(200);
    const status = await c.api(
      'GET',
      `/nodes/pve1/tasks/${encodeURIComponent(res.body.data as string)}/status`,
    );
    expect(status.body.data).toMatchObject({
      status: 'stopped',
      exitstatus: "unable to create VM 106 - can't lock file",
    });
    expect((await c.api('GET', '/cluster/nextid')).body.data).toBe('106');
  });
});

describe('tenants, nodes and reset', () => {
  it('keeps tenants isolated', async () => {
    const a = client();
    const b = client();
    await a.api('POST', '/nodes/pve1/qemu', { form: { vmid: 106 } });
    await a.setNodeOnline('pve2', false);
    expect((await a.api('GET', '/cluster/nextid')).body.data).toBe('107');
    expect((await b.api('GET', '/cluster/nextid')).body.data).toBe('106');
    expect((await b.api('GET', '/nodes/pve2/qemu')).status).toBe(200);
    expect(await b.requests()).toHaveLength(2);
  });

  it('answers 595 for an offline node and shows its guests as unknown', async () => {
    const c = client();
    await c.setNodeOnline('pve3', false);
    const res = await c.api('GET', '/nodes/pve3/qemu');
    expect([res.status, res.reason, res.text]).toEqual([595, 'No route to host', '']);
    const vm = (
      (await c.api('GET', '/cluster/resources', { query: { type: 'vm' } })).body.data as Record<
        string,
        unknown
      >[]
    ).find((item) => item.vmid === 105);
    expect(vm).toEqual({
      id: 'qemu/105',
      vmid: 105,
      node: 'pve3',
      type: 'qemu',
      status: 'unknown',
      tags: 'k8s',
    });
    const nodes = (await c.api('GET', '/nodes')).body.data as { node: string; status: string }[];
    expect(nodes.find((n) => n.node === 'pve3')?.status).toBe('offline');
    await c.setNodeOnline('pve3', true);
    expect((await c.api('GET', '/nodes/pve3/qemu')).status).toBe(200);
  });

  it('reset reseeds state, log, faults and node status', async () => {
    const c = client();
    await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 106 } });
    await c.setNodeOnline('pve1', false);
    await c.fault({ path: '.*', status: 503 });
    await c.reset();
    expect(await c.requests()).toEqual([]);
    expect((await c.api('GET', '/cluster/nextid')).body.data).toBe('106');
    expect((await c.api('GET', '/nodes/pve1/qemu')).status).toBe(200);
  });

  it('reseeds as a second, smaller cluster: other nodes and guests, VM 100 again', async () => {
    const c = client();
    await c.reset('small');
    const status = await getData<Record<string, unknown>[]>(c, '/cluster/status');
    expect(status[0]).toMatchObject({ type: 'cluster', name: c.root.split('/t/')[1], nodes: 2 });
    expect(status.slice(1).map((n) => [n.name, n.ip])).toEqual([
      ['hv1', '10.20.0.11'],
      ['hv2', '10.20.0.12'],
    ]);
    const guests = await getData<Record<string, unknown>[]>(c, '/cluster/resources', {
      type: 'vm',
    });
    expect(guests.map((g) => [g.vmid, g.name, g.node, g.status])).toEqual([
      [100, 'gw01', 'hv1', 'running'],
      [400, 'app01', 'hv1', 'running'],
      [401, 'app02', 'hv2', 'running'],
      [402, 'db02', 'hv2', 'stopped'],
      [410, 'cache01', 'hv2', 'running'],
    ]);
    expect(SEED_SUMMARY.small).toBe(`${status.length - 1} nodes, ${guests.length} guests`);
    expect(await getData(c, '/cluster/nextid')).toBe('101');
    // Every disk a config names is a volume of its storage, as in the full seed.
    const disks = await getData<{ volid: string }[]>(c, '/nodes/hv2/storage/local-lvm/content');
    expect(disks.map((d) => d.volid)).toEqual([
      'local-lvm:vm-401-disk-0',
      'local-lvm:vm-402-disk-0',
      'local-lvm:vm-410-disk-0',
    ]);
    const backups = await getData<{ volid: string; notes?: string }[]>(
      c,
      '/nodes/hv1/storage/local/content',
      { content: 'backup' },
    );
    expect(backups).toEqual([expect.objectContaining({ notes: 'nightly' })]);
    expect(backups[0]?.volid).toMatch(/^local:backup\/vzdump-qemu-400-/);
    // The seed holds: a reset keeps it, the guest starts and stops as any other.
    await c.api('POST', '/nodes/hv1/qemu', { form: { vmid: 101 } });
    await c.reset();
    expect(await getData(c, '/cluster/nextid')).toBe('101');
    const stop = await c.api('POST', '/nodes/hv1/qemu/100/status/stop');
    expect(stop.status, stop.text).toBe(200);
    await c.reset('full');
    expect(await getData(c, '/cluster/nextid')).toBe('106');
    const nodes = await getData<unknown[]>(c, '/nodes');
    const full = await getData<unknown[]>(c, '/cluster/resources', { type: 'vm' });
    expect(SEED_SUMMARY.full).toBe(`${nodes.length} nodes, ${full.length} guests`);
  });

  it('refuses a seed it does not have', async () => {
    const res = await fetch(`${client().root}/_sim/reset`, {
      method: 'POST',
      body: JSON.stringify({ seed: 'huge' }),
    });
    expect([res.status, await res.json()]).toEqual([
      400,
      { error: "'seed' must be one of full, small" },
    ]);
  });

  it('changes the task duration through config', async () => {
    const c = client();
    await c.configure({ taskDurationMs: 0 });
    const res = await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 106 } });
    const status = await c.api(
      'GET',
      `/nodes/pve1/tasks/${encodeURIComponent(res.body.data as string)}/status`,
    );
    expect(status.body.data).toMatchObject({ status: 'stopped', exitstatus: 'OK' });
  });

  it('refuses bad control input with 400', async () => {
    const res = await fetch(`${client().root}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ path: '(' }),
    });
    expect(res.status).toBe(400);
    const big = await fetch(`${client().root}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ path: '.*', streamBytes: 2 ** 40 }),
    });
    expect([big.status, await big.text()]).toEqual([
      400,
      expect.stringContaining("'streamBytes' must be an integer from 16 to 536870912"),
    ]);
  });
});

describe('guests', () => {
  it("shows a guest's config, pending changes, snapshots and run state", async () => {
    const c = client();
    const vm = await c.guest(101);
    expect(vm).toMatchObject({
      vmid: 101,
      type: 'qemu',
      node: 'pve1',
      status: 'running',
      qmpstatus: 'running',
      agentRunning: true,
      lock: null,
      pool: 'prod',
    });
    expect(vm.config).toMatchObject({ name: 'web02', parent: 'post-upgrade' });
    expect(Object.keys(vm.snapshots)).toEqual(['pre-upgrade', 'post-upgrade']);
    expect(vm.pending).toEqual({ values: {}, delete: [] });
    expect(vm.digest).toMatch(/^[0-9a-f]{40}$/);
  });

  it("settles tasks before answering, so a finished task's effect shows without an API call", async () => {
    const c = client();
    await c.api('POST', '/nodes/pve2/qemu/104/status/start');
    await sleep(150);
    expect((await c.guest(104)).status).toBe('running');
  });

  it('sets and clears a lock the API then honours', async () => {
    const c = client();
    expect(await c.setLock(104, 'backup')).toMatchObject({ lock: 'backup' });
    const res = await c.api('PUT', '/nodes/pve2/qemu/104/config', { form: { name: 'x' } });
    expect([res.status, res.body.message]).toEqual([500, 'VM is locked (backup)\n']);
    expect(await c.setLock(104, null)).toMatchObject({ lock: null });
    expect(
      (await c.api('PUT', '/nodes/pve2/qemu/104/config', { form: { name: 'x' } })).status,
    ).toBe(200);
  });

  it('switches the guest agent and the QMP status', async () => {
    const c = client();
    expect(await c.setAgent(105, true)).toMatchObject({ agentRunning: true });
    expect(await c.setQmpStatus(105, 'suspended')).toMatchObject({ qmpstatus: 'suspended' });
  });

  it.each<[string, string, unknown, number]>([
    ['an unknown guest', '/guests/999', undefined, 404],
    ['a lock the guest type does not have', '/guests/110/lock', { lock: 'suspended' }, 400],
    ['a lock that is not a string', '/guests/100/lock', { lock: 1 }, 400],
    ['an agent for a container', '/guests/110/agent', { running: true }, 400],
    ['a non-boolean agent state', '/guests/100/agent', { running: 'yes' }, 400],
    ['a QMP status for a stopped VM', '/guests/104/qmpstatus', { qmpstatus: 'paused' }, 400],
    ['an unknown QMP status', '/guests/100/qmpstatus', { qmpstatus: 'frozen' }, 400],
    ['an unknown guest endpoint', '/guests/100/bogus', {}, 404],
  ])('refuses %s', async (_name, path, body, status) => {
    const init: RequestInit =
      body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) };
    const res = await fetch(`${client().root}/_sim${path}`, init);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ error: expect.any(String) });
  });
});
