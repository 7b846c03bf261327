// pve_delete_vm, pve_resize_disk and pve_migrate_vm over /mcp against the simulator: each
// preview names what it acts on and writes nothing; what Proxmox would refuse (a running or
// protected guest, a shrinking resize, a running VM without online) is refused before sending;
// confirmed calls change the guest as the simulator's own view shows.

import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, text } from '../support/worker/mcp';
import { simSession } from '../support/worker/session';
import { sim } from '../support/worker/sim';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const session = simSession();
const client = (): Client => session.client;

async function refused(
  tool: string,
  args: Record<string, unknown>,
  message: RegExp,
  kind = 'conflict',
): Promise<void> {
  const r = await call(client(), tool, { ...args, confirm: true });
  expect(r.isError, text(r)).toBe(true);
  expect(r.structuredContent!.error).toMatchObject({ kind });
  expect(text(r)).toMatch(message);
  expect(await sim.writes()).toEqual([]);
}

describe('pve_delete_vm', () => {
  it('previews the guest, its state, its disks and its protection, writing nothing', async () => {
    const r = await call(client(), 'pve_delete_vm', { node: 'pve2', vmid: 104 });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      guest: { name: 'win11-lab', status: 'stopped' },
      request: { method: 'DELETE', path: '/nodes/pve2/qemu/104', params: {} },
      details: { protection: false, template: false },
    });
    expect(r.structuredContent!.details.disks.map((d: { key: string }) => d.key)).toEqual([
      'efidisk0',
      'scsi0',
      'tpmstate0',
    ]);
    expect(text(r)).toMatch(
      /Destroying VM 104 \(win11-lab\) removes it and its disks for good: efidisk0 local-lvm:vm-104-disk-0 \(4M\), scsi0 local-lvm:vm-104-disk-1 \(80G\), tpmstate0 local-lvm:vm-104-disk-2 \(4M\).*Protection is off\. This cannot be undone\./,
    );
    expect(await sim.writes()).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a running VM',
      { node: 'pve1', vmid: 101 },
      /VM 101 \(web02\) is running: shut it down first/,
    ],
    [
      'a protected VM',
      { node: 'pve1', vmid: 102 },
      /VM 102 \(db01\) has protection set: Proxmox refuses to destroy it/,
    ],
    [
      'an HA-managed, replicated VM without purge',
      { node: 'pve2', vmid: 120 },
      /VM 120 \(files01\) is managed by the HA manager and has replication job 120-0: Proxmox refuses to destroy it unless purge: true, which also removes it from HA, replication and backup jobs\./,
    ],
    [
      'an HA-managed VM with purge, still running',
      { node: 'pve2', vmid: 120, purge: true },
      /VM 120 \(files01\) is running: shut it down first/,
    ],
    [
      'a running container',
      { node: 'pve1', vmid: 110, vm_type: 'lxc' },
      /container 110 \(dns01\) is running/,
    ],
  ])('refuses %s before sending anything', (_label, args, message) =>
    refused('pve_delete_vm', args, message),
  );

  it('refuses a locked guest, naming the lock', async () => {
    await sim.setLock(300, 'backup');
    try {
      await refused(
        'pve_delete_vm',
        { node: 'pve3', vmid: 300 },
        /VM 300 \(backup-test\) is locked \(backup\)/,
      );
    } finally {
      await sim.setLock(300, null);
    }
  });

  it('destroys a stopped VM with purge and its unreferenced disks, and a stopped container', async () => {
    const vm = await call(client(), 'pve_delete_vm', {
      node: 'pve3',
      vmid: 300,
      purge: true,
      destroy_unreferenced_disks: true,
      confirm: true,
      wait: true,
    });
    expect(vm.structuredContent).toMatchObject({
      mode: 'started',
      upid: expect.stringMatching(/:qmdestroy:300:/),
      task: { succeeded: true },
    });
    const ct = await call(client(), 'pve_delete_vm', {
      node: 'pve3',
      vmid: 301,
      vm_type: 'lxc',
      confirm: true,
      wait: true,
    });
    expect(ct.structuredContent).toMatchObject({ task: { succeeded: true } });
    const [first, second] = await sim.writes();
    expect(first!.query).toEqual({ purge: '1', 'destroy-unreferenced-disks': '1' });
    expect(second!.path).toBe('/api2/json/nodes/pve3/lxc/301');
    await expect(sim.guest(300)).rejects.toThrow(/404/);
    await expect(sim.guest(301)).rejects.toThrow(/404/);
  });
});

