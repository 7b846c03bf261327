// The simulator at the HTTP level: pveproxy's envelope, headers, auth and transport refusals.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS, startSimulator, type RunningSimulator } from '../../simulator/server.ts';
import {
  adminAuthHeader,
  createSimClient,
  rawRequest,
} from '../../simulator/control/sim-client.ts';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ authFailDelayMs: 50, taskDurationMs: 200 });
});
afterAll(() => sim.close());

/** A fresh tenant per test keeps tests independent. */
const client = () => createSimClient(sim.url, `http-${randomUUID().slice(0, 8)}`);

describe('envelope and headers', () => {
  it('answers success as {data} with pveproxy headers', async () => {
    const res = await client().api('GET', '/version');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json;charset=UTF-8');
    expect(res.headers.get('server')).toBe('pve-api-daemon/3.0');
    expect(res.body).toEqual({
      data: { version: '9.1.3', release: '9.1', repoid: expect.stringMatching(/^[0-9a-f]{8,}$/) },
    });
  });

  it('uses 0/1 integers for flags and real resource shapes', async () => {
    const res = await client().api('GET', '/cluster/resources', { query: { type: 'vm' } });
    const items = res.body.data as Record<string, unknown>[];
    expect(items.map((i) => i.vmid)).toEqual([
      100, 101, 102, 103, 104, 105, 110, 120, 200, 201, 300, 301, 9000,
    ]);
    expect(items.find((i) => i.vmid === 9000)).toMatchObject({
      id: 'qemu/9000',
      type: 'qemu',
      template: 1,
      status: 'stopped',
    });
    expect(items.find((i) => i.vmid === 200)).toMatchObject({
      id: 'lxc/200',
      tags: 'prod;web',
      pool: 'prod',
      template: 0,
    });
    expect(items.find((i) => i.vmid === 300)).not.toHaveProperty('tags');
    for (const item of items)
      expect(item).toEqual(
        expect.objectContaining({ maxcpu: expect.any(Number), maxmem: expect.any(Number) }),
      );
  });

  it('lists a node with cpus (not maxcpu) and template only for templates', async () => {
    const res = await client().api('GET', '/nodes/pve1/qemu');
    const items = res.body.data as Record<string, unknown>[];
    expect(items.map((i) => i.vmid)).toEqual([100, 101, 102, 9000]);
    expect(items[0]).toHaveProperty('cpus', 2);
    expect(items[0]).not.toHaveProperty('maxcpu');
    expect(items[0]).not.toHaveProperty('template');
    expect(items[3]).toHaveProperty('template', 1);
  });

  it('returns the full list with nodes, storages and pools when no type is given', async () => {
    const types = new Set(
      ((await client().api('GET', '/cluster/resources')).body.data as { type: string }[]).map(
        (i) => i.type,
      ),
    );
    expect([...types].sort()).toEqual(['lxc', 'node', 'pool', 'qemu', 'storage']);
  });

  it('puts the first line of the message in the reason phrase and rejects bad enums with 400', async () => {
    const res = await client().api('GET', '/cluster/resources', { query: { type: 'vms' } });
    expect(res.status).toBe(400);
    expect(res.reason).toBe('Parameter verification failed.');
    expect(res.body).toEqual({
      data: null,
      message: 'Parameter verification failed.\n',
      errors: {
        type: "value 'vms' does not have a value in the enumeration 'vm, storage, node, sdn'",
      },
    });
  });

  it('answers unknown paths with 501 Method not implemented', async () => {
    const res = await client().api('GET', '/foo');
    expect(res.status).toBe(501);
    expect(res.body).toEqual({ data: null, message: "Method 'GET /foo' not implemented" });
  });

  it('answers an unknown node with 500 hostname lookup failed', async () => {
    const res = await client().api('GET', '/nodes/pve9/qemu');
    expect(res.status).toBe(500);
    expect(res.body.message).toBe(
      "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known\n",
    );
  });
});

describe('auth', () => {
  it('answers 401 No ticket with an empty body when no header is sent', async () => {
    const res = await client().api('GET', '/version', { token: null });
    expect([res.status, res.reason, res.text]).toEqual([401, 'No ticket', '']);
  });

  it.each([
    ['a wrong secret', { id: SIMULATOR_TOKENS.admin.id, secret: randomUUID() }],
    ['an unknown token', { id: 'root@pam!other', secret: SIMULATOR_TOKENS.admin.secret }],
    ['a malformed token id', { id: 'nobody', secret: 'x' }],
  ])('answers 401 Authentication failed! for %s', async (_label, token) => {
    const res = await client().api('GET', '/version', { token });
    expect([res.status, res.reason, res.text]).toEqual([401, 'Authentication failed!', '']);
  });

  it('splits the token at the last =', async () => {
    const res = await client().api('GET', '/version', {
      token: null,
      headers: {
        Authorization: `PVEAPIToken=${SIMULATOR_TOKENS.audit.id}=${SIMULATOR_TOKENS.audit.secret}`,
      },
    });
    expect(res.status).toBe(200);
  });

  it('delays every 401 by authFailDelayMs', async () => {
    const slow = await startSimulator({ authFailDelayMs: 400 });
    try {
      const started = Date.now();
      const res = await createSimClient(slow.url).api('GET', '/version', { token: null });
      expect(res.status).toBe(401);
      expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    } finally {
      await slow.close();
    }
  });
});

