// Migrating guests over HTTP: online and offline qmigrate, vzmigrate with restart, the
// preconditions, and what stops a migration (in the call or in the task).
import { describe, expect, it } from 'vitest';
import { expectError, runTask, useSimulator, volumesOf } from '../support/sim-harness.ts';

const client = useSimulator('migrate');
const GIB = 1024 ** 3;

describe('migrate', () => {
  it('moves a running VM on shared storage online; it keeps running on the target', async () => {
    const c = client();
    const end = await runTask(c, 'POST', '/nodes/pve3/qemu/105/migrate', {
      target: 'pve1',
      online: 1,
    });
    expect(end.status.type).toBe('qmigrate');
    expect(end.log.at(-2)).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d migration finished successfully \(duration \d\d:\d\d:\d\d\)$/,
    );
    expect(await c.guest(105)).toMatchObject({ node: 'pve1', status: 'running', lock: null });
    expect((await c.api('GET', '/nodes/pve1/qemu/105/status/current')).status).toBe(200);
  });

  it('moves a stopped VM with its local disk offline', async () => {
    const c = client();
    await c.api('PUT', '/nodes/pve2/qemu/104/config', { form: { delete: 'efidisk0,tpmstate0' } });
    await runTask(c, 'POST', '/nodes/pve2/qemu/104/migrate', { target: 'pve3' });
    expect((await c.guest(104)).node).toBe('pve3');
    expect(Object.keys(await volumesOf(c, 'pve3', 'local-lvm', 104))).toContain(
      'local-lvm:vm-104-disk-1',
    );
    expect(await volumesOf(c, 'pve2', 'local-lvm', 104)).toEqual({});
  });

  it('refuses what PVE refuses, at once or in the task', async () => {
    const c = client();
    expectError(
      await c.api('POST', '/nodes/pve1/qemu/100/migrate', { form: { target: 'pve1' } }),
      400,
      { target: 'target is local node.' },
    );
    expectError(
      await c.api('POST', '/nodes/pve1/qemu/100/migrate', { form: { target: 'pve9' } }),
      500,
      "no such cluster node 'pve9'",
    );
    expectError(
      await c.api('POST', '/nodes/pve1/qemu/100/migrate', { form: { target: 'pve2' } }),
      500,
      "can't migrate running VM without --online",
    );
    expectError(
      await c.api('POST', '/nodes/pve2/lxc/200/migrate', { form: { target: 'pve1' } }),
      500,
      "can't migrate running container without --online or --restart",
    );
    const live = await runTask(c, 'POST', '/nodes/pve1/qemu/100/migrate', {
      target: 'pve2',
      online: 1,
    });
    expect(live.exitstatus).toBe('migration aborted');
    expect(live.log.join('\n')).toContain(
      "can't live migrate attached local disks without with-local-disks option",
    );
    const iso = await runTask(c, 'POST', '/nodes/pve3/qemu/300/migrate', { target: 'pve1' });
    expect(iso.log.join('\n')).toContain(
      "can't migrate local disk 'local:iso/debian-13.1.0-amd64-netinst.iso': local cdrom image",
    );
    const snap = await runTask(c, 'POST', '/nodes/pve1/qemu/101/migrate', {
      target: 'pve2',
      online: 1,
      'with-local-disks': 1,
    });
    expect(snap.log.join('\n')).toContain(
      "can't migrate local disk 'local-lvm:vm-101-disk-0': online storage migration not possible if non-replicated snapshot exists",
    );
    expect((await c.guest(101)).node).toBe('pve1');
  });

  it('restarts a container migrated with restart=1', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve2/lxc/200/migrate', { target: 'pve3', restart: 1 });
    expect(await c.guest(200)).toMatchObject({ node: 'pve3', status: 'running' });
    const online = await runTask(c, 'POST', '/nodes/pve1/lxc/110/migrate', {
      target: 'pve2',
      online: 1,
    });
    expect(online.log.join('\n')).toContain('lxc live migration is currently not implemented');
  });

  it('reports migration preconditions', async () => {
    const res = await client().api('GET', '/nodes/pve1/qemu/100/migrate');
    expect(res.body.data).toEqual({
      running: 1,
      allowed_nodes: ['pve2', 'pve3'],
      not_allowed_nodes: {},
      local_resources: [],
      'mapped-resources': [],
      'mapped-resource-info': {},
      'has-dbus-vmstate': 1,
      local_disks: [
        {
          volid: 'local-lvm:vm-100-disk-0',
          size: 32 * GIB,
          cdrom: 0,
          is_unused: 0,
          is_attached: 1,
          drivename: 'scsi0',
        },
      ],
    });
  });
});
