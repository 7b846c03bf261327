// Restores over HTTP: POST /nodes/{node}/qemu with `archive` (qmrestore) and POST
// /nodes/{node}/lxc with restore=1 (vzrestore), from vzdump files and PBS snapshots: the new
// guest gets the backup's config and new disks, unique=1 new MACs; force=1 replaces an existing
// guest (refused while it runs); archives that are no backups or of the other guest type fail
// with PVE's texts; and the permissions.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import {
  expectError,
  getData,
  runTask,
  type SimClient,
  useSimulator,
  volumesOf,
  waitTask,
} from '../support/sim-harness.ts';

const client = useSimulator('restore');
const audit = { token: SIMULATOR_TOKENS.audit };
const GIB = 1024 ** 3;

type Item = Record<string, unknown>;

/** The first backup of a guest on a storage, as the node lists it. */
async function backupOf(c: SimClient, node: string, storage: string, vmid: number) {
  const items = await getData<Item[]>(c, `/nodes/${node}/storage/${storage}/content`, {
    content: 'backup',
    vmid,
  });
  const volid = items.find((item) => !item.protected)?.volid ?? items[0]?.volid;
  if (typeof volid !== 'string') throw new Error(`no backup of ${vmid} on ${storage}`);
  return volid;
}

const mac = (net: string | undefined) => /=([0-9A-F:]{17})/i.exec(net ?? '')?.[1];

