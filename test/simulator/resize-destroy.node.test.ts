// Resizing and destroying guests over HTTP: the resize and qmdestroy/vzdestroy tasks, the
// volumes and configs they change, and PVE's refusals.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, runTask, useSimulator, volumesOf } from '../support/sim-harness.ts';

const client = useSimulator('resize');
const GIB = 1024 ** 3;

describe('resize', () => {
  it('grows a VM disk by +SIZE or to a size, as a resize task', async () => {
    const c = client();
    const end = await runTask(c, 'PUT', '/nodes/pve1/qemu/100/resize', {
      disk: 'scsi0',
      size: '+10G',
    });
    expect([end.status.type, end.log[0]]).toEqual([
      'resize',
      '  Size of logical volume pve/vm-100-disk-0 changed from 32.00 GiB (8192 extents) to 42.00 GiB (10752 extents).',
    ]);
    expect((await c.guest(100)).config.scsi0).toBe('local-lvm:vm-100-disk-0,iothread=1,size=42G');
    await runTask(c, 'PUT', '/nodes/pve1/qemu/100/resize', { disk: 'scsi0', size: '50G' });
    expect(await volumesOf(c, 'pve1', 'local-lvm', 100)).toEqual({
      'local-lvm:vm-100-disk-0': 50 * GIB,
    });
    expect((await c.api('GET', '/nodes/pve1/qemu/100/status/current')).body.data).toMatchObject({
      maxdisk: 50 * GIB,
    });
  });

  it('fails a VM resize in the task: shrinking, a missing disk, a CD-ROM, a stale digest', async () => {
    const c = client();
    const fail = async (form: Record<string, string>) =>
      (await runTask(c, 'PUT', '/nodes/pve1/qemu/100/resize', form)).exitstatus;
    expect(await fail({ disk: 'scsi0', size: '16G' })).toBe('shrinking disks is not supported');
    expect(await fail({ disk: 'scsi5', size: '+1G' })).toBe("disk 'scsi5' does not exist");
    expect(await fail({ disk: 'ide2', size: '+1G' })).toBe("you can't resize a cdrom");
    expect(await fail({ disk: 'scsi0', size: '+1G', digest: 'f'.repeat(40) })).toBe(
      'checksum mismatch (file change by other user?)',
    );
    expect((await c.guest(100)).config.scsi0).toBe('local-lvm:vm-100-disk-0,iothread=1,size=32G');
  });

  it('checks a container resize at once', async () => {
    const c = client();
    expectError(
      await c.api('PUT', '/nodes/pve1/lxc/110/resize', { form: { disk: 'rootfs', size: '4G' } }),
      500,
      'unable to shrink disk size',
    );
    expectError(
      await c.api('PUT', '/nodes/pve1/lxc/110/resize', { form: { disk: 'rootfs', size: '8G' } }),
      500,
      'disk is already at specified size',
    );
    expectError(
      await c.api('PUT', '/nodes/pve1/lxc/110/resize', { form: { disk: 'rootfs', size: '9X' } }),
      400,
      { size: 'value does not match the regex pattern' },
    );
    await runTask(c, 'PUT', '/nodes/pve1/lxc/110/resize', { disk: 'rootfs', size: '+2G' });
    expect((await c.guest(110)).config.rootfs).toBe('local-lvm:vm-110-disk-0,size=10G');
  });
});

describe('destroy', () => {
  it("removes a stopped VM with its disks, snapshots' states and pool membership", async () => {
    const c = client();
    const end = await runTask(c, 'DELETE', '/nodes/pve2/qemu/104', { purge: 1 });
    expect(end.status.type).toBe('qmdestroy');
    expect(end.log).toContain('  Logical volume "vm-104-disk-1" successfully removed.');
    expect(await volumesOf(c, 'pve2', 'local-lvm', 104)).toEqual({});
    expectError(
      await c.api('GET', '/nodes/pve2/qemu/104/config'),
      500,
      "Configuration file 'nodes/pve2/qemu-server/104.conf' does not exist",
    );
    const pool = (await c.api('GET', '/pools', { query: { poolid: 'lab' } })).body.data as {
      members: unknown[];
    }[];
    expect(pool[0]?.members).toEqual([]);
  });

  it('leaves disks the config does not reference, unless destroy-unreferenced-disks is given', async () => {
    const c = client();
    expect(Object.keys(await volumesOf(c, 'pve3', 'local-lvm', 300))).toEqual([
      'local-lvm:vm-300-disk-0',
      'local-lvm:vm-300-disk-1',
    ]);
    await runTask(c, 'DELETE', '/nodes/pve3/qemu/300');
    expect(Object.keys(await volumesOf(c, 'pve3', 'local-lvm', 300))).toEqual([
      'local-lvm:vm-300-disk-1',
    ]);
    const other = client();
    const end = await runTask(other, 'DELETE', '/nodes/pve3/qemu/300', {
      'destroy-unreferenced-disks': 1,
    });
    expect(end.log).toContain('  Logical volume "vm-300-disk-1" successfully removed.');
    expect(await volumesOf(other, 'pve3', 'local-lvm', 300)).toEqual({});
  });

  it('refuses running and protected guests at once, locked ones in the task', async () => {
    const c = client();
    expectError(
      await c.api('DELETE', '/nodes/pve1/qemu/100'),
      500,
      'VM 100 is running - destroy failed',
    );
    expectError(
      await c.api('DELETE', '/nodes/pve1/qemu/102'),
      500,
      "can't remove VM 102 - protection mode enabled",
    );
    expectError(
      await c.api('DELETE', '/nodes/pve1/lxc/110'),
      500,
      'unable to destroy CT 110 - container is running',
    );
    await c.setLock(300, 'backup');
    expect((await runTask(c, 'DELETE', '/nodes/pve3/qemu/300')).exitstatus).toBe(
      'VM is locked (backup)',
    );
    await c.setLock(301, 'backup');
    expectError(await c.api('DELETE', '/nodes/pve3/lxc/301'), 500, 'CT is locked (backup)');
  });

  it('stops and destroys a running container with force=1', async () => {
    const c = client();
    const end = await runTask(c, 'DELETE', '/nodes/pve2/lxc/201', { force: 1 });
    expect([end.status.type, end.exitstatus]).toEqual(['vzdestroy', 'WARNINGS: 1']);
    expect(await volumesOf(c, 'pve2', 'local-lvm', 201)).toEqual({});
    expect(await volumesOf(c, 'pve2', 'ceph-pool', 201)).toEqual({});
  });

  it('needs VM.Allocate', async () => {
    expectError(
      await client().api('DELETE', '/nodes/pve2/qemu/104', { token: SIMULATOR_TOKENS.audit }),
      403,
      'Permission check failed (/vms/104, VM.Allocate)',
    );
  });
});
