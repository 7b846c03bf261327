// Snapshots and tasks over both transports against the simulator: take, list, roll back to and
// delete snapshots (the tree and the guest's config checked in the simulator's own view), every
// write previewed with zero writes first; and a task followed by its UPID with its log's tail.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text, TRANSPORTS } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

describe.each(TRANSPORTS)('snapshots over %s', (kind) => {
  let client: Client;
  const vm = { node: 'pve2', vmid: 104 };
  beforeAll(async () => {
    await sim.reset();
    await sim.config({ taskDurationMs: 200 });
    client = await connect(kind);
  });
  afterAll(() => client.close());
  beforeEach(() => sim.clearLog());

  it('takes a snapshot after a preview that sent nothing', async () => {
    const preview = await call(client, 'pve_create_snapshot', {
      ...vm,
      snapname: 'before_upgrade',
      description: 'kernel 6.14',
    });
    expect(preview.structuredContent).toMatchObject({
      mode: 'preview',
      request: {
        method: 'POST',
        path: '/nodes/pve2/qemu/104/snapshot',
        params: { snapname: 'before_upgrade', description: 'kernel 6.14' },
      },
    });
    expect(await sim.writes()).toEqual([]);
    const done = await call(client, 'pve_create_snapshot', {
      ...vm,
      snapname: 'before_upgrade',
      description: 'kernel 6.14',
      confirm: true,
      wait: true,
    });
    expect(done.structuredContent).toMatchObject({
      upid: expect.stringMatching(/:qmsnapshot:104:/),
      task: { succeeded: true },
    });
    expect(Object.keys((await sim.guest(104)).snapshots)).toEqual(['before_upgrade']);
  });

  it('lists the tree and what the current state follows', async () => {
    await call(client, 'pve_create_snapshot', {
      ...vm,
      snapname: 'second',
      confirm: true,
      wait: true,
    });
    const r = await call(client, 'pve_list_snapshots', vm);
    expect(r.structuredContent).toMatchObject({
      current_parent: 'second',
      snapshots: [
        {
          name: 'before_upgrade',
          parent: null,
          description: 'kernel 6.14',
          vmstate: false,
          time: expect.stringMatching(/^\d{4}-/),
        },
        { name: 'second', parent: 'before_upgrade' },
      ],
    });
    expect(text(r)).toMatch(/has 2 snapshots; the current state follows second/);
  });

  it('refuses a name already taken, and vmstate on a container, before sending', async () => {
    const taken = await call(client, 'pve_create_snapshot', {
      ...vm,
      snapname: 'second',
      confirm: true,
    });
    expect(text(taken)).toMatch(
      /already has a snapshot named second .*Nothing was sent to Proxmox\./,
    );
    const ct = await call(client, 'pve_create_snapshot', {
      node: 'pve1',
      vmid: 110,
      vm_type: 'lxc',
      snapname: 'x1',
      vmstate: true,
      confirm: true,
    });
    expect(text(ct)).toMatch(/vmstate is for QEMU VMs only/);
    expect(await sim.writes()).toEqual([]);
  });

  it('rolls back to a snapshot: the config it held comes back', async () => {
    const before = (await sim.guest(104)).config.memory;
    await call(client, 'pve_stop_vm', { ...vm, confirm: true, wait: true }); // already stopped: unchanged
    // Change the memory past Proxmox's API under test, then roll back.
    const res = await sim.api('PUT', '/nodes/pve2/qemu/104/config', { memory: '4096' });
    expect(res.status).toBe(200);
    expect((await sim.guest(104)).config.memory).toBe('4096');
    await sim.clearLog();
    const preview = await call(client, 'pve_rollback_snapshot', { ...vm, snapname: 'second' });
    expect(preview.structuredContent!.note).toMatch(/discards everything since/);
    expect(await sim.writes()).toEqual([]);
    const done = await call(client, 'pve_rollback_snapshot', {
      ...vm,
      snapname: 'second',
      confirm: true,
      wait: true,
    });
    expect(done.structuredContent).toMatchObject({
      task: { succeeded: true },
      request: { path: '/nodes/pve2/qemu/104/snapshot/second/rollback' },
    });
    expect((await sim.guest(104)).config.memory).toBe(before);
  });

  it('deletes a snapshot, its child now following its parent', async () => {
    await sim.clearLog();
    const preview = await call(client, 'pve_delete_snapshot', {
      ...vm,
      snapname: 'before_upgrade',
    });
    expect(preview.structuredContent).toMatchObject({
      mode: 'preview',
      request: { method: 'DELETE', path: '/nodes/pve2/qemu/104/snapshot/before_upgrade' },
    });
    expect(preview.structuredContent!.note).toMatch(/second will follow nothing instead/);
    expect(await sim.writes()).toEqual([]);
    const done = await call(client, 'pve_delete_snapshot', {
      ...vm,
      snapname: 'before_upgrade',
      confirm: true,
      wait: true,
    });
    expect(done.structuredContent).toMatchObject({
      request: { method: 'DELETE', path: '/nodes/pve2/qemu/104/snapshot/before_upgrade' },
      task: { succeeded: true },
    });
    const list = await call(client, 'pve_list_snapshots', vm);
    expect(list.structuredContent!.snapshots).toMatchObject([{ name: 'second', parent: null }]);
  });

  it('refuses a snapshot that does not exist, naming those that do', async () => {
    const r = await call(client, 'pve_rollback_snapshot', {
      ...vm,
      snapname: 'nope',
      confirm: true,
    });
    expect(text(r)).toMatch(
      /VM 104 has no snapshot named nope \(it has second\)\. Nothing was sent to Proxmox\./,
    );
    expect(await sim.writes()).toEqual([]);
  });
});

