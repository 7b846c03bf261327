// POST /nodes/{node}/lxc over HTTP: the vzcreate task, the config a container gets, PVE's
// defaults, and the refusals (in the call or, for a template missing on the node, in the task).
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, runTask, useSimulator, volumesOf } from '../support/sim-harness.ts';

const client = useSimulator('ctcreate');
const TEMPLATE = 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst';

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
    expect(await volumesOf(c, 'pve3', 'local-lvm', 108)).toEqual({});
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
