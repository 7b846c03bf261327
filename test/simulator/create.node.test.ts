// POST /nodes/{node}/qemu end to end: validation like PVE, permissions, the qmcreate task and
// its effect on /cluster/resources and /cluster/nextid.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS, startSimulator, type RunningSimulator } from '../../simulator/server.ts';
import { createSimClient } from '../../simulator/control/sim-client.ts';

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startSimulator({ authFailDelayMs: 50, taskDurationMs: 300 });
});
afterAll(() => sim.close());

const client = () => createSimClient(sim.url, `create-${randomUUID().slice(0, 8)}`);
type Client = ReturnType<typeof client>;

const UPID_RE = /^UPID:pve1:[0-9A-F]{8}:[0-9A-F]{8,9}:[0-9A-F]{8}:qmcreate:106:root@pam!mcp:$/;

async function resource(c: Client, vmid: number): Promise<Record<string, unknown> | undefined> {
  const res = await c.api('GET', '/cluster/resources', { query: { type: 'vm' } });
  return (res.body.data as Record<string, unknown>[]).find((item) => item.vmid === vmid);
}

async function taskStatus(c: Client, upid: string): Promise<Record<string, unknown>> {
  const res = await c.api('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`);
  expect(res.status).toBe(200);
  return res.body.data as Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('creating a VM', () => {
  it('returns a UPID, runs a task, then shows the VM and moves nextid', async () => {
    const c = client();
    expect((await c.api('GET', '/cluster/nextid')).body).toEqual({ data: '106' });
    const res = await c.api('POST', '/nodes/pve1/qemu', {
      form: {
        vmid: 106,
        name: 'web03',
        memory: 2048,
        cores: 2,
        scsi0: 'local-lvm:32,iothread=1',
        ide2: 'local:iso/debian-13.1.0-amd64-netinst.iso,media=cdrom',
        net0: 'virtio,bridge=vmbr0',
        boot: 'order=scsi0;ide2;net0',
        tags: 'web;Test',
        pool: 'prod',
        start: 1,
      },
    });
    expect(res.status).toBe(200);
    const upid = res.body.data as string;
    expect(upid).toMatch(UPID_RE);

    expect(await taskStatus(c, upid)).toMatchObject({
      status: 'running',
      type: 'qmcreate',
      id: '106',
      user: 'root@pam',
      tokenid: 'mcp',
      upid,
    });
    expect(await resource(c, 106)).toMatchObject({ lock: 'create', status: 'stopped' });
    expect((await c.api('GET', '/cluster/nextid')).body.data).toBe('107');

    await sleep(400);
    const done = await taskStatus(c, upid);
    expect(done).toMatchObject({ status: 'stopped', exitstatus: 'OK' });
    const vm = await resource(c, 106);
    expect(vm).toMatchObject({
      name: 'web03',
      status: 'running',
      maxcpu: 2,
      maxmem: 2048 * 1024 ** 2,
      tags: 'test;web',
      pool: 'prod',
      maxdisk: 32 * 1024 ** 3,
    });
    expect(vm).not.toHaveProperty('lock');
    const log = await c.api('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/log`);
    expect((log.body.data as { t: string }[]).map((line) => line.t)).toContain(
      "scsi0: successfully created disk 'local-lvm:vm-106-disk-0,iothread=1,size=32G'",
    );
    expect(log.body.total).toBeGreaterThan(0);
  });

  it('accepts JSON bodies with JSON booleans', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', {
      json: { vmid: 106, start: false, cores: 1, memory: '512' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatch(UPID_RE);
  });

  it('rejects a form boolean true with 400', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', {
      form: { vmid: 106, start: 'true' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ start: "type check ('boolean') failed - got 'true'" });
  });

  it('breaks an unencoded tags=a;b (PVE also splits forms on ;) but accepts it encoded', async () => {
    const c = client();
    const broken = await c.api('POST', '/nodes/pve1/qemu', { form: 'vmid=106&tags=a;b' });
    expect(broken.status).toBe(400);
    expect(broken.body.errors).toEqual({
      b: 'property is not defined in schema and the schema does not allow additional properties',
    });
    const encoded = await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 106, tags: 'a;b' } });
    expect(encoded.status).toBe(200);
  });

  it('rejects unknown parameters, all errors at once', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', {
      form: { vmid: 106, foo: 1, cores: 0, memory: 8 },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({
      foo: 'property is not defined in schema and the schema does not allow additional properties',
      cores: 'value must have a minimum value of 1',
      memory:
        'invalid format - format error\nmemory.current: value must have a minimum value of 16\n',
    });
  });

  it('requires media=cdrom for ISO images', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', {
      form: { vmid: 106, ide2: 'local:iso/debian-13.1.0-amd64-netinst.iso' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({ ide2: "explicit 'media=cdrom' is required for iso images" });
  });

  it('refuses an existing vmid anywhere in the cluster with 500', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', { form: { vmid: 200 } });
    expect(res.status).toBe(500);
    expect(res.body.message).toBe(
      "unable to create VM 200 - CT 200 already exists on node 'pve2'\n",
    );
  });

  it('checks storages: unknown → 500, no images content → 400', async () => {
    const c = client();
    const unknown = await c.api('POST', '/nodes/pve1/qemu', {
      form: { vmid: 106, scsi0: 'fast:32' },
    });
    expect([unknown.status, unknown.body.message]).toEqual([
      500,
      "storage 'fast' does not exist\n",
    ]);
    const noImages = await c.api('POST', '/nodes/pve1/qemu', {
      form: { vmid: 106, scsi0: 'local:32' },
    });
    expect([noImages.status, noImages.body.errors]).toEqual([
      400,
      { storage: "storage 'local' does not support vm images" },
    ]);
  });

  it('refuses a pool that does not exist with 403', async () => {
    const res = await client().api('POST', '/nodes/pve1/qemu', {
      form: { vmid: 106, pool: 'nope' },
    });
    expect([res.status, res.body.message]).toEqual([
      403,
      "Permission check failed (pool 'nope' does not exist)\n",
    ]);
  });

  it('fails the task (not the request) for an ISO missing on that node, and removes the VM', async () => {
    const c = client();
    // The Windows ISO exists only on pve1's local storage.
    const res = await c.api('POST', '/nodes/pve2/qemu', {
      form: { vmid: 106, ide2: 'local:iso/Win11_24H2_English_x64.iso,media=cdrom' },
    });
    expect(res.status).toBe(200);
    await sleep(400);
    const status = await c.api(
      'GET',
      `/nodes/pve2/tasks/${encodeURIComponent(res.body.data as string)}/status`,
    );
    expect(status.body.data).toMatchObject({
      status: 'stopped',
      exitstatus:
        'unable to create VM 106 - volume local:iso/Win11_24H2_English_x64.iso does not exist',
    });
    expect(await resource(c, 106)).toBeUndefined();
  });
});

