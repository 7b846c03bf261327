// POST /nodes/{node}/qemu/{vmid}/clone over HTTP: full and linked clones, what the copy's config
// holds (new MACs, new disks, new smbios1 uuid), targets, pools, snapshots, and the refusals.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, runTask, useSimulator, waitTask } from '../support/sim-harness.ts';

const client = useSimulator('clone');
const clonePath = (node: string, vmid: number) => `/nodes/${node}/qemu/${vmid}/clone`;
const mac = (net: string | undefined) => /=([0-9A-F:]{17})/.exec(net ?? '')?.[1];

describe('cloning', () => {
  it('makes a full copy of a VM: qmclone task, new disks, new MACs and uuid, the given name', async () => {
    const c = client();
    await c.configure({ taskDurationMs: 1000 }); // long enough to look at the copy mid-task
    const upid = (
      await c.api('POST', clonePath('pve1', 100), {
        form: { newid: 150, name: 'web03', description: 'copy' },
      })
    ).body.data;
    expect(upid).toMatch(/:qmclone:100:root@pam!mcp:$/);
    expect((await c.guest(150)).lock).toBe('clone');
    const end = await waitTask(c, upid);
    expect(end.log).toEqual(
      expect.arrayContaining([
        'creating a clone of VM 100 with ID 150',
        'create full clone of drive scsi0 (local-lvm:vm-100-disk-0)',
        '  Logical volume "vm-150-disk-0" created.',
      ]),
    );
    const [source, copy] = [await c.guest(100), await c.guest(150)];
    expect(copy).toMatchObject({ node: 'pve1', status: 'stopped', lock: null });
    expect(copy.config).toMatchObject({
      name: 'web03',
      description: 'copy',
      cores: '2',
      memory: '4096',
      scsi0: 'local-lvm:vm-150-disk-0,iothread=1,size=32G',
    });
    expect(mac(copy.config.net0)).toMatch(/^BC:24:11:/);
    expect(mac(copy.config.net0)).not.toBe(mac(source.config.net0));
    expect(copy.config.smbios1).not.toBe(source.config.smbios1);
    expect(copy.config.vmgenid).not.toBe(source.config.vmgenid);
    const volumes = (
      await c.api('GET', '/nodes/pve1/storage/local-lvm/content', { query: { vmid: 150 } })
    ).body.data;
    expect(volumes).toEqual([
      expect.objectContaining({
        volid: 'local-lvm:vm-150-disk-0',
        size: 32 * 1024 ** 3,
        vmid: 150,
      }),
    ]);
  });

  it('links a clone to a template by default, and names it Copy-of-VM-<name>', async () => {
    const c = client();
    const end = await runTask(c, 'POST', clonePath('pve1', 9000), { newid: 150 });
    expect(end.log).toContain('create linked clone of drive scsi0 (local-lvm:base-9000-disk-0)');
    const copy = await c.guest(150);
    expect(copy.config).toMatchObject({
      name: 'Copy-of-VM-debian-13-cloudinit',
      ide2: 'local-lvm:vm-150-cloudinit,media=cdrom',
      scsi0: 'local-lvm:vm-150-disk-0,discard=on,size=3584M',
      ciuser: 'debian',
    });
    expect(copy.config).not.toHaveProperty('template');
    expect(copy.agentRunning).toBe(true);
    // the template's base image now backs the clone, so the template cannot go
    const destroy = await runTask(c, 'DELETE', '/nodes/pve1/qemu/9000');
    expect(destroy.exitstatus).toBe(
      "base volume 'local-lvm:base-9000-disk-0' is still in use by linked cloned",
    );
    expect((await c.guest(9000)).lock).toBeNull();
  });

  it('copies from a snapshot and puts the clone in a pool', async () => {
    const c = client();
    await runTask(c, 'POST', clonePath('pve1', 101), {
      newid: 151,
      snapname: 'pre-upgrade',
      full: 1,
      pool: 'lab',
    });
    const copy = await c.guest(151);
    expect(copy).toMatchObject({ pool: 'lab' });
    expect(copy.config.memory).toBe('2048');
    expect(copy.config).not.toHaveProperty('parent');
    expect(copy.snapshots).toEqual({});
  });

  it('clones a VM on shared storage to another node', async () => {
    const c = client();
    await runTask(c, 'POST', clonePath('pve1', 102), { newid: 152, target: 'pve2', full: 1 });
    const copy = await c.guest(152);
    expect(copy.node).toBe('pve2');
    expect(copy.config.scsi0).toBe('ceph-pool:vm-152-disk-0,iothread=1,size=128G');
    expect((await c.api('GET', '/nodes/pve2/qemu/152/config')).status).toBe(200);
  });

  it.each<
    [string, number, Record<string, string | number>, number, string | Record<string, string>]
  >([
    [
      'a linked clone of a non-template',
      100,
      { newid: 150, full: 0 },
      500,
      "Linked clone feature is not supported for 'local-lvm:vm-100-disk-0' (scsi0)",
    ],
    [
      'a storage for a linked clone',
      9000,
      { newid: 150, storage: 'ceph-pool' },
      500,
      "parameter 'storage' not allowed for linked clones",
    ],
    [
      'a storage without images',
      100,
      { newid: 150, storage: 'local' },
      400,
      { storage: "storage 'local' does not support vm images" },
    ],
    [
      'another node for local disks',
      100,
      { newid: 150, target: 'pve2' },
      500,
      "can't clone VM to node 'pve2' (VM uses local storage)",
    ],
    [
      'a non-shared storage on another node',
      102,
      { newid: 150, target: 'pve2', storage: 'local-lvm' },
      500,
      "can't clone to non-shared storage 'local-lvm'",
    ],
    ['an unknown node', 100, { newid: 150, target: 'pve9' }, 500, "no such cluster node 'pve9'"],
    [
      'an unknown snapshot',
      101,
      { newid: 150, snapname: 'nope' },
      500,
      "snapshot 'nope' does not exist",
    ],
    [
      'an unknown pool',
      100,
      { newid: 150, pool: 'nope' },
      403,
      "Permission check failed (pool 'nope' does not exist)",
    ],
    [
      'a newid taken on this node',
      100,
      { newid: 101 },
      500,
      'unable to create VM 101: config file already exists',
    ],
  ])('refuses %s', async (_name, vmid, form, status, message) => {
    expectError(await client().api('POST', clonePath('pve1', vmid), { form }), status, message);
  });

  it('fails the task for a format the target storage cannot hold, and removes the half-made copy', async () => {
    const c = client();
    const end = await runTask(c, 'POST', clonePath('pve1', 100), { newid: 150, format: 'qcow2' });
    expect(end.exitstatus).toBe("clone failed: unsupported format 'qcow2'");
    expect((await c.api('GET', '/cluster/nextid', { query: { vmid: 150 } })).body.data).toBe('150');
    expect(
      (await c.api('GET', '/nodes/pve1/storage/local-lvm/content', { query: { vmid: 150 } })).body
        .data,
    ).toEqual([]);
  });

  it('fails the task for a newid taken on another node, and refuses a locked source', async () => {
    const c = client();
    const end = await runTask(c, 'POST', clonePath('pve1', 100), { newid: 200 });
    expect(end.exitstatus).toBe(
      "close (rename) atomic file '/etc/pve/nodes/pve1/qemu-server/200.conf' failed: File exists",
    );
    expect((await c.guest(200)).type).toBe('lxc');
    await c.setLock(100, 'backup');
    expectError(
      await c.api('POST', clonePath('pve1', 100), { form: { newid: 150 } }),
      500,
      'VM is locked (backup)',
    );
  });

  it('needs VM.Clone on the source', async () => {
    const res = await client().api('POST', clonePath('pve1', 9000), {
      form: { newid: 150 },
      token: SIMULATOR_TOKENS.audit,
    });
    expectError(res, 403, 'Permission check failed (/vms/9000, VM.Clone)');
  });
});