describe('transport refusals like pveproxy', () => {
  const url = (c: ReturnType<typeof client>, path: string) => `${c.root}/api2/json${path}`;

  it('refuses a chunked request body with 501 before auth', async () => {
    const res = await rawRequest(url(client(), '/nodes/pve1/qemu'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'vmid=150&name=chunky',
      chunked: true,
    });
    expect([res.status, res.reason, res.body]).toEqual([
      501,
      'chunked transfer encoding not supported',
      'chunked transfer encoding not supported',
    ]);
  });

  it("refuses a body on GET with 501 Unexpected content for method 'GET'", async () => {
    const res = await rawRequest(url(client(), '/version'), {
      headers: { Authorization: adminAuthHeader() },
      body: 'a=1',
    });
    expect([res.status, res.reason]).toEqual([501, "Unexpected content for method 'GET'"]);
  });

  it('takes DELETE parameters from the query string only; a DELETE body is refused like a GET body', async () => {
    const c = client();
    const res = await rawRequest(url(c, '/nodes/pve2/qemu/104'), {
      method: 'DELETE',
      headers: {
        Authorization: adminAuthHeader(),
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: 'purge=1',
    });
    expect([res.status, res.reason]).toEqual([501, "Unexpected content for method 'DELETE'"]);
    const bad = await c.api('DELETE', '/nodes/pve2/qemu/104', { query: { purge: 'yes' } });
    expect([bad.status, bad.body.errors]).toEqual([
      400,
      { purge: "type check ('boolean') failed - got 'yes'" },
    ]);
    expect(
      (await c.api('DELETE', '/nodes/pve2/qemu/104', { query: { purge: 1 } })).body.data,
    ).toMatch(/:qmdestroy:104:/);
  });

  it('takes PUT parameters from the body or the query string (the query wins)', async () => {
    const c = client();
    const res = await c.api('PUT', '/nodes/pve2/qemu/104/config', {
      form: { name: 'from-body', cores: 3 },
      query: { name: 'from-query' },
    });
    expect(res.body).toEqual({ data: null });
    const config = (await c.api('GET', '/nodes/pve2/qemu/104/config')).body.data;
    expect(config).toMatchObject({ name: 'from-query', cores: 3 });
  });

  it('refuses POST bodies over 512 KiB', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', {
      form: `vmid=150&description=${'x'.repeat(600 * 1024)}`,
    });
    expect([res.status, res.reason]).toEqual([501, 'for data too large']);
  });

  it('answers 506 for an unsupported Content-Type', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', {
      form: 'vmid=150',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(506);
    expect(res.reason).toBe("upload 'Content-Type 'text/plain' not implemented");
  });

  it('answers 500 with the decoder error for malformed JSON', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', {
      form: '{"vmid":',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(500);
    expect(res.text).toMatch(/^malformed JSON string/);
  });
});

describe('extra endpoints', () => {
  it('reports a token its own privileges (preflight)', async () => {
    const res = await client().api('GET', '/access/permissions', {
      token: SIMULATOR_TOKENS.audit,
      query: { path: '/vms' },
    });
    expect(res.body.data).toEqual({ '/vms': { 'Sys.Audit': 1, 'VM.Audit': 1 } });
    const admin = await client().api('GET', '/access/permissions', { query: { path: '/vms' } });
    expect(admin.body.data).toMatchObject({
      '/vms': { 'VM.Allocate': 1, 'Datastore.AllocateSpace': 1 },
    });
  });

  it('reads one VM status, and answers a missing config with 500', async () => {
    const c = client();
    expect((await c.api('GET', '/nodes/pve1/qemu/100/status/current')).body.data).toMatchObject({
      vmid: 100,
      status: 'running',
      qmpstatus: 'running',
    });
    const missing = await c.api('GET', '/nodes/pve1/qemu/999/status/current');
    expect([missing.status, missing.body.message]).toEqual([
      500,
      "Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist\n",
    ]);
  });

  it('lists storages of a node by content and pools', async () => {
    const c = client();
    const storages = (await c.api('GET', '/nodes/pve2/storage', { query: { content: 'images' } }))
      .body.data as { storage: string }[];
    expect(storages.map((s) => s.storage)).toEqual(['local-lvm', 'ceph-pool', 'local-zfs']);
    const pools = (await c.api('GET', '/pools')).body.data as { poolid: string }[];
    expect(pools.map((p) => p.poolid)).toEqual(['prod', 'lab']);
  });
});
