// Power actions over both transports against the simulator: without confirm a preview with the
// guest's state and zero writes; with it the one POST, a task, and with wait its end, and the
// guest's state changed (read past the API, from the simulator's own view). Guests already as
// asked are left alone; what Proxmox would refuse is refused before anything is sent.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text, TRANSPORTS } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const PVE_JSON = 'application/json;charset=UTF-8';

describe.each(TRANSPORTS)('power actions over %s', (kind) => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    await sim.config({ taskDurationMs: 200 });
    client = await connect(kind);
  });
  afterAll(() => client.close());
  beforeEach(() => sim.clearLog());

  it('previews a stop with the state and what it means, sending nothing', async () => {
    const r = await call(client, 'pve_stop_vm', { node: 'pve1', vmid: 101 });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      guest: { status: 'running', lock: null },
      request: { method: 'POST', path: '/nodes/pve1/qemu/101/status/stop', params: {} },
      note: expect.stringMatching(/hard power-off/),
    });
    expect(text(r)).toMatch(
      /^Preview only: nothing was sent to Proxmox\.\nVM 101 \(\S+\) on pve1 is running\. Stop is a hard power-off/,
    );
    expect(await sim.writes()).toEqual([]);
  });

  it.each([
    ['pve_start_vm', { node: 'pve2', vmid: 104 }, 'stopped', '/nodes/pve2/qemu/104/status/start'],
    [
      'pve_start_vm',
      { node: 'pve3', vmid: 301, vm_type: 'lxc' },
      'stopped',
      '/nodes/pve3/lxc/301/status/start',
    ],
    [
      'pve_shutdown_vm',
      { node: 'pve1', vmid: 101 },
      'running',
      '/nodes/pve1/qemu/101/status/shutdown',
    ],
    ['pve_reboot_vm', { node: 'pve1', vmid: 101 }, 'running', '/nodes/pve1/qemu/101/status/reboot'],
    [
      'pve_suspend_vm',
      { node: 'pve1', vmid: 101 },
      'running',
      '/nodes/pve1/qemu/101/status/suspend',
    ],
  ] as const)(
    'previews %s %j without confirm, sending nothing',
    async (tool, args, status, path) => {
      const r = await call(client, tool, args);
      expect(r.isError, text(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        mode: 'preview',
        guest: { status },
        request: { method: 'POST', path },
      });
      expect(text(r)).toMatch(/^Preview only: nothing was sent to Proxmox\./);
      expect(await sim.writes()).toEqual([]);
    },
  );

  it('stops, then starts, a VM, each waiting for its task', async () => {
    const stop = await call(client, 'pve_stop_vm', {
      node: 'pve1',
      vmid: 101,
      confirm: true,
      wait: true,
    });
    expect(stop.isError, text(stop)).toBeFalsy();
    expect(stop.structuredContent).toMatchObject({
      mode: 'started',
      upid: expect.stringMatching(/^UPID:pve1:.*:qmstop:101:/),
      task: { status: 'stopped', exitstatus: 'OK', succeeded: true },
    });
    expect((await sim.guest(101)).status).toBe('stopped');
    const start = await call(client, 'pve_start_vm', {
      node: 'pve1',
      vmid: 101,
      confirm: true,
      wait: true,
    });
    expect(start.structuredContent).toMatchObject({ mode: 'started', task: { succeeded: true } });
    expect((await sim.guest(101)).status).toBe('running');
    expect((await sim.writes()).map((w) => w.path)).toEqual([
      '/api2/json/nodes/pve1/qemu/101/status/stop',
      '/api2/json/nodes/pve1/qemu/101/status/start',
    ]);
  });

  it('shuts down with the timeout and force_stop Proxmox knows as forceStop', async () => {
    const r = await call(client, 'pve_shutdown_vm', {
      node: 'pve2',
      vmid: 103,
      timeout: 30,
      force_stop: true,
      confirm: true,
      wait: true,
    });
    expect(r.structuredContent).toMatchObject({
      request: { params: { timeout: '30', forceStop: '1' } },
      task: { succeeded: true },
    });
    const [post] = await sim.writes();
    expect(post!.params).toEqual({ timeout: '30', forceStop: '1' });
    expect((await sim.guest(103)).status).toBe('stopped');
  });

  it('leaves a guest that already is as asked alone, successfully, sending nothing', async () => {
    for (const [tool, args] of [
      ['pve_start_vm', { node: 'pve1', vmid: 100 }],
      ['pve_stop_vm', { node: 'pve2', vmid: 104 }],
      ['pve_shutdown_vm', { node: 'pve2', vmid: 104 }],
      ['pve_resume_vm', { node: 'pve1', vmid: 100 }],
    ] as const) {
      const r = await call(client, tool, { ...args, confirm: true });
      expect(r.isError, text(r)).toBeFalsy();
      expect(r.structuredContent!.mode).toBe('unchanged');
      expect(text(r)).toMatch(/Nothing to do; nothing was sent to Proxmox\.$/);
    }
    expect(await sim.writes()).toEqual([]);
  });

  it('suspends and resumes a VM (paused, then running again)', async () => {
    const pause = await call(client, 'pve_suspend_vm', {
      node: 'pve1',
      vmid: 100,
      confirm: true,
      wait: true,
    });
    expect(pause.structuredContent).toMatchObject({ task: { succeeded: true } });
    expect((await sim.guest(100)).qmpstatus).toBe('paused');
    const status = await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100 });
    expect(status.structuredContent).toMatchObject({ status: 'running', qmpstatus: 'paused' });
    // A paused VM cannot shut down cleanly: refused before sending, with what to do instead.
    const shutdown = await call(client, 'pve_shutdown_vm', {
      node: 'pve1',
      vmid: 100,
      confirm: true,
    });
    expect(shutdown.structuredContent!.error).toMatchObject({ kind: 'conflict' });
    expect(text(shutdown)).toMatch(
      /is paused, and a paused VM cannot shut down: resume it first, or pass force_stop: true\. Nothing was sent to Proxmox\./,
    );
    await sim.clearLog();
    const preview = await call(client, 'pve_resume_vm', { node: 'pve1', vmid: 100 });
    expect(preview.structuredContent).toMatchObject({
      mode: 'preview',
      guest: { status: 'running (paused)' },
      request: { method: 'POST', path: '/nodes/pve1/qemu/100/status/resume' },
    });
    expect(await sim.writes()).toEqual([]);
    const resume = await call(client, 'pve_resume_vm', {
      node: 'pve1',
      vmid: 100,
      confirm: true,
      wait: true,
    });
    expect(resume.structuredContent).toMatchObject({ task: { succeeded: true } });
    expect((await sim.guest(100)).qmpstatus).toBe('running');
  });

  it('reboots a running container', async () => {
    const r = await call(client, 'pve_reboot_vm', {
      node: 'pve2',
      vmid: 200,
      vm_type: 'lxc',
      confirm: true,
      wait: true,
    });
    expect(r.structuredContent).toMatchObject({
      upid: expect.stringMatching(/:vzreboot:200:/),
      task: { succeeded: true },
    });
  });

  it.each([
    [
      'a reboot of a stopped VM',
      'pve_reboot_vm',
      { node: 'pve2', vmid: 104 },
      /VM 104 .*is not running \(it is stopped\)/,
    ],
    [
      'a start of a template',
      'pve_start_vm',
      { node: 'pve1', vmid: 9000 },
      /is a template; templates never run/,
    ],
    [
      'a suspend of a stopped container',
      'pve_suspend_vm',
      { node: 'pve3', vmid: 301, vm_type: 'lxc' },
      /container 301 .*is not running/,
    ],
  ])('refuses %s before sending it', async (_label, tool, args, message) => {
    const r = await call(client, tool, { ...args, confirm: true });
    expect(r.isError).toBe(true);
    expect(r.structuredContent!.error).toMatchObject({ kind: 'conflict' });
    expect(text(r)).toMatch(message);
    expect(await sim.writes()).toEqual([]);
  });

  it('refuses to act on a locked guest, naming the lock', async () => {
    await sim.setLock(102, 'backup');
    try {
      const r = await call(client, 'pve_reboot_vm', { node: 'pve1', vmid: 102, confirm: true });
      expect(text(r)).toMatch(
        /VM 102 .*is locked \(backup\): Proxmox refuses this until the operation holding the lock ends\. Nothing was sent to Proxmox\./,
      );
      expect(await sim.writes()).toEqual([]);
    } finally {
      await sim.setLock(102, null);
    }
  });

  it("passes on Proxmox's own refusal of a power action (500, VM locked), scrubbed, after the one POST", async () => {
    await sim.fault({
      times: 1,
      method: 'POST',
      path: '/status/shutdown$',
      status: 500,
      reason: 'VM 101 is locked (backup)',
      contentType: PVE_JSON,
      body: { data: null, message: 'VM 101 is locked (backup)\n' },
    });
    const r = await call(client, 'pve_shutdown_vm', { node: 'pve1', vmid: 101, confirm: true });
    expect(r.isError).toBe(true);
    expect(r.structuredContent!.error).toMatchObject({
      kind: 'upstream.server_error',
      upstream_status: 500,
    });
    expect(text(r)).toMatch(/VM 101 is locked \(backup\)/);
    expect((await sim.writes()).map((w) => w.path)).toEqual([
      '/api2/json/nodes/pve1/qemu/101/status/shutdown',
    ]);
    expect((await sim.guest(101)).status).toBe('running');
  });

  it('names the node that is offline (595 from pveproxy) on a status read and a power action', async () => {
    await sim.setNode('pve3', 'offline');
    try {
      const read = await call(client, 'pve_get_vm_status', { node: 'pve3', vmid: 300 });
      expect(read.isError).toBe(true);
      expect(read.structuredContent!.error).toMatchObject({
        kind: 'upstream.node_unreachable',
        upstream_status: 595,
      });
      expect(text(read)).toMatch(/pveproxy could not reach node pve3 \(595 /);
      const start = await call(client, 'pve_start_vm', { node: 'pve3', vmid: 300, confirm: true });
      expect(start.isError).toBe(true);
      expect(start.structuredContent!.error).toMatchObject({ kind: 'upstream.node_unreachable' });
      expect(await sim.writes()).toEqual([]);
    } finally {
      await sim.setNode('pve3', 'online');
    }
  });

  it('reports a task that failed as an error result, with its exit status', async () => {
    await sim.fault({
      path: '/status/start$',
      taskExitStatus: 'start failed: QEMU exited with code 1',
    });
    const r = await call(client, 'pve_start_vm', {
      node: 'pve3',
      vmid: 300,
      confirm: true,
      wait: true,
    });
    expect(r.isError).toBe(true);
    expect(r.structuredContent!.task).toEqual({
      status: 'stopped',
      exitstatus: 'start failed: QEMU exited with code 1',
      succeeded: false,
    });
  });
});
