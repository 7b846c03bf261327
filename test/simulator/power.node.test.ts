// Power actions over HTTP: qmstart/qmstop/qmshutdown/qmreboot/qmpause/qmsuspend/qmresume and
// the vz* ones, the run state each leaves, and PVE's refusals (in the call or in the task).
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import {
  expectError,
  runTask,
  useSimulator,
  waitTask,
  type SimClient,
} from '../support/sim-harness.ts';

const client = useSimulator('power');
const vm = (node: string, vmid: number, action: string) =>
  `/nodes/${node}/qemu/${vmid}/status/${action}`;
const ct = (node: string, vmid: number, action: string) =>
  `/nodes/${node}/lxc/${vmid}/status/${action}`;

async function status(c: SimClient, path: string): Promise<Record<string, unknown>> {
  return (await c.api('GET', path.replace(/\/status\/\w+$/, '/status/current'))).body
    .data as Record<string, unknown>;
}

describe('qemu power actions', () => {
  it('starts a stopped VM as a qmstart task; it runs once the task ends', async () => {
    const c = client();
    await c.configure({ taskDurationMs: 1000 }); // long enough to look at the VM mid-task
    const res = await c.api('POST', vm('pve2', 104, 'start'));
    expect(res.body.data).toMatch(
      /^UPID:pve2:[0-9A-F]{8}:[0-9A-F]{8,9}:[0-9A-F]{8}:qmstart:104:root@pam!mcp:$/,
    );
    expect(await status(c, vm('pve2', 104, 'start'))).toMatchObject({
      status: 'stopped',
      qmpstatus: 'stopped',
    });
    expect((await waitTask(c, res.body.data)).exitstatus).toBe('OK');
    const now = await status(c, vm('pve2', 104, 'start'));
    expect(now).toMatchObject({
      status: 'running',
      qmpstatus: 'running',
      'running-machine': 'pc-q35-10.0+pve1',
    });
    expect(now.pid).toEqual(expect.any(Number));
  });

  it('fails the task, not the call, for a running VM, a template, a locked VM and a missing one', async () => {
    const c = client();
    expect((await runTask(c, 'POST', vm('pve1', 100, 'start'))).exitstatus).toBe(
      'VM 100 already running',
    );
    expect((await runTask(c, 'POST', vm('pve1', 9000, 'start'))).exitstatus).toBe(
      "you can't start a vm if it's a template",
    );
    await c.setLock(104, 'backup');
    const locked = await runTask(c, 'POST', vm('pve2', 104, 'start'));
    expect([locked.exitstatus, locked.log.at(-1)]).toEqual([
      'VM is locked (backup)',
      'TASK ERROR: VM is locked (backup)',
    ]);
    expect((await runTask(c, 'POST', vm('pve1', 999, 'start'))).exitstatus).toBe(
      "Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist",
    );
  });

  it('regenerates the cloud-init drive when a VM that has one starts', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve1/qemu/9000/clone', { newid: 150 });
    const end = await runTask(c, 'POST', vm('pve1', 150, 'start'));
    expect(end.log).toEqual(['generating cloud-init ISO', 'TASK OK']);
    expect((await runTask(c, 'POST', vm('pve2', 104, 'start'))).log).toEqual(['TASK OK']);
  });

  it('serializes tasks on one VM: a second start waits for the first, then finds it running', async () => {
    const c = client();
    const first = (await c.api('POST', vm('pve2', 104, 'start'))).body.data;
    const second = (await c.api('POST', vm('pve2', 104, 'start'))).body.data;
    expect((await waitTask(c, first)).exitstatus).toBe('OK');
    expect((await waitTask(c, second)).exitstatus).toBe('VM 104 already running');
  });

  it('refuses root-only options for a token', async () => {
    const c = client();
    expectError(await c.api('POST', vm('pve2', 104, 'start'), { form: { skiplock: 1 } }), 400, {
      skiplock: 'Only root may use this option.',
    });
    expectError(await c.api('POST', vm('pve1', 100, 'stop'), { form: { keepActive: 1 } }), 400, {
      keepActive: 'Only root may use this option.',
    });
  });

  it('cannot start a VM whose bridge is missing on the node (the qmstart task fails)', async () => {
    const c = client();
    await c.api('PUT', '/nodes/pve2/qemu/104/config', { form: { net0: 'virtio,bridge=vmbr7' } });
    const end = await runTask(c, 'POST', vm('pve2', 104, 'start'));
    expect(end.exitstatus).toBe('start failed: QEMU exited with code 1');
    expect(end.log).toContain("bridge 'vmbr7' does not exist");
    expect((await c.guest(104)).status).toBe('stopped');
  });

  it('shuts down and stops; for a stopped VM both are no-op tasks', async () => {
    const c = client();
    expect(
      (await runTask(c, 'POST', vm('pve1', 100, 'shutdown'), { timeout: 30, forceStop: 1 }))
        .exitstatus,
    ).toBe('OK');
    expect((await c.guest(100)).status).toBe('stopped');
    expect((await runTask(c, 'POST', vm('pve1', 101, 'stop'))).exitstatus).toBe('OK');
    expect((await c.guest(101)).status).toBe('stopped');
    const noop = await runTask(c, 'POST', vm('pve2', 104, 'shutdown'));
    expect([noop.exitstatus, noop.status.type]).toEqual(['OK', 'qmshutdown']);
    expect((await runTask(c, 'POST', vm('pve2', 104, 'stop'))).exitstatus).toBe('OK');
  });

  it('refuses to stop a locked VM in the task', async () => {
    const c = client();
    await c.setLock(100, 'snapshot');
    expect((await runTask(c, 'POST', vm('pve1', 100, 'stop'))).exitstatus).toBe(
      'VM is locked (snapshot)',
    );
    expect((await c.guest(100)).status).toBe('running');
  });

  it('refuses to shut down a paused VM unless forceStop is given', async () => {
    const c = client();
    for (const qmpstatus of ['paused', 'prelaunch', 'suspended']) {
      await c.setQmpStatus(100, qmpstatus);
      expectError(
        await c.api('POST', vm('pve1', 100, 'shutdown')),
        500,
        'VM is paused - cannot shutdown',
      );
      expectError(
        await c.api('POST', vm('pve1', 100, 'reboot')),
        500,
        'VM is paused - cannot shutdown',
      );
    }
    expect(
      (await runTask(c, 'POST', vm('pve1', 100, 'shutdown'), { forceStop: 1 })).exitstatus,
    ).toBe('OK');
    expect((await c.guest(100)).status).toBe('stopped');
  });

  it('reboots a running VM (new uptime, pending changes applied) and refuses a stopped one', async () => {
    const c = client();
    expectError(await c.api('POST', vm('pve2', 104, 'reboot')), 500, 'VM 104 not running');
    expectError(
      await c.api('POST', vm('pve1', 999, 'reboot')),
      500,
      "unable to find configuration file for VM 999 on node 'pve1'",
    );
    await c.api('PUT', '/nodes/pve1/qemu/100/config', { form: { memory: 6144 } });
    expect((await c.guest(100)).pending.values).toEqual({ memory: '6144' });
    const before = Number((await status(c, vm('pve1', 100, 'reboot'))).uptime);
    expect((await runTask(c, 'POST', vm('pve1', 100, 'reboot'))).status.type).toBe('qmreboot');
    const after = await status(c, vm('pve1', 100, 'reboot'));
    expect(after).toMatchObject({ status: 'running', maxmem: 6144 * 1024 ** 2 });
    expect(Number(after.uptime)).toBeLessThan(before);
    expect((await c.guest(100)).pending.values).toEqual({});
  });

  it('pauses and resumes (qmpause, qmresume); refuses both for a stopped VM', async () => {
    const c = client();
    expectError(await c.api('POST', vm('pve2', 104, 'suspend')), 500, 'VM 104 not running');
    expectError(await c.api('POST', vm('pve2', 104, 'resume')), 500, 'VM 104 not running');
    expect((await runTask(c, 'POST', vm('pve1', 100, 'suspend'))).status.type).toBe('qmpause');
    expect(await status(c, vm('pve1', 100, 'suspend'))).toMatchObject({
      status: 'running',
      qmpstatus: 'paused',
    });
    expect((await runTask(c, 'POST', vm('pve1', 100, 'resume'))).status.type).toBe('qmresume');
    expect(await status(c, vm('pve1', 100, 'resume'))).toMatchObject({
      status: 'running',
      qmpstatus: 'running',
    });
  });

  it('suspends to disk (qmsuspend: state volume, lock suspended) and resumes from it', async () => {
    const c = client();
    const end = await runTask(c, 'POST', vm('pve1', 100, 'suspend'), { todisk: 1 });
    expect(end.status.type).toBe('qmsuspend');
    expect(end.log).toContain("saving VM state and RAM using storage 'local-lvm'");
    const suspended = await c.guest(100);
    expect(suspended).toMatchObject({ status: 'stopped', lock: 'suspended' });
    const state = suspended.config.vmstate ?? '';
    expect(state).toMatch(/^local-lvm:vm-100-state-suspend-\d{4}-\d{2}-\d{2}$/);
    const content = await c.api('GET', '/nodes/pve1/storage/local-lvm/content', {
      query: { vmid: 100 },
    });
    expect((content.body.data as { volid: string }[]).map((v) => v.volid)).toContain(state);
    expect((await runTask(c, 'POST', vm('pve1', 100, 'resume'))).exitstatus).toBe('OK');
    const resumed = await c.guest(100);
    expect(resumed).toMatchObject({ status: 'running', lock: null });
    expect(resumed.config).not.toHaveProperty('vmstate');
    const after = await c.api('GET', '/nodes/pve1/storage/local-lvm/content', {
      query: { vmid: 100 },
    });
    expect((after.body.data as { volid: string }[]).map((v) => v.volid)).not.toContain(state);
  });

  it('stop with overrule-shutdown kills a running shutdown task', async () => {
    const c = client();
    await c.configure({ taskDurationMs: 5000 }); // a guest slow to shut down
    const shutdown = (await c.api('POST', vm('pve1', 100, 'shutdown'))).body.data as string;
    await c.configure({ taskDurationMs: 40 });
    const stop = (
      await c.api('POST', vm('pve1', 100, 'stop'), { form: { 'overrule-shutdown': 1 } })
    ).body.data;
    const stopped = await waitTask(c, stop);
    expect(stopped.log).toContain(`overruled qmshutdown tasks: ${shutdown}`);
    expect((await waitTask(c, shutdown)).exitstatus).toBe('received interrupt');
    expect((await c.guest(100)).status).toBe('stopped');
  });

  it('needs VM.PowerMgmt (403 before anything else)', async () => {
    const c = client();
    const res = await c.api('POST', vm('pve1', 100, 'stop'), { token: SIMULATOR_TOKENS.audit });
    expectError(res, 403, 'Permission check failed (/vms/100, VM.PowerMgmt)');
  });
});

