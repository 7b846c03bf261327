// HA resources and replication jobs over HTTP: the seeded vm:120 and vm:102 and job 120-0, the
// HA state guest reads report, migrating a replicated VM, and destroy refusing HA-managed or
// replicated guests without purge=1 (with it, both configurations lose the guest).
import { describe, expect, it } from 'vitest';
import { existingJobError } from '../../simulator/cluster/replication.ts';
import { seedCluster } from '../../simulator/cluster/seed.ts';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, getData, runTask, useSimulator, volumesOf } from '../support/sim-harness.ts';

const client = useSimulator('ha');
const audit = { token: SIMULATOR_TOKENS.audit };
const storageOnly = { token: SIMULATOR_TOKENS.storage };
const DIGEST = expect.stringMatching(/^[0-9a-f]{40}$/);

const VM_120 = {
  sid: 'vm:120',
  type: 'vm',
  state: 'started',
  max_restart: 1,
  max_relocate: 1,
  failback: 1,
  comment: 'Samba file server, replicated to pve3',
  digest: DIGEST,
};
const VM_102 = {
  sid: 'vm:102',
  type: 'vm',
  state: 'started',
  max_restart: 2,
  max_relocate: 1,
  failback: 1,
  digest: DIGEST,
};

describe('HA resources', () => {
  it('lists each resource as configured, with the file digest, filtered by type', async () => {
    const c = client();
    const all = await getData<Record<string, unknown>[]>(c, '/cluster/ha/resources');
    expect(all).toEqual([VM_120, VM_102]);
    expect(new Set(all.map((r) => r.digest)).size).toBe(1);
    expect(await getData(c, '/cluster/ha/resources', { type: 'vm' })).toEqual([VM_120, VM_102]);
    expect(await getData(c, '/cluster/ha/resources', { type: 'ct' })).toEqual([]);
  });

  it('reads one resource by sid or by bare VMID, and names what it cannot find', async () => {
    const c = client();
    expect(await getData(c, '/cluster/ha/resources/vm:120')).toEqual(VM_120);
    expect(await getData(c, '/cluster/ha/resources/102')).toEqual(VM_102);
    expectError(
      await c.api('GET', '/cluster/ha/resources/ct:110'),
      500,
      "no such resource 'ct:110'",
    );
    expectError(await c.api('GET', '/cluster/ha/resources/110'), 500, "no such resource 'ct:110'");
    expectError(
      await c.api('GET', '/cluster/ha/resources/999'),
      500,
      'unable to detect SID from VMID - VM/CT 999 does not exist',
    );
    expectError(await c.api('GET', '/cluster/ha/resources/vm:'), 400, {
      sid: 'invalid format - value does not look like a valid ha resource id\n',
    });
  });

  it("needs Sys.Audit on '/'", async () => {
    const c = client();
    expect((await c.api('GET', '/cluster/ha/resources', audit)).body.data).toEqual([
      VM_120,
      VM_102,
    ]);
    for (const path of ['/cluster/ha/resources', '/cluster/ha/resources/vm:120']) {
      expectError(
        await c.api('GET', path, storageOnly),
        403,
        'Permission check failed (/, Sys.Audit)',
      );
    }
  });

  it("reports the service state in status/current's ha and as hastate in cluster/resources", async () => {
    const c = client();
    expect(await getData(c, '/nodes/pve2/qemu/120/status/current')).toMatchObject({
      ha: { managed: 1, state: 'started' },
    });
    expect(await getData(c, '/nodes/pve1/qemu/102/status/current')).toMatchObject({
      ha: { managed: 1, state: 'started' },
    });
    expect((await getData(c, '/nodes/pve1/qemu/100/status/current')).ha).toEqual({ managed: 0 });
    const resources = await getData<Record<string, unknown>[]>(c, '/cluster/resources');
    const hastate = (id: string) => resources.find((r) => r.id === id)?.hastate;
    expect([hastate('qemu/120'), hastate('qemu/102'), hastate('qemu/100')]).toEqual([
      'started',
      'started',
      undefined,
    ]);
    // the CRM's node_status: every node once HA manages resources
    expect(resources.filter((r) => r.type === 'node').map((r) => r.hastate)).toEqual([
      'online',
      'online',
      'online',
    ]);
    await c.setNodeOnline('pve3', false);
    const offline = await getData<Record<string, unknown>[]>(c, '/cluster/resources', {
      type: 'node',
    });
    expect(offline.find((r) => r.node === 'pve3')?.hastate).toBe('unknown');
  });
});

describe('replication jobs', () => {
  const JOB = {
    id: '120-0',
    type: 'local',
    guest: 120,
    jobnum: 0,
    target: 'pve3',
    source: 'pve2',
    schedule: '*/15',
  };

  it('lists every job the caller may audit the guest of', async () => {
    const c = client();
    expect(await getData(c, '/cluster/replication')).toEqual([JOB]);
    expect((await c.api('GET', '/cluster/replication', audit)).body.data).toEqual([JOB]);
  });

  it('shows a token without VM.Audit no job at all', async () => {
    const res = await client().api('GET', '/cluster/replication', storageOnly);
    expect([res.status, res.body.data]).toEqual([200, []]);
  });

  it('keeps a copy of the replicated disk on the target node', async () => {
    const c = client();
    const disk = { 'local-zfs:vm-120-disk-0': 64 * 1024 ** 3 };
    expect(await volumesOf(c, 'pve2', 'local-zfs', 120)).toEqual(disk);
    expect(await volumesOf(c, 'pve3', 'local-zfs', 120)).toEqual(disk);
    expect(await volumesOf(c, 'pve1', 'local-zfs', 120)).toEqual({});
  });
});