describe.each(TRANSPORTS)('pve_get_task_status over %s', (kind) => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    await sim.config({ taskDurationMs: 400 });
    client = await connect(kind);
  });
  afterAll(() => client.close());

  it('follows a task by its UPID: running, then with wait its end and the tail of its log', async () => {
    // A creation with a disk and a cloud-init drive logs several lines.
    const started = await call(client, 'pve_create_qemu_vm', {
      node: 'pve2',
      vmid: 4444,
      scsi0: 'local-lvm:8',
      confirm: true,
    });
    const upid = started.structuredContent!.upid as string;
    const now = await call(client, 'pve_get_task_status', { node: 'pve2', upid });
    expect(now.structuredContent).toMatchObject({
      upid,
      node: 'pve2',
      type: 'qmcreate',
      id: '4444',
      status: 'running',
      succeeded: null,
    });
    const done = await call(client, 'pve_get_task_status', {
      node: 'pve2',
      upid,
      wait: true,
      timeout_s: 10,
      log_lines: 2,
    });
    expect(done.structuredContent).toMatchObject({
      status: 'stopped',
      exitstatus: 'OK',
      succeeded: true,
      started: expect.stringMatching(/^\d{4}-/),
    });
    // The tail is the end of the whole log, as Proxmox holds it.
    const res = await sim.api(
      'GET',
      `/nodes/pve2/tasks/${encodeURIComponent(upid)}/log?limit=1000`,
    );
    const whole = ((await res.json()) as { data: { t: string }[] }).data.map((l) => l.t);
    expect(whole.length).toBeGreaterThan(2);
    expect(done.structuredContent!.log).toEqual(whole.slice(-2));
    expect(done.structuredContent!.log_total).toBe(whole.length);
  });

  it('refuses a UPID asked on another node than the one it names, before sending', async () => {
    await sim.clearLog();
    const upid = 'UPID:pve1:00001234:00ABCDEF:6745A1B2:qmstart:100:root@pam:';
    const r = await call(client, 'pve_get_task_status', { node: 'pve2', upid });
    expect(r.structuredContent!.error).toMatchObject({
      kind: 'invalid_arguments',
      fields: [
        {
          field: 'node',
          message: 'the task runs on pve1, which its UPID names; pass node: "pve1"',
        },
      ],
    });
    expect(await sim.requests()).toEqual([]);
  });
});
