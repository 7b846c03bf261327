// Resizing, destroying and migrating guests, and creating containers, over HTTP: the tasks,
// the state they leave (volumes, config, node) and PVE's refusals.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, runTask, useSimulator, type SimClient } from './helpers/sim-harness.ts';

const client = useSimulator('life');
const GIB = 1024 ** 3;
const TEMPLATE = 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst';

async function volumes(
  c: SimClient,
  node: string,
  storage: string,
  vmid: number,
): Promise<Record<string, number>> {
  const res = await c.api('GET', `/nodes/${node}/storage/${storage}/content`, { query: { vmid } });
  return Object.fromEntries(
    (res.body.data as { volid: string; size: number }[]).map((v) => [v.volid, v.size]),
  );
}

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
    expect(await volumes(c, 'pve1', 'local-lvm', 100)).toEqual({
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
    expect(await volumes(c, 'pve2', 'local-lvm', 104)).toEqual({});
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
    expect(Object.keys(await volumes(c, 'pve3', 'local-lvm', 300))).toEqual([
      'local-lvm:vm-300-disk-0',
      'local-lvm:vm-300-disk-1',
    ]);
    await runTask(c, 'DELETE', '/nodes/pve3/qemu/300');
    expect(Object.keys(await volumes(c, 'pve3', 'local-lvm', 300))).toEqual([
      'local-lvm:vm-300-disk-1',
    ]);
    const other = client();
    const end = await runTask(other, 'DELETE', '/nodes/pve3/qemu/300', {
      'destroy-unreferenced-disks': 1,
    });
    expect(end.log).toContain('  Logical volume "vm-300-disk-1" successfully removed.');
    expect(await volumes(other, 'pve3', 'local-lvm', 300)).toEqual({});
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
    expect(await volumes(c, 'pve2', 'local-lvm', 201)).toEqual({});
    expect(await volumes(c, 'pve2', 'ceph-pool', 201)).toEqual({});
  });

  it('needs VM.Allocate', async () => {
    expectError(
      await client().api('DELETE', '/nodes/pve2/qemu/104', { token: SIMULATOR_TOKENS.audit }),
      403,
      'Permission check failed (/vms/104, VM.Allocate)',
    );
  });
});

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
    expect(Object.keys(await volumes(c, 'pve3', 'local-lvm', 104))).toContain(
      'local-lvm:vm-104-disk-1',
    );
    expect(await volumes(c, 'pve2', 'local-lvm', 104)).toEqual({});
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

