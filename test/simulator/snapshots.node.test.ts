// Snapshots over HTTP: the tree with its `current` entry, create (lock, RAM state), delete
// (re-parenting), rollback (config, disks, run state) and PVE's refusals.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import {
  expectError,
  runTask,
  useSimulator,
  waitTask,
  type SimClient,
} from '../support/sim-harness.ts';

const client = useSimulator('snap');
const snaps = (type: string, node: string, vmid: number) =>
  `/nodes/${node}/${type}/${vmid}/snapshot`;

type Entry = {
  name: string;
  parent?: string;
  vmstate?: number;
  snaptime?: number;
  description: string;
  snapstate?: string;
  running?: number;
  digest?: string;
};

async function list(
  c: SimClient,
  type: string,
  node: string,
  vmid: number,
): Promise<Record<string, Entry>> {
  const res = await c.api('GET', snaps(type, node, vmid));
  return Object.fromEntries((res.body.data as Entry[]).map((e) => [e.name, e]));
}

describe('the snapshot list', () => {
  it('lists the tree and the current state with its digest', async () => {
    const c = client();
    const tree = await list(c, 'qemu', 'pve1', 101);
    expect(tree['pre-upgrade']).toEqual({
      name: 'pre-upgrade',
      snaptime: expect.any(Number),
      vmstate: 0,
      description: 'Before the Debian 13 upgrade',
    });
    expect(tree['post-upgrade']).toMatchObject({
      parent: 'pre-upgrade',
      vmstate: 1,
      description: '',
    });
    expect(tree.current).toEqual({
      name: 'current',
      parent: 'post-upgrade',
      running: 1,
      description: 'You are here!',
      digest: (await c.guest(101)).digest,
    });
    const ct = await list(c, 'lxc', 'pve2', 201);
    expect(ct['before-grafana-12']).not.toHaveProperty('vmstate');
    expect(ct.current?.parent).toBe('before-grafana-12');
  });
});

describe('creating snapshots', () => {
  it('locks the VM while the qmsnapshot task runs, then makes the snapshot the parent', async () => {
    const c = client();
    await c.configure({ taskDurationMs: 1000 }); // long enough to look at the VM mid-task
    const upid = (
      await c.api('POST', snaps('qemu', 'pve1', 100), {
        form: { snapname: 'before-update', description: 'pre 6.14' },
      })
    ).body.data;
    expect(upid).toMatch(/:qmsnapshot:100:/);
    expect((await c.guest(100)).lock).toBe('snapshot');
    expect((await list(c, 'qemu', 'pve1', 100))['before-update']).toMatchObject({
      snapstate: 'prepare',
    });
    const end = await waitTask(c, upid);
    expect(end.log).toEqual([
      "snapshotting 'drive-scsi0' (local-lvm:vm-100-disk-0)",
      '  Logical volume "snap_vm-100-disk-0_before-update" created.',
      'TASK OK',
    ]);
    const tree = await list(c, 'qemu', 'pve1', 100);
    expect(tree['before-update']).toEqual({
      name: 'before-update',
      snaptime: expect.any(Number),
      vmstate: 0,
      description: 'pre 6.14',
    });
    expect(tree.current?.parent).toBe('before-update');
    expect((await c.guest(100)).lock).toBeNull();
    await c.configure({ taskDurationMs: 40 });
    await runTask(c, 'POST', snaps('qemu', 'pve1', 100), { snapname: 'second' });
    expect((await list(c, 'qemu', 'pve1', 100)).second?.parent).toBe('before-update');
  });

  it('saves the RAM of a running VM with vmstate=1, not of a stopped one', async () => {
    const c = client();
    const end = await runTask(c, 'POST', snaps('qemu', 'pve1', 100), {
      snapname: 'with-ram',
      vmstate: 1,
    });
    expect(end.log).toContain("saving VM state and RAM using storage 'local-lvm'");
    expect((await list(c, 'qemu', 'pve1', 100))['with-ram']?.vmstate).toBe(1);
    expect((await c.guest(100)).snapshots['with-ram']?.vmstate).toBe(
      'local-lvm:vm-100-state-with-ram',
    );
    await runTask(c, 'POST', snaps('qemu', 'pve2', 104), { snapname: 'stopped', vmstate: 1 });
    expect((await list(c, 'qemu', 'pve2', 104)).stopped?.vmstate).toBe(0);
  });

  it('refuses reserved and invalid names, duplicates, templates and locked guests', async () => {
    const c = client();
    expectError(
      await c.api('POST', snaps('qemu', 'pve1', 100), { form: { snapname: 'current' } }),
      500,
      "unable to use snapshot name 'current' (reserved name)",
    );
    expectError(
      await c.api('POST', snaps('qemu', 'pve1', 100), { form: { snapname: 'Pending' } }),
      500,
      "unable to use snapshot name 'pending' (reserved name)",
    );
    expectError(
      await c.api('POST', snaps('lxc', 'pve1', 110), { form: { snapname: 'vzdump' } }),
      500,
      "unable to use snapshot name 'vzdump' (reserved name)",
    );
    expectError(
      await c.api('POST', snaps('qemu', 'pve1', 100), { form: { snapname: '1st' } }),
      400,
      { snapname: "invalid format - invalid configuration ID '1st'\n" },
    );
    expectError(
      await c.api('POST', snaps('qemu', 'pve1', 999), { form: { snapname: 'nope' } }),
      500,
      "Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist",
    );
    expect(
      (await runTask(c, 'POST', snaps('qemu', 'pve1', 101), { snapname: 'pre-upgrade' }))
        .exitstatus,
    ).toBe("snapshot name 'pre-upgrade' already used");
    expect(
      (await runTask(c, 'POST', snaps('qemu', 'pve1', 9000), { snapname: 'base' })).exitstatus,
    ).toBe("you can't take a snapshot if it's a template");
    await c.setLock(110, 'backup');
    expect(
      (await runTask(c, 'POST', snaps('lxc', 'pve1', 110), { snapname: 'busy' })).exitstatus,
    ).toBe('CT is locked (backup)');
  });

  it('needs VM.Snapshot', async () => {
    const res = await client().api('POST', snaps('qemu', 'pve1', 100), {
      form: { snapname: 'x1' },
      token: SIMULATOR_TOKENS.audit,
    });
    expectError(res, 403, 'Permission check failed (/vms/100, VM.Snapshot)');
  });
});

