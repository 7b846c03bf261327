// Guest configs over HTTP: what GET config returns (created, seeded, pending, snapshot), and
// PUT/POST updates with delete, digest, pending changes on running guests and PVE's refusals.
import { describe, expect, it } from 'vitest';
import { expectError, getData, runTask, useSimulator, waitTask } from '../support/sim-harness.ts';

const client = useSimulator('config');
const qemu = (node: string, vmid: number) => `/nodes/${node}/qemu/${vmid}/config`;

describe('reading a VM config', () => {
  it('returns what a VM was created with, plus the defaults create_vm adds', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve1/qemu', {
      vmid: 106,
      name: 'web03',
      memory: 2048,
      cores: 2,
      scsi0: 'local-lvm:32,iothread=1',
      net0: 'virtio,bridge=vmbr0',
      ide2: 'local:iso/debian-13.1.0-amd64-netinst.iso,media=cdrom',
      tags: 'web;Test',
      ostype: 'l26',
    });
    const data = await getData(c, qemu('pve1', 106));
    expect(data).toMatchObject({
      name: 'web03',
      memory: '2048',
      cores: 2,
      ostype: 'l26',
      tags: 'test;web',
      scsi0: 'local-lvm:vm-106-disk-0,iothread=1,size=32G',
      ide2: 'local:iso/debian-13.1.0-amd64-netinst.iso,media=cdrom,size=754M',
      boot: 'order=scsi0;ide2;net0',
      digest: (await c.guest(106)).digest,
    });
    expect(data.net0).toMatch(/^virtio=BC:24:11:[0-9A-F]{2}:[0-9A-F]{2}:[0-9A-F]{2},bridge=vmbr0$/);
    expect(data.smbios1).toMatch(/^uuid=[0-9a-f-]{36}$/);
    expect(data.meta).toMatch(/^creation-qemu=[\d.]+,ctime=\d+$/);
  });

  it('masks the cloud-init password, which the config keeps crypted', async () => {
    const c = client();
    expect(await getData(c, qemu('pve1', 9000))).toMatchObject({
      cipassword: '**********',
      ciuser: 'debian',
      template: 1,
    });
    expect((await c.guest(9000)).config.cipassword).toMatch(/^\$5\$/);
  });

  it('reads a snapshot, and refuses snapshot together with current', async () => {
    const c = client();
    expect(await getData(c, qemu('pve1', 101), { snapshot: 'pre-upgrade' })).toMatchObject({
      memory: '2048',
      snaptime: expect.any(Number),
      description: 'Before the Debian 13 upgrade',
    });
    const both = "cannot use 'snapshot' parameter with 'current'";
    expectError(
      await c.api('GET', qemu('pve1', 101), { query: { snapshot: 'pre-upgrade', current: 1 } }),
      400,
      { snapshot: both, current: both },
    );
    expectError(
      await c.api('GET', qemu('pve1', 101), { query: { snapshot: 'nope' } }),
      500,
      "snapshot 'nope' does not exist",
    );
    expectError(
      await c.api('GET', qemu('pve2', 101)),
      500,
      "Configuration file 'nodes/pve2/qemu-server/101.conf' does not exist",
    );
  });
});