describe('pve_resize_disk', () => {
  it('previews the sizes before and after, writing nothing', async () => {
    const r = await call(client(), 'pve_resize_disk', {
      node: 'pve1',
      vmid: 100,
      disk: 'scsi0',
      size: '+10G',
    });
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      request: {
        method: 'PUT',
        path: '/nodes/pve1/qemu/100/resize',
        params: { disk: 'scsi0', size: '+10G' },
      },
      details: { from_bytes: 32 * 1024 ** 3, to_bytes: 42 * 1024 ** 3 },
    });
    expect(text(r)).toMatch(
      /scsi0 \(local-lvm:vm-100-disk-0\) grows from 32 GiB to 42 GiB\. The partition and file system inside are not grown/,
    );
    expect(await sim.writes()).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, RegExp, string?]>([
    [
      'an absolute size below the current one',
      { node: 'pve1', vmid: 100, disk: 'scsi0', size: '16G' },
      /Proxmox only grows disks: scsi0 of VM 100 \(web01\) is 32 GiB, more than 16G/,
    ],
    [
      'a disk the guest does not have',
      { node: 'pve1', vmid: 100, disk: 'scsi5', size: '+1G' },
      /VM 100 \(web01\) has no scsi5 \(it has ide2, scsi0\)/,
    ],
    [
      'a container volume name on a VM',
      { node: 'pve1', vmid: 100, disk: 'rootfs', size: '+1G' },
      /disk: a VM disk is ide0-3/,
      'invalid_arguments',
    ],
    [
      'a shrinking container volume',
      { node: 'pve1', vmid: 110, vm_type: 'lxc', disk: 'rootfs', size: '4G' },
      /rootfs of container 110 \(dns01\) is 8 GiB, more than 4G/,
    ],
  ])('refuses %s before sending anything', (_label, args, message, kind) =>
    refused('pve_resize_disk', args, message, kind),
  );

  it('refuses a CD-ROM drive before sending anything', async () => {
    // Give VM 103 an empty CD-ROM drive past the API under test.
    expect(
      (await sim.api('PUT', '/nodes/pve2/qemu/103/config', { ide2: 'none,media=cdrom' })).status,
    ).toBe(200);
    await sim.clearLog();
    await refused(
      'pve_resize_disk',
      { node: 'pve2', vmid: 103, disk: 'ide2', size: '+1G' },
      /ide2 of VM 103 \(ci-runner01\) is a CD-ROM drive/,
    );
  });

  it('leaves a disk that already has the size alone', async () => {
    const r = await call(client(), 'pve_resize_disk', {
      node: 'pve1',
      vmid: 100,
      disk: 'scsi0',
      size: '32G',
      confirm: true,
    });
    expect(r.structuredContent).toMatchObject({ mode: 'unchanged' });
    expect(await sim.writes()).toEqual([]);
  });

  it('grows a VM disk and a container root file system', async () => {
    const vm = await call(client(), 'pve_resize_disk', {
      node: 'pve1',
      vmid: 100,
      disk: 'scsi0',
      size: '+10G',
      confirm: true,
      wait: true,
    });
    expect(vm.structuredContent).toMatchObject({ mode: 'started', task: { succeeded: true } });
    expect((await sim.guest(100)).config.scsi0).toMatch(/size=42G/);
    const ct = await call(client(), 'pve_resize_disk', {
      node: 'pve1',
      vmid: 110,
      vm_type: 'lxc',
      disk: 'rootfs',
      size: '10G',
      confirm: true,
      wait: true,
    });
    expect(ct.structuredContent).toMatchObject({ task: { succeeded: true } });
    expect((await sim.guest(110)).config.rootfs).toMatch(/size=10G/);
  });
});