describe('permissions', () => {
  it('lets the audit token list but not create (403)', async () => {
    const c = client();
    const token = SIMULATOR_TOKENS.audit;
    expect((await c.api('GET', '/cluster/resources', { token })).status).toBe(200);
    const res = await c.api('POST', '/nodes/pve1/qemu', { token, form: { vmid: 106 } });
    expect(res.status).toBe(403);
    // create_vm checks VM.Allocate quietly, then raises a permission error without a path.
    expect(res.body.message).toBe('Permission check failed\n');
    const withStart = await c.api('POST', '/nodes/pve1/qemu', {
      token,
      form: { vmid: 106, start: 1 },
    });
    expect(withStart.body.message).toBe('Permission check failed (/vms/106, VM.PowerMgmt)\n');
  });

  it('hides storages and pools from the audit token', async () => {
    const res = await client().api('GET', '/cluster/resources', { token: SIMULATOR_TOKENS.audit });
    const items = res.body.data as { type: string; pool?: string }[];
    expect(
      items.some((i) => i.type === 'storage' || i.type === 'pool' || i.pool !== undefined),
    ).toBe(false);
  });
});

describe('nextid and tasks', () => {
  it('returns a requested free id as a string and refuses a taken one', async () => {
    const c = client();
    expect((await c.api('GET', '/cluster/nextid', { query: { vmid: 250 } })).body).toEqual({
      data: '250',
    });
    const taken = await c.api('GET', '/cluster/nextid', { query: { vmid: 200 } });
    expect([taken.status, taken.body.errors]).toEqual([400, { vmid: 'VM 200 already exists' }]);
  });

  it('answers unknown UPIDs like Tasks.pm', async () => {
    const c = client();
    const bad = await c.api('GET', '/nodes/pve1/tasks/not-a-upid/status');
    expect([bad.status, bad.body.errors]).toEqual([400, { upid: 'unable to parse worker upid' }]);
    const upid = 'UPID:pve1:00001234:00005678:6B0D6503:qmcreate:999:root@pam!mcp:';
    const unknown = await c.api('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`);
    expect([unknown.status, unknown.body.errors]).toEqual([400, { upid: 'no such task' }]);
  });
});

describe('bridges', () => {
  it('creates a VM with an unknown bridge but cannot start it, like PVE', async () => {
    const c = client();
    const res = await c.api('POST', '/nodes/pve2/qemu', {
      form: { vmid: 106, net0: 'virtio,bridge=vmbr1', start: 1 },
    });
    expect(res.status).toBe(200);
    await sleep(400);
    expect(await resource(c, 106)).toMatchObject({ status: 'stopped' });
  });

  it('refuses an unknown bridge up front with strictBridges', async () => {
    const c = client();
    await c.configure({ strictBridges: true });
    const res = await c.api('POST', '/nodes/pve2/qemu', {
      form: { vmid: 106, net0: 'virtio,bridge=vmbr1' },
    });
    expect([res.status, res.body.message]).toEqual([500, "bridge 'vmbr1' does not exist\n"]);
    expect(
      (
        await c.api('POST', '/nodes/pve1/qemu', {
          form: { vmid: 106, net0: 'virtio,bridge=vmbr1' },
        })
      ).status,
    ).toBe(200);
  });
});