describe('qmrestore', () => {
  it("restores a vzdump backup to a new VMID: the backup's config, new disks", async () => {
    const c = client();
    // Long enough that the lock is still there on a loaded machine when the test looks.
    await c.configure({ taskDurationMs: 1_000 });
    const archive = await backupOf(c, 'pve1', 'local', 100);
    const res = await c.api('POST', '/nodes/pve1/qemu', {
      form: { vmid: 150, archive, storage: 'ceph-pool' },
    });
    expect(res.body.data).toMatch(/:qmrestore:150:root@pam!mcp:$/);
    // the config exists at once, locked, like create_and_lock_config leaves it
    expect((await c.guest(150)).config).toEqual({ lock: 'create' });
    expect((await waitTask(c, res.body.data)).exitstatus).toBe('OK');
    const source = (await c.guest(100)).config;
    const restored = await c.guest(150);
    expect(restored).toMatchObject({ status: 'stopped', lock: null, node: 'pve1' });
    expect(restored.config).toMatchObject({
      name: 'web01',
      memory: source.memory,
      cores: source.cores,
      net0: source.net0,
      smbios1: source.smbios1,
      scsi0: 'ceph-pool:vm-150-disk-0,iothread=1,size=32G',
      tags: 'prod;web',
    });
    expect(restored.config.vmgenid).not.toBe(source.vmgenid);
    expect(await volumesOf(c, 'pve1', 'ceph-pool', 150)).toEqual({
      'ceph-pool:vm-150-disk-0': 32 * GIB,
    });
  });

  it('logs the vma extraction and the new volumes', async () => {
    const c = client();
    const archive = await backupOf(c, 'pve1', 'local', 100);
    const res = await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 151, archive } });
    const end = await waitTask(c, res.body.data);
    expect(end.exitstatus).toBe('OK');
    const file = archive.replace('local:backup/', '/var/lib/vz/dump/');
    expect(end.log).toEqual([
      expect.stringMatching(
        new RegExp(
          `^restore vma archive: zstd -q -d -c ${file.replace(/\./g, '\\.')} \\| vma extract -v -r /var/tmp/vzdumptmp\\d+\\.fifo - /var/tmp/vzdumptmp\\d+$`,
        ),
      ),
      expect.stringMatching(/^CFG: size: \d+ name: qemu-server\.conf$/),
      `DEV: dev_id=1 size: ${32 * GIB} devname: drive-scsi0`,
      expect.stringMatching(/^CTIME: \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}$/),
      '  Logical volume "vm-151-disk-0" created.',
      "new volume ID is 'local-lvm:vm-151-disk-0'",
      "map 'drive-scsi0' to '/dev/pve/vm-151-disk-0' (write zeros = 0)",
      expect.stringMatching(/^progress 1% /),
      expect.stringMatching(/^progress 50% /),
      `progress 100% (read ${32 * GIB} bytes, duration 1 sec)`,
      expect.stringMatching(/^total bytes read \d+, sparse bytes \d+ \(\d+\.\d+%\)$/),
      'space reduction due to 4K zero blocks 0.91%',
      'rescan volumes...',
      'TASK OK',
    ]);
  });

  it('gives new MACs and a new SMBIOS UUID with unique=1, and applies given options', async () => {
    const c = client();
    const archive = await backupOf(c, 'pve1', 'local', 100);
    const end = await runTask(c, 'POST', '/nodes/pve1/qemu', {
      vmid: 152,
      archive,
      unique: 1,
      name: 'web01-copy',
      start: 1,
      pool: 'lab',
    });
    expect(end.log).toContain('Execute autostart');
    const source = (await c.guest(100)).config;
    const restored = await c.guest(152);
    expect(restored).toMatchObject({ status: 'running', pool: 'lab' });
    expect(restored.config.name).toBe('web01-copy');
    expect(mac(restored.config.net0)).not.toBe(mac(source.net0));
    expect(restored.config.smbios1).not.toBe(source.smbios1);
  });

  it('restores a template as a template: base disks, a new cloud-init drive', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve1/vzdump', { vmid: 9000, storage: 'local' });
    const archive = await backupOf(c, 'pve1', 'local', 9000);
    const end = await runTask(c, 'POST', '/nodes/pve1/qemu', { vmid: 190, archive });
    expect(end.log).toEqual(
      expect.arrayContaining([
        'Convert to template.',
        '  Renamed "vm-190-disk-0" to "base-190-disk-0" in volume group "pve"',
      ]),
    );
    expect((await c.guest(190)).config).toMatchObject({
      template: '1',
      scsi0: 'local-lvm:base-190-disk-0,discard=on,size=3584M',
      ide2: 'local-lvm:vm-190-cloudinit,media=cdrom',
    });
    expect(Object.keys(await volumesOf(c, 'pve1', 'local-lvm', 190)).sort()).toEqual([
      'local-lvm:base-190-disk-0',
      'local-lvm:vm-190-cloudinit',
    ]);
  });

  it('restores a PBS snapshot onto the storages the disks were on', async () => {
    const c = client();
    const archive = await backupOf(c, 'pve2', 'pbs-backup', 120);
    const end = await runTask(c, 'POST', '/nodes/pve2/qemu', { vmid: 153, archive });
    expect(end.exitstatus).toBe('OK');
    expect(end.log).toEqual(
      expect.arrayContaining([
        "new volume ID is 'local-zfs:vm-153-disk-0'",
        expect.stringMatching(
          /^restore proxmox backup image: \/usr\/bin\/pbs-restore --repository pve-sync@pbs!pve@10\.10\.0\.50:store1 vm\/120\/\S+Z drive-scsi0\.img\.fidx \/dev\/zvol\/rpool\/data\/vm-153-disk-0 --verbose --format raw --skip-zero$/,
        ),
      ]),
    );
    const restored = await c.guest(153);
    expect(restored.config).toMatchObject({
      name: 'files01',
      scsi0: 'local-zfs:vm-153-disk-0,iothread=1,size=64G',
    });
    expect(restored.config).not.toHaveProperty('parent');
    expect(restored.snapshots).toEqual({});
  });

  it('refuses an existing VMID without force, and a running VM with it (in the task)', async () => {
    const c = client();
    const archive = await backupOf(c, 'pve1', 'local', 100);
    expectError(
      await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 101, archive } }),
      500,
      "unable to restore VM 101 - VM 101 already exists on node 'pve1'",
    );
    const end = await runTask(c, 'POST', '/nodes/pve1/qemu', { vmid: 101, archive, force: 1 });
    expect(end.exitstatus).toBe('unable to restore VM 101 - vm is running');
    expect(end.log).toContain(
      'error before or during data restore, some or all disks were not completely restored. VM 101 state is NOT cleaned up.',
    );
    const guest = await c.guest(101);
    expect([guest.status, guest.lock, guest.config.name]).toEqual(['running', null, 'web02']);
  });

  it('refuses a locked VM at once, and a vzdump file that is on another node', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve3/vzdump', { vmid: 300, storage: 'local' });
    const archive = await backupOf(c, 'pve3', 'local', 300);
    await c.setLock(300, 'snapshot');
    expectError(
      await c.api('POST', '/nodes/pve3/qemu', { form: { vmid: 300, archive, force: 1 } }),
      500,
      'unable to restore VM 300 - VM is locked (snapshot)',
    );
    // `local` is node-local: pve1 has no such file
    expectError(
      await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 163, archive } }),
      500,
      `can't find file '${archive}'`,
    );
  });

  it('replaces a stopped VM with force=1: old disks freed, unreferenced ones become unused', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve3/vzdump', { vmid: 300, storage: 'local' });
    const archive = await backupOf(c, 'pve3', 'local', 300);
    await c.api('PUT', '/nodes/pve3/qemu/300/config', { form: { memory: 4096 } });
    const end = await runTask(c, 'POST', '/nodes/pve3/qemu', { vmid: 300, archive, force: 1 });
    expect(end.exitstatus).toBe('OK');
    expect(end.log).toEqual(
      expect.arrayContaining([
        '  Logical volume "vm-300-disk-0" successfully removed.',
        '  Logical volume "vm-300-disk-0" created.',
        "VM 300 add unreferenced volume 'local-lvm:vm-300-disk-1' as 'unused0' to config",
      ]),
    );
    const restored = await c.guest(300);
    expect(restored.config).toMatchObject({
      memory: '2048',
      scsi0: 'local-lvm:vm-300-disk-0,iothread=1,size=32G',
      ide2: 'local:iso/debian-13.1.0-amd64-netinst.iso,media=cdrom,size=754M',
      unused0: 'local-lvm:vm-300-disk-1',
    });
  });

  it("refuses a protected VM in the task, with PVE's doubled dash", async () => {
    const c = client();
    const archive = await backupOf(c, 'pve1', 'local', 102);
    const end = await runTask(c, 'POST', '/nodes/pve1/qemu', { vmid: 102, archive, force: 1 });
    expect(end.exitstatus).toBe('unable to restore VM 102 - - protection mode enabled');
  });

  it('wants a backup archive, of a VM', async () => {
    const c = client();
    const post = (form: Record<string, string | number>) =>
      c.api('POST', '/nodes/pve1/qemu', { form });
    expectError(
      await post({ vmid: 160, archive: 'local:iso/debian-13.1.0-amd64-netinst.iso' }),
      500,
      "unable to use volume local:iso/debian-13.1.0-amd64-netinst.iso - content type needs to be 'backup'",
    );
    expectError(
      await post({
        vmid: 160,
        archive: 'local:backup/vzdump-qemu-100-2020_01_01-00_00_00.vma.zst',
      }),
      500,
      "can't find file 'local:backup/vzdump-qemu-100-2020_01_01-00_00_00.vma.zst'",
    );
    expectError(
      await post({ vmid: 160, archive: 'local:backup/x.vma', scsi0: 'local-lvm:4' }),
      400,
      {
        scsi0: "option conflicts with option 'archive'",
      },
    );
    const ct = await runTask(c, 'POST', '/nodes/pve1/qemu', {
      vmid: 160,
      archive: await backupOf(c, 'pve1', 'local', 110),
    });
    expect(ct.exitstatus).toMatch(
      /^ERROR: file '\/var\/lib\/vz\/dump\/vzdump-lxc-110-\S+\.tar\.zst' does not look like a QemuServer vzdump backup$/,
    );
    // PVE leaves the VM's config behind (without its lock)
    expect((await c.guest(160)).config).toEqual({});
    const pbs = await runTask(c, 'POST', '/nodes/pve1/qemu', {
      vmid: 161,
      archive: await backupOf(c, 'pve1', 'pbs-backup', 110),
    });
    expect(pbs.exitstatus).toBe("got unexpected backup format 'pbs-ct'");
    const noImages = await runTask(c, 'POST', '/nodes/pve1/qemu', {
      vmid: 162,
      archive: await backupOf(c, 'pve1', 'local', 100),
      storage: 'local',
    });
    expect(noImages.exitstatus).toBe("Content type 'images' is not available on storage 'local'");
  });

  it('needs VM.Allocate (or VM.Backup over an existing VM) and access to the archive', async () => {
    const c = client();
    const archive = await backupOf(c, 'pve1', 'local', 100);
    expectError(
      await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 170, archive }, ...audit }),
      403,
      'Permission check failed',
    );
    expectError(
      await c.api('POST', '/nodes/pve1/qemu', {
        form: { vmid: 170, archive, storage: 'local-lvm' },
        ...audit,
      }),
      403,
      'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)',
    );
  });
});