describe('pve_migrate_vm', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a running VM without online',
      { node: 'pve1', vmid: 101, target: 'pve2' },
      /VM 101 \(web02\) is running: pass online: true/,
    ],
    [
      'a live migration of local disks without with_local_disks',
      { node: 'pve1', vmid: 100, target: 'pve2', online: true },
      /VM 100 \(web01\) runs on local disks \(local-lvm:vm-100-disk-0\): pass with_local_disks: true/,
    ],
    [
      'a move to the node it is on',
      { node: 'pve1', vmid: 101, target: 'pve1', online: true },
      /already is on pve1/,
    ],
    [
      'a running container without restart',
      { node: 'pve2', vmid: 200, vm_type: 'lxc', target: 'pve1' },
      /a running container moves only by restart/,
    ],
    [
      'a live migration of a container',
      { node: 'pve2', vmid: 200, vm_type: 'lxc', target: 'pve1', online: true },
      /Proxmox cannot live-migrate containers/,
    ],
    [
      'restart for a VM',
      { node: 'pve2', vmid: 104, target: 'pve1', restart: true },
      /restart is for containers/,
    ],
  ])('refuses %s before sending anything', (_label, args, message) =>
    refused('pve_migrate_vm', args, message),
  );

  it('previews a live migration with what is copied, writing nothing', async () => {
    const r = await call(client(), 'pve_migrate_vm', {
      node: 'pve1',
      vmid: 100,
      target: 'pve2',
      online: true,
      with_local_disks: true,
    });
    expect(r.structuredContent).toMatchObject({
      mode: 'preview',
      request: {
        method: 'POST',
        path: '/nodes/pve1/qemu/100/migrate',
        params: { target: 'pve2', online: '1', 'with-local-disks': '1' },
      },
    });
    expect(text(r)).toMatch(
      /VM 100 \(web01\) moves from pve1 to pve2 while it runs \(live migration\)\. Its local disks are copied: local-lvm:vm-100-disk-0\./,
    );
    expect(await sim.writes()).toEqual([]);
  });

  it('reports a migration Proxmox fails as an error with its exit status (local disks with snapshots)', async () => {
    const r = await call(client(), 'pve_migrate_vm', {
      node: 'pve1',
      vmid: 101,
      target: 'pve2',
      online: true,
      with_local_disks: true,
      confirm: true,
      wait: true,
    });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({
      mode: 'started',
      task: { status: 'stopped', exitstatus: 'migration aborted', succeeded: false },
    });
    expect(await sim.guest(101)).toMatchObject({ node: 'pve1', status: 'running' });
  });

  it('moves a running VM live, a stopped one, and a running container by restart', async () => {
    const live = await call(client(), 'pve_migrate_vm', {
      node: 'pve1',
      vmid: 100,
      target: 'pve2',
      online: true,
      with_local_disks: true,
      confirm: true,
      wait: true,
    });
    expect(live.structuredContent).toMatchObject({ task: { succeeded: true } });
    expect(await sim.guest(100)).toMatchObject({ node: 'pve2', status: 'running' });
    const cold = await call(client(), 'pve_migrate_vm', {
      node: 'pve2',
      vmid: 104,
      target: 'pve3',
      targetstorage: 'local-lvm',
      confirm: true,
      wait: true,
    });
    expect(cold.structuredContent).toMatchObject({ task: { succeeded: true } });
    expect(await sim.guest(104)).toMatchObject({ node: 'pve3', status: 'stopped' });
    // PLG's callers send online and with_local_disks as false for containers too.
    const ct = await call(client(), 'pve_migrate_vm', {
      node: 'pve2',
      vmid: 200,
      vm_type: 'lxc',
      target: 'pve1',
      restart: true,
      online: false,
      with_local_disks: false,
      confirm: true,
      wait: true,
    });
    expect(ct.structuredContent).toMatchObject({ task: { succeeded: true } });
    expect(await sim.guest(200)).toMatchObject({ node: 'pve1', status: 'running' });
    expect((await sim.writes()).map((w) => w.params)).toEqual([
      { target: 'pve2', online: '1', 'with-local-disks': '1' },
      { target: 'pve3', targetstorage: 'local-lvm' },
      { target: 'pve1', restart: '1' },
    ]);
  });
});