describe('deleting snapshots', () => {
  it('re-parents the children of a deleted snapshot', async () => {
    const c = client();
    for (const name of ['s1', 's2', 's3'])
      await runTask(c, 'POST', snaps('qemu', 'pve1', 100), { snapname: name });
    const end = await runTask(c, 'DELETE', `${snaps('qemu', 'pve1', 100)}/s2`);
    expect([end.status.type, end.log]).toEqual([
      'qmdelsnapshot',
      ['  Logical volume "snap_vm-100-disk-0_s2" successfully removed.', 'TASK OK'],
    ]);
    let tree = await list(c, 'qemu', 'pve1', 100);
    expect(tree).not.toHaveProperty('s2');
    expect(tree.s3?.parent).toBe('s1');
    await runTask(c, 'DELETE', `${snaps('qemu', 'pve1', 100)}/s3`);
    tree = await list(c, 'qemu', 'pve1', 100);
    expect(tree.current?.parent).toBe('s1');
    await runTask(c, 'DELETE', `${snaps('qemu', 'pve1', 100)}/s1`);
    expect(await list(c, 'qemu', 'pve1', 100)).toEqual({
      current: expect.not.objectContaining({ parent: expect.anything() }),
    });
  });

  it('frees the RAM state volume and fails for an unknown snapshot', async () => {
    const c = client();
    await runTask(c, 'DELETE', `${snaps('qemu', 'pve1', 101)}/post-upgrade`);
    const volumes = (
      await c.api('GET', '/nodes/pve1/storage/local-lvm/content', { query: { vmid: 101 } })
    ).body.data as { volid: string }[];
    expect(volumes.map((v) => v.volid)).toEqual(['local-lvm:vm-101-disk-0']);
    expect((await list(c, 'qemu', 'pve1', 101)).current?.parent).toBe('pre-upgrade');
    const missing = await runTask(c, 'DELETE', `${snaps('lxc', 'pve2', 201)}/nope`);
    expect([missing.status.type, missing.exitstatus]).toEqual([
      'vzdelsnapshot',
      "snapshot 'nope' does not exist",
    ]);
  });
});

describe('rolling back', () => {
  it('restores the config and disks of the snapshot, keeps the description, stops the VM', async () => {
    const c = client();
    await runTask(c, 'POST', snaps('qemu', 'pve1', 100), { snapname: 'good' });
    await c.api('PUT', '/nodes/pve1/qemu/100/config', {
      form: { name: 'broken', description: 'notes', scsi1: 'local-lvm:4' },
    });
    const end = await runTask(c, 'POST', `${snaps('qemu', 'pve1', 100)}/good/rollback`);
    expect(end.status.type).toBe('qmrollback');
    const vm = await c.guest(100);
    expect(vm).toMatchObject({ status: 'stopped', lock: null });
    expect(vm.config).toMatchObject({
      name: 'web01',
      description: 'notes',
      parent: 'good',
      unused0: 'local-lvm:vm-100-disk-1',
    });
    expect(vm.config).not.toHaveProperty('scsi1');
  });

  it('restarts a VM whose snapshot has its RAM, and starts one with start=1', async () => {
    const c = client();
    const end = await runTask(c, 'POST', `${snaps('qemu', 'pve1', 101)}/post-upgrade/rollback`);
    expect(end.exitstatus).toBe('OK');
    expect((await c.guest(101)).status).toBe('running');
    await runTask(c, 'POST', `${snaps('qemu', 'pve1', 101)}/pre-upgrade/rollback`);
    const stopped = await c.guest(101);
    expect([stopped.status, stopped.config.memory]).toEqual(['stopped', '2048']);
    await runTask(c, 'POST', `${snaps('lxc', 'pve2', 201)}/before-grafana-12/rollback`, {
      start: 1,
    });
    expect((await c.guest(201)).status).toBe('running');
  });

  it('fails for an unknown snapshot and a locked guest; needs a snapshot privilege', async () => {
    const c = client();
    expect(
      (await runTask(c, 'POST', `${snaps('qemu', 'pve1', 101)}/nope/rollback`)).exitstatus,
    ).toBe("snapshot 'nope' does not exist");
    await c.setLock(101, 'backup');
    expect(
      (await runTask(c, 'POST', `${snaps('qemu', 'pve1', 101)}/pre-upgrade/rollback`)).exitstatus,
    ).toBe('VM is locked (backup)');
    const res = await c.api('POST', `${snaps('qemu', 'pve1', 101)}/pre-upgrade/rollback`, {
      token: SIMULATOR_TOKENS.audit,
    });
    expectError(res, 403, 'Permission check failed (/vms/101, VM.Snapshot|VM.Snapshot.Rollback)');
  });
});