describe('creating containers', () => {
  it('creates an unprivileged container from a template with a vzcreate task and starts it', async () => {
    const c = client();
    const end = await runTask(c, 'POST', '/nodes/pve2/lxc', {
      vmid: 106,
      ostemplate: TEMPLATE,
      hostname: 'app01',
      storage: 'local-lvm',
      rootfs: 'local-lvm:12',
      memory: 1024,
      cores: 2,
      net0: 'name=eth0,bridge=vmbr0,ip=10.10.0.60/24,gw=10.10.0.1',
      password: 'hunter22',
      'ssh-public-keys': 'ssh-ed25519 AAAAC3Nza test@example',
      pool: 'prod',
      start: 1,
    });
    expect(end.status.type).toBe('vzcreate');
    expect(end.log).toContain(
      "extracting archive '/var/lib/vz/template/cache/debian-13-standard_13.1-2_amd64.tar.zst'",
    );
    const ct = await c.guest(106);
    expect(ct).toMatchObject({ node: 'pve2', status: 'running', pool: 'prod', lock: null });
    expect(ct.config).toMatchObject({
      hostname: 'app01',
      memory: '1024',
      cores: '2',
      swap: '512',
      ostype: 'debian',
      unprivileged: '1',
      rootfs: 'local-lvm:vm-106-disk-0,size=12G',
      arch: 'amd64',
    });
    expect(ct.config.net0).toMatch(
      /^name=eth0,bridge=vmbr0,gw=10\.10\.0\.1,hwaddr=BC:24:11:[0-9A-F:]{8},ip=10\.10\.0\.60\/24,type=veth$/,
    );
    expect(JSON.stringify(ct.config)).not.toContain('hunter22');
  });

  it('uses a 4 GiB rootfs on `storage` by default, and CT<vmid> as hostname', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve1/lxc', {
      vmid: 107,
      ostemplate: 'local:vztmpl/alpine-3.22-default_20250617_amd64.tar.xz',
      storage: 'ceph-pool',
    });
    expect((await c.guest(107)).config).toMatchObject({
      hostname: 'CT107',
      ostype: 'alpine',
      rootfs: 'ceph-pool:vm-107-disk-0,size=4G',
    });
  });

  it.each<[string, Record<string, string | number>, number, string | Record<string, string>]>([
    [
      'a taken vmid',
      { vmid: 200, ostemplate: TEMPLATE, storage: 'local-lvm' },
      500,
      "CT 200 already exists on node 'pve2'",
    ],
    [
      'the default storage, which holds no containers',
      { vmid: 106, ostemplate: TEMPLATE },
      400,
      { storage: "storage 'local' does not support container directories" },
    ],
    [
      'an ISO as template',
      { vmid: 106, ostemplate: 'local:iso/debian-13.1.0-amd64-netinst.iso', storage: 'local-lvm' },
      500,
      "unable to use volume local:iso/debian-13.1.0-amd64-netinst.iso - content type needs to be 'vztmpl'",
    ],
    [
      'a mount point without rootfs',
      { vmid: 106, ostemplate: TEMPLATE, mp0: 'local-lvm:2,mp=/srv' },
      500,
      "mount points configured, but 'rootfs' not set - aborting",
    ],
    [
      'a short password',
      { vmid: 106, ostemplate: TEMPLATE, storage: 'local-lvm', password: 'abc' },
      400,
      { password: 'value must be at least 5 characters long' },
    ],
    [
      'an unknown pool',
      { vmid: 106, ostemplate: TEMPLATE, storage: 'local-lvm', pool: 'nope' },
      403,
      "Permission check failed (pool 'nope' does not exist)",
    ],
    [
      'a NIC without a name',
      { vmid: 106, ostemplate: TEMPLATE, storage: 'local-lvm', net0: 'bridge=vmbr0' },
      400,
      {
        net0: 'invalid format - format error\nnet0.name: property is missing and it is not optional\n',
      },
    ],
  ])('refuses %s', async (_name, form, status, message) => {
    expectError(await client().api('POST', '/nodes/pve2/lxc', { form }), status, message);
  });

  it('fails the task when the template is missing on that node, and cleans up', async () => {
    const c = client();
    const end = await runTask(c, 'POST', '/nodes/pve3/lxc', {
      vmid: 108,
      ostemplate: 'local:vztmpl/alpine-3.22-default_20250617_amd64.tar.xz',
      storage: 'local-lvm',
    });
    expect(end.exitstatus).toBe(
      "unable to create CT 108 - can't find file 'local:vztmpl/alpine-3.22-default_20250617_amd64.tar.xz'",
    );
    expect((await c.api('GET', '/cluster/nextid')).body.data).toBe('106');
    expect(await volumes(c, 'pve3', 'local-lvm', 108)).toEqual({});
  });

  it('needs Sys.Modify for a privileged container, and VM.Allocate', async () => {
    const c = client();
    const form = { vmid: 106, ostemplate: TEMPLATE, storage: 'local-lvm' };
    const token = SIMULATOR_TOKENS.audit;
    expectError(
      await c.api('POST', '/nodes/pve2/lxc', { form: { ...form, unprivileged: 0 }, token }),
      403,
      'Permission check failed (/, Sys.Modify)',
    );
    expectError(
      await c.api('POST', '/nodes/pve2/lxc', { form, token }),
      403,
      'Permission check failed',
    );
  });
});