describe('PUT /nodes/{node}/qemu/{vmid}/config', () => {
  it('applies changes to a stopped VM at once and changes the digest', async () => {
    const c = client();
    const before = (await c.guest(104)).digest;
    expect(
      (
        await c.api('PUT', qemu('pve2', 104), {
          form: { cores: 8, name: 'win11-big', digest: before },
        })
      ).body,
    ).toEqual({ data: null });
    const after = await getData(c, qemu('pve2', 104), { current: 1 });
    expect(after).toMatchObject({ cores: 8, name: 'win11-big' });
    expect(after.digest).not.toBe(before);
    expectError(
      await c.api('PUT', qemu('pve2', 104), { form: { cores: 2, digest: before } }),
      500,
      'checksum mismatch (file change by other user?)',
    );
  });

  it('keeps what a running VM cannot hotplug pending; hotplugs NICs and fast options', async () => {
    const c = client();
    await c.api('PUT', qemu('pve1', 100), {
      form: { memory: 8192, cores: 4, name: 'web01-new', net1: 'virtio,bridge=vmbr1' },
    });
    const vm = await c.guest(100);
    expect(vm.pending.values).toEqual({ memory: '8192', cores: '4' });
    expect(vm.config).toMatchObject({ memory: '4096', cores: '2', name: 'web01-new' });
    expect(vm.config.net1).toMatch(/^virtio=BC:24:11:.*,bridge=vmbr1$/);
    expect(await getData(c, qemu('pve1', 100))).toMatchObject({ memory: '8192', cores: 4 });
    expect(await getData(c, qemu('pve1', 100), { current: 1 })).toMatchObject({
      memory: '4096',
      cores: 2,
    });
  });

  it('deletes options; a removed disk becomes unused, or is destroyed with force', async () => {
    const c = client();
    await c.api('PUT', qemu('pve2', 104), { form: { delete: 'scsi0,tags' } });
    const vm = await c.guest(104);
    expect(vm.config).not.toHaveProperty('scsi0');
    expect(vm.config).not.toHaveProperty('tags');
    expect(vm.config.unused0).toBe('local-lvm:vm-104-disk-1');
    await c.api('PUT', qemu('pve2', 104), { form: { delete: 'tpmstate0', force: 1 } });
    const volumes = (
      await c.api('GET', '/nodes/pve2/storage/local-lvm/content', { query: { vmid: 104 } })
    ).body.data as { volid: string }[];
    expect(volumes.map((v) => v.volid).sort()).toEqual([
      'local-lvm:vm-104-disk-0',
      'local-lvm:vm-104-disk-1',
    ]);
    await c.api('PUT', qemu('pve2', 104), { form: { delete: 'unused0' } });
    expect((await c.guest(104)).config).not.toHaveProperty('unused0');
  });

  it('allocates a new disk given as STORAGE:SIZE', async () => {
    const c = client();
    await c.api('PUT', qemu('pve2', 104), { form: { scsi1: 'local-lvm:4,discard=on' } });
    expect((await c.guest(104)).config.scsi1).toBe('local-lvm:vm-104-disk-3,discard=on,size=4G');
  });

  it.each<[string, Record<string, string | number>, number, string | Record<string, string>]>([
    ['no options', {}, 500, 'no options specified'],
    [
      'deleting and setting one option',
      { name: 'x', delete: 'name' },
      400,
      { delete: "you can't use '-name' and -delete name' at the same time" },
    ],
    [
      'deleting an unknown option',
      { delete: 'nonsense' },
      400,
      { delete: "unknown option 'nonsense'" },
    ],
    [
      'a NIC with an unknown key',
      { net0: 'virtio,bridge=vmbr0,speed=10' },
      400,
      { net0: 'invalid format - invalid key in comma-separated list property: speed\n' },
    ],
    [
      'a boot order naming a missing device',
      { boot: 'order=scsi7' },
      500,
      "invalid bootorder: device 'scsi7' does not exist'",
    ],
    ['setting the lock', { lock: 'backup' }, 500, "only root can set 'lock' config"],
    [
      'a balloon above memory',
      { balloon: 9000 },
      500,
      'balloon value too large (must be smaller than assigned memory)',
    ],
    ['skiplock', { skiplock: 1, name: 'x' }, 400, { skiplock: 'Only root may use this option.' }],
  ])('refuses %s', async (_name, form, status, message) => {
    expectError(await client().api('PUT', qemu('pve2', 104), { form }), status, message);
  });

  it('refuses a locked VM and protected disks', async () => {
    const c = client();
    await c.setLock(104, 'snapshot');
    expectError(
      await c.api('PUT', qemu('pve2', 104), { form: { name: 'x' } }),
      500,
      'VM is locked (snapshot)',
    );
    expectError(
      await c.api('PUT', qemu('pve1', 102), { form: { delete: 'scsi1' } }),
      500,
      "can't remove drive 'scsi1' - protection mode enabled",
    );
  });
});

describe('POST /nodes/{node}/qemu/{vmid}/config', () => {
  it('runs the update as a qmconfig task with the update logged', async () => {
    const c = client();
    const res = await c.api('POST', qemu('pve2', 104), {
      form: { cores: 2, delete: 'nonexistent0' },
    });
    expectError(res, 400, { delete: "unknown option 'nonexistent0'" });
    const end = await runTask(c, 'POST', qemu('pve2', 104), { cores: 2, delete: 'vga' });
    expect(end.status.type).toBe('qmconfig');
    expect(end.log).toEqual([
      'update VM 104: -cores 2 -delete vga',
      "WARN: cannot delete 'vga' - not set in current configuration!",
      'TASK WARNINGS: 1',
    ]);
    expect(end.exitstatus).toBe('WARNINGS: 1');
    expect((await c.guest(104)).config.cores).toBe('2');
  });

  it('answers null when the task ends within background_delay', async () => {
    const c = client();
    const res = await c.api('POST', qemu('pve2', 104), {
      form: { name: 'quick', background_delay: 5 },
    });
    expect(res.body).toEqual({ data: null });
    expect((await c.guest(104)).config.name).toBe('quick');
  });

  it('refuses a stale digest at once, not in the task', async () => {
    const c = client();
    expectError(
      await c.api('POST', qemu('pve2', 104), { form: { name: 'x', digest: '0'.repeat(40) } }),
      500,
      'checksum mismatch (file change by other user?)',
    );
    const upid = (await c.api('POST', qemu('pve2', 104), { form: { name: 'y' } })).body.data;
    expect((await waitTask(c, upid)).exitstatus).toBe('OK');
  });
});