describe('migrating a replicated guest', () => {
  it('goes live only to its replication target, which then replicates back', async () => {
    const c = client();
    const elsewhere = await runTask(c, 'POST', '/nodes/pve2/qemu/120/migrate', {
      target: 'pve1',
      online: 1,
      'with-local-disks': 1,
    });
    expect(elsewhere.exitstatus).toBe('migration aborted');
    expect(elsewhere.log.join('\n')).toContain(
      "Cannot live-migrate replicated VM to node 'pve1' - not a replication target. Use 'force' to override.",
    );
    const end = await runTask(c, 'POST', '/nodes/pve2/qemu/120/migrate', {
      target: 'pve3',
      online: 1,
      'with-local-disks': 1,
    });
    expect(end.exitstatus).toBe('OK');
    expect(end.log.join('\n')).toContain(
      "found local, replicated disk 'local-zfs:vm-120-disk-0' (attached)",
    );
    expect(await c.guest(120)).toMatchObject({ node: 'pve3', status: 'running' });
    expect(await getData(c, '/cluster/replication')).toEqual([
      expect.objectContaining({ id: '120-0', target: 'pve2', source: 'pve3' }),
    ]);
    for (const node of ['pve2', 'pve3'])
      expect(Object.keys(await volumesOf(c, node, 'local-zfs', 120))).toEqual([
        'local-zfs:vm-120-disk-0',
      ]);
  });
});

describe('destroying HA-managed and replicated guests', () => {
  it('refuses an HA-managed VM without purge, before looking at its run state', async () => {
    const c = client();
    expectError(
      await c.api('DELETE', '/nodes/pve2/qemu/120'),
      500,
      'unable to remove VM 120 - used in HA resources and purge parameter not set.',
    );
    // protection is checked first, the run state last
    expectError(
      await c.api('DELETE', '/nodes/pve1/qemu/102'),
      500,
      "can't remove VM 102 - protection mode enabled",
    );
    expectError(
      await c.api('DELETE', '/nodes/pve2/qemu/120', { query: { purge: 1 } }),
      500,
      'VM 120 is running - destroy failed',
    );
    expect(await getData(c, '/cluster/ha/resources/vm:120')).toMatchObject({ sid: 'vm:120' });
  });

  it('names the replication job of a guest that has one (check_for_existing_jobs)', () => {
    const state = seedCluster(Date.now());
    expect(existingJobError(state, 120)).toBe(
      "There is a replication job '120-0' for guest '120' - Please remove that first.",
    );
    expect(existingJobError(state, 100)).toBeUndefined();
  });

  it('with purge=1 drops the HA resource and the replication jobs with the VM', async () => {
    const c = client();
    await runTask(c, 'POST', '/nodes/pve2/qemu/120/status/stop');
    const end = await runTask(c, 'DELETE', '/nodes/pve2/qemu/120', { purge: 1 });
    expect([end.status.type, end.exitstatus]).toEqual(['qmdestroy', 'OK']);
    expect(end.log).toEqual(
      expect.arrayContaining([
        'purging VM 120 from related configurations..',
        'NOTE: removed VM 120 from HA resource configuration.',
      ]),
    );
    expect(await getData(c, '/cluster/ha/resources')).toEqual([VM_102]);
    expectError(
      await c.api('GET', '/cluster/ha/resources/vm:120'),
      500,
      "no such resource 'vm:120'",
    );
    expect(await getData(c, '/cluster/replication')).toEqual([]);
    expect(await volumesOf(c, 'pve2', 'local-zfs', 120)).toEqual({});
    // removing the job leaves the replica on the target, as remove_vmid_jobs does
    expect(Object.keys(await volumesOf(c, 'pve3', 'local-zfs', 120))).toEqual([
      'local-zfs:vm-120-disk-0',
    ]);
    const resources = await getData<Record<string, unknown>[]>(c, '/cluster/resources', {
      type: 'vm',
    });
    expect(resources.map((r) => r.vmid)).not.toContain(120);
  });

  it('adds a container created with ha-managed=1 to HA, and refuses its destroy without purge', async () => {
    const c = client();
    const created = await runTask(c, 'POST', '/nodes/pve1/lxc', {
      vmid: 130,
      ostemplate: 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst',
      storage: 'local-lvm',
      'ha-managed': 1,
    });
    expect(created.exitstatus).toBe('OK');
    expect(created.log).toContain('Add as HA resource');
    expect(await getData(c, '/cluster/ha/resources/130')).toEqual({
      sid: 'ct:130',
      type: 'ct',
      state: 'stopped',
      digest: DIGEST,
    });
    expect((await getData(c, '/nodes/pve1/lxc/130/status/current')).ha).toEqual({
      managed: 1,
      state: 'stopped',
    });
    expectError(
      await c.api('DELETE', '/nodes/pve1/lxc/130'),
      500,
      'unable to remove CT 130 - used in HA resources and purge parameter not set.',
    );
    const end = await runTask(c, 'DELETE', '/nodes/pve1/lxc/130', { purge: 1 });
    expect(end.log).toContain('NOTE: removed CT 130 from HA resource configuration.');
    expect(await getData(c, '/cluster/ha/resources', { type: 'ct' })).toEqual([]);
  });
});
