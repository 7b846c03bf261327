// The ZFS pool and Proxmox Backup Server storages over HTTP: their storage.cfg entries, usage,
// content listings as ZFSPoolPlugin and PBSPlugin fill them (zvols and container subvols; PBS
// snapshots with verification results), and image allocation and freeing on them.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, getData, runTask, useSimulator, volumesOf } from '../support/sim-harness.ts';

const client = useSimulator('pbs-zfs');
const GIB = 1024 ** 3;
const DAY = 86_400;

type Item = Record<string, unknown>;

/** PBSPlugin print_volid: the snapshot's backup time, as ISO 8601 UTC seconds, names it. */
const pbsTime = (volid: unknown) =>
  Date.parse(String(volid).replace(/^pbs-backup:backup\/(vm|ct)\/\d+\//, '')) / 1000;

describe('storage configuration', () => {
  it('lists the zfspool and pbs entries with their storage.cfg keys, never a password', async () => {
    const storages = await getData<Item[]>(client(), '/storage');
    expect(storages.find((s) => s.storage === 'local-zfs')).toEqual({
      storage: 'local-zfs',
      type: 'zfspool',
      content: 'images,rootdir',
      pool: 'rpool/data',
      sparse: 1,
      digest: expect.any(String),
    });
    const pbs = storages.find((s) => s.storage === 'pbs-backup');
    expect(pbs).toEqual({
      storage: 'pbs-backup',
      type: 'pbs',
      content: 'backup',
      datastore: 'store1',
      server: '10.10.0.50',
      username: 'pve-sync@pbs!pve',
      fingerprint: expect.stringMatching(/^([0-9a-f]{2}:){31}[0-9a-f]{2}$/),
      'prune-backups': 'keep-daily=7,keep-weekly=4',
      shared: 1,
      digest: expect.any(String),
    });
    expect(pbs).not.toHaveProperty('password');
    expect(await getData(client(), '/storage', { type: 'pbs' })).toEqual([pbs]);
  });

  it("reports both in each node's storages and in cluster/resources", async () => {
    const c = client();
    const onNode = await getData<Item[]>(c, '/nodes/pve2/storage', { content: 'backup' });
    expect(onNode.map((s) => [s.storage, s.shared])).toEqual([
      ['local', 0],
      ['pbs-backup', 1],
    ]);
    const zfs = (await getData<Item[]>(c, '/nodes/pve3/storage', { storage: 'local-zfs' }))[0];
    expect(zfs).toMatchObject({ type: 'zfspool', content: 'images,rootdir', shared: 0, active: 1 });
    expect(Number(zfs?.total)).toBe(Number(zfs?.used) + Number(zfs?.avail));
    const resources = await getData<Item[]>(c, '/cluster/resources', { type: 'storage' });
    expect(resources.filter((r) => r.storage === 'pbs-backup').map((r) => r.node)).toEqual([
      'pve1',
      'pve2',
      'pve3',
    ]);
    expect(resources.find((r) => r.id === 'storage/pve2/local-zfs')).toMatchObject({
      plugintype: 'zfspool',
      shared: 0,
      status: 'available',
    });
  });
});

describe('pbs content', () => {
  it('lists only backups, with format, subtype, notes, protection and verification', async () => {
    const items = await getData<Item[]>(client(), '/nodes/pve1/storage/pbs-backup/content');
    expect(items.map((i) => [i.vmid, i.format, i.subtype])).toEqual([
      [110, 'pbs-ct', 'lxc'],
      [100, 'pbs-vm', 'qemu'],
      [120, 'pbs-vm', 'qemu'],
      [120, 'pbs-vm', 'qemu'],
    ]);
    // in calendar days (UTC): the nightly job runs at 02:00
    const today = Math.floor(Date.now() / 1000 / DAY);
    const age = (item: Item | undefined) => today - Math.floor(Number(item?.ctime) / DAY);
    const [ct, ofToday, older, newest] = items;
    expect(items.map(age)).toEqual([2, 0, 16, 9]);
    for (const item of items) {
      expect(item.volid).toMatch(
        /^pbs-backup:backup\/(vm|ct)\/\d+\/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
      );
      expect(item.ctime).toBe(pbsTime(item.volid));
      expect(item.content).toBe('backup');
    }
    const upid = expect.stringMatching(
      /^UPID:pbs01:([0-9A-F]{8}:){4}verificationjob:\S+:root@pam:$/,
    );
    expect(ct).toMatchObject({ notes: 'dns01', verification: { state: 'failed', upid } });
    expect(ofToday).toMatchObject({ notes: 'web01', verification: { state: 'ok', upid } });
    expect(newest).toMatchObject({
      volid: expect.stringMatching(/^pbs-backup:backup\/vm\/120\//),
      notes: 'files01',
      size: expect.any(Number),
      verification: { state: 'ok', upid },
    });
    expect(older).toMatchObject({ protected: 1 });
    expect(older).not.toHaveProperty('verification');
    expect(newest).not.toHaveProperty('protected');
  });

  it('is the same on every node, filters by vmid, and has no images', async () => {
    const c = client();
    const path = (node: string) => `/nodes/${node}/storage/pbs-backup/content`;
    expect(await getData(c, path('pve3'))).toEqual(await getData(c, path('pve1')));
    const of120 = await getData<Item[]>(c, path('pve2'), { vmid: 120 });
    expect(of120.map((i) => i.vmid)).toEqual([120, 120]);
    expect(await getData(c, path('pve2'), { content: 'images' })).toEqual([]);
    expect(await getData(c, path('pve2'), { content: 'backup', vmid: 200 })).toEqual([]);
  });

  it('hides backups from a token that may only audit the datastore', async () => {
    const res = await client().api('GET', '/nodes/pve1/storage/pbs-backup/content', {
      token: SIMULATOR_TOKENS.storage,
    });
    expect([res.status, res.body.data]).toEqual([200, []]);
  });

  it('refuses to put a guest disk on it, as PVE does', async () => {
    const c = client();
    expectError(
      await c.api('POST', '/nodes/pve1/qemu', { form: { vmid: 140, scsi0: 'pbs-backup:4' } }),
      400,
      { storage: "storage 'pbs-backup' does not support vm images" },
    );
    const [backup] = await getData<Item[]>(c, '/nodes/pve1/storage/pbs-backup/content', {
      vmid: 100,
    });
    expectError(
      await c.api('POST', '/nodes/pve1/qemu', {
        form: { vmid: 140, scsi0: String(backup?.volid) },
      }),
      400,
      { scsi0: "content type needs to be 'images' or 'iso'" },
    );
    expectError(
      await c.api('POST', '/nodes/pve1/lxc', {
        form: {
          vmid: 140,
          ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
          storage: 'pbs-backup',
        },
      }),
      400,
      { storage: "storage 'pbs-backup' does not support container directories" },
    );
  });
});

describe('zfspool content', () => {
  it('lists zvols as zfs list shows them: name and parent, no creation time', async () => {
    const items = await getData<Item[]>(client(), '/nodes/pve2/storage/local-zfs/content');
    expect(items).toEqual([
      {
        volid: 'local-zfs:vm-120-disk-0',
        content: 'images',
        format: 'raw',
        size: 64 * GIB,
        name: 'vm-120-disk-0',
        parent: null,
        vmid: 120,
      },
    ]);
    expect(await getData(client(), '/nodes/pve1/storage/local-zfs/content')).toEqual([]);
  });

  it('allocates vm-<id>-disk-<n> for a VM and frees it on destroy', async () => {
    const c = client();
    const end = await runTask(c, 'POST', '/nodes/pve1/qemu', {
      vmid: 141,
      scsi0: 'local-zfs:4',
      scsi1: 'local-zfs:1',
    });
    expect(end.exitstatus).toBe('OK');
    expect(await volumesOf(c, 'pve1', 'local-zfs', 141)).toEqual({
      'local-zfs:vm-141-disk-0': 4 * GIB,
      'local-zfs:vm-141-disk-1': 1 * GIB,
    });
    expect((await c.guest(141)).config.scsi0).toBe('local-zfs:vm-141-disk-0,size=4G');
    await runTask(c, 'DELETE', '/nodes/pve1/qemu/141');
    expect(await volumesOf(c, 'pve1', 'local-zfs', 141)).toEqual({});
  });

  it('gives a container a subvol dataset, listed as rootdir', async () => {
    const c = client();
    const end = await runTask(c, 'POST', '/nodes/pve3/lxc', {
      vmid: 142,
      ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
      storage: 'local-zfs',
      rootfs: 'local-zfs:2',
    });
    expect(end.exitstatus).toBe('OK');
    expect((await c.guest(142)).config.rootfs).toBe('local-zfs:subvol-142-disk-0,size=2G');
    expect(
      await getData(c, '/nodes/pve3/storage/local-zfs/content', { content: 'rootdir' }),
    ).toEqual([
      {
        volid: 'local-zfs:subvol-142-disk-0',
        content: 'rootdir',
        format: 'subvol',
        size: 2 * GIB,
        name: 'subvol-142-disk-0',
        parent: null,
        vmid: 142,
      },
    ]);
  });
});