describe('vzrestore', () => {
  it('restores a container backup to a new CT on the given storage', async () => {
    const c = client();
    const archive = await backupOf(c, 'pve1', 'local', 110);
    const end = await runTask(c, 'POST', '/nodes/pve1/lxc', {
      vmid: 180,
      ostemplate: archive,
      restore: 1,
      storage: 'local-lvm',
    });
    expect(end.status).toMatchObject({ type: 'vzrestore', id: '180' });
    expect(end.exitstatus).toBe('OK');
    expect(end.log).toEqual(
      expect.arrayContaining([
        `recovering backed-up configuration from '${archive}'`,
        '  Logical volume "vm-180-disk-0" created.',
        `restoring '${archive}' now..`,
        'merging backed-up and given configuration..',
      ]),
    );
    const source = (await c.guest(110)).config;
    const restored = await c.guest(180);
    expect(restored.config).toMatchObject({
      hostname: 'dns01',
      net0: source.net0,
      rootfs: 'local-lvm:vm-180-disk-0,size=8G',
      unprivileged: '1',
    });
    expect(restored.status).toBe('stopped');
  });

  it('restores from PBS with unique=1 (new hwaddr) and starts it when asked', async () => {
    const c = client();
    const archive = await backupOf(c, 'pve1', 'pbs-backup', 110);
    const end = await runTask(c, 'POST', '/nodes/pve2/lxc', {
      vmid: 181,
      ostemplate: archive,
      restore: 1,
      storage: 'local-zfs',
      unique: 1,
      start: 1,
    });
    expect(end.exitstatus).toBe('OK');
    const restored = await c.guest(181);
    expect(restored).toMatchObject({ status: 'running', node: 'pve2' });
    expect(restored.config.rootfs).toBe('local-zfs:subvol-181-disk-0,size=8G');
    expect(/hwaddr=([0-9A-F:]+)/.exec(restored.config.net0 ?? '')?.[1]).not.toBe(
      /hwaddr=([0-9A-F:]+)/.exec((await c.guest(110)).config.net0 ?? '')?.[1],
    );
  });

  it("needs a storage for container directories ('local' is the default)", async () => {
    const c = client();
    expectError(
      await c.api('POST', '/nodes/pve1/lxc', {
        form: { vmid: 182, ostemplate: await backupOf(c, 'pve1', 'local', 110), restore: 1 },
      }),
      400,
      { storage: "storage 'local' does not support container directories" },
    );
  });

  it('replaces a stopped container with force=1, refuses a running one', async () => {
    const c = client();
    expectError(
      await c.api('POST', '/nodes/pve1/lxc', {
        form: {
          vmid: 110,
          ostemplate: await backupOf(c, 'pve1', 'local', 110),
          restore: 1,
          force: 1,
          storage: 'local-lvm',
        },
      }),
      500,
      "can't overwrite running container",
    );
    expectError(
      await c.api('POST', '/nodes/pve3/lxc', {
        form: {
          vmid: 301,
          ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
          restore: 1,
          storage: 'local-lvm',
        },
      }),
      500,
      "CT 301 already exists on node 'pve3'",
    );
    await runTask(c, 'POST', '/nodes/pve3/vzdump', { vmid: 301, storage: 'local' });
    const archive = await backupOf(c, 'pve3', 'local', 301);
    const end = await runTask(c, 'POST', '/nodes/pve3/lxc', {
      vmid: 301,
      ostemplate: archive,
      restore: 1,
      force: 1,
      storage: 'local-lvm',
    });
    expect(end.exitstatus).toBe('OK');
    // the new rootfs is created before the old one is destroyed
    expect(end.log).toEqual(
      expect.arrayContaining([
        '  Logical volume "vm-301-disk-1" created.',
        '  Logical volume "vm-301-disk-0" successfully removed.',
      ]),
    );
    expect((await c.guest(301)).config).toMatchObject({
      hostname: 'old-wiki',
      ostype: 'ubuntu',
      rootfs: 'local-lvm:vm-301-disk-1,size=8G',
    });
    expect(await volumesOf(c, 'pve3', 'local-lvm', 301)).toEqual({
      'local-lvm:vm-301-disk-1': 8 * GIB,
    });
  });

  it("refuses a VM backup and a non-backup volume with PVE's texts", async () => {
    const c = client();
    const vm = await runTask(c, 'POST', '/nodes/pve1/lxc', {
      vmid: 183,
      ostemplate: await backupOf(c, 'pve1', 'local', 100),
      restore: 1,
      storage: 'local-lvm',
    });
    expect(vm.exitstatus).toBe(
      'unable to restore CT 183 - ERROR: archive contains no configuration file',
    );
    await expect(c.guest(183)).rejects.toThrow(/no such guest 183/);
    const pbs = await runTask(c, 'POST', '/nodes/pve1/lxc', {
      vmid: 183,
      ostemplate: await backupOf(c, 'pve1', 'pbs-backup', 100),
      restore: 1,
      storage: 'local-lvm',
    });
    expect(pbs.exitstatus).toBe("unable to restore CT 183 - got unexpected backup format 'pbs-vm'");
    expectError(
      await c.api('POST', '/nodes/pve1/lxc', {
        form: {
          vmid: 183,
          ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
          restore: 1,
          storage: 'local-lvm',
        },
      }),
      500,
      "unable to use volume local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst - content type needs to be 'backup'",
    );
  });
});