describe('lxc power actions', () => {
  it('starts, shuts down, stops and reboots with vz* tasks', async () => {
    const c = client();
    expect((await runTask(c, 'POST', ct('pve3', 301, 'start'))).status.type).toBe('vzstart');
    expect(await status(c, ct('pve3', 301, 'start'))).toMatchObject({
      status: 'running',
      type: 'lxc',
    });
    expect((await runTask(c, 'POST', ct('pve3', 301, 'reboot'))).status.type).toBe('vzreboot');
    expect(
      (await runTask(c, 'POST', ct('pve3', 301, 'shutdown'), { timeout: 10 })).status.type,
    ).toBe('vzshutdown');
    expect((await c.guest(301)).status).toBe('stopped');
    expect((await runTask(c, 'POST', ct('pve1', 110, 'stop'))).status.type).toBe('vzstop');
    expect((await c.guest(110)).status).toBe('stopped');
  });

  it('refuses in the call what qemu refuses in the task', async () => {
    const c = client();
    expectError(await c.api('POST', ct('pve1', 110, 'start')), 500, 'CT 110 already running');
    expectError(await c.api('POST', ct('pve3', 301, 'stop')), 500, 'CT 301 not running');
    expectError(await c.api('POST', ct('pve3', 301, 'shutdown')), 500, 'CT 301 not running');
    expectError(await c.api('POST', ct('pve3', 301, 'reboot')), 500, 'VM 301 not running');
    expectError(await c.api('POST', ct('pve3', 301, 'suspend')), 500, 'CT 301 not running');
    expectError(await c.api('POST', ct('pve1', 110, 'resume')), 500, 'CT 110 already running');
  });

  it('honours locks except "mounted" for stop', async () => {
    const c = client();
    await c.setLock(200, 'backup');
    expect((await runTask(c, 'POST', ct('pve2', 200, 'stop'))).exitstatus).toBe(
      'CT is locked (backup)',
    );
    await c.setLock(200, 'mounted');
    expect((await runTask(c, 'POST', ct('pve2', 200, 'stop'))).exitstatus).toBe('OK');
    expect((await c.guest(200)).status).toBe('stopped');
  });

  it('suspends by checkpoint (the container stops) and resumes from it', async () => {
    const c = client();
    expect((await runTask(c, 'POST', ct('pve2', 201, 'suspend'))).status.type).toBe('vzsuspend');
    expect(await c.guest(201)).toMatchObject({ status: 'stopped', checkpointed: true });
    expect((await runTask(c, 'POST', ct('pve2', 201, 'resume'))).status.type).toBe('vzresume');
    expect(await c.guest(201)).toMatchObject({ status: 'running', checkpointed: false });
    const nothing = await runTask(c, 'POST', ct('pve3', 301, 'resume'));
    expect(nothing.exitstatus).toBe(
      "command 'lxc-checkpoint -n 301 -r --foreground -D /var/lib/vz/dump' failed: exit code 1",
    );
  });
});
