// PUT /nodes/{node}/lxc/{vmid}/config over HTTP: hotplug and pending changes on a running
// container, new mount points and NICs, and pve-container's refusals.
import { describe, expect, it } from 'vitest';
import { expectError, getData, useSimulator } from '../support/sim-harness.ts';

const client = useSimulator('ctconfig');
const lxc = (node: string, vmid: number) => `/nodes/${node}/lxc/${vmid}/config`;

describe('PUT /nodes/{node}/lxc/{vmid}/config', () => {
  it('hotplugs hostname and memory on a running container, keeps the rest pending', async () => {
    const c = client();
    await c.api('PUT', lxc('pve1', 110), {
      form: { hostname: 'dns02', memory: 1024, ostype: 'ubuntu' },
    });
    const ct = await c.guest(110);
    expect(ct.config).toMatchObject({ hostname: 'dns02', memory: '1024', ostype: 'debian' });
    expect(ct.pending.values).toEqual({ ostype: 'ubuntu' });
    expect(await getData(c, lxc('pve1', 110))).toMatchObject({
      ostype: 'ubuntu',
      memory: 1024,
      unprivileged: 1,
    });
  });

  it('adds a mount point on a new volume and a NIC with a MAC', async () => {
    const c = client();
    await c.api('PUT', lxc('pve3', 301), {
      form: { mp0: 'local-lvm:2,mp=/srv', net1: 'name=eth1,bridge=vmbr0,ip=dhcp' },
    });
    const ct = await c.guest(301);
    expect(ct.config.mp0).toBe('local-lvm:vm-301-disk-1,mp=/srv,size=2G');
    expect(ct.config.net1).toMatch(
      /^name=eth1,bridge=vmbr0,hwaddr=BC:24:11:[0-9A-F:]{8},ip=dhcp,type=veth$/,
    );
  });

  it.each<[string, Record<string, string | number>, number, string | Record<string, string>]>([
    [
      'a stale digest',
      { hostname: 'x', digest: '0'.repeat(40) },
      500,
      'detected modified configuration - file changed by other user? Try again.',
    ],
    ['deleting memory', { delete: 'memory' }, 500, "unable to delete required option 'memory'"],
    [
      'changing unprivileged',
      { unprivileged: 0 },
      500,
      "unable to modify read-only option: 'unprivileged'",
    ],
    [
      'a mount point on a storage without rootdir',
      { mp0: 'local:2,mp=/srv' },
      500,
      "storage 'local' does not allow content type 'rootdir' (Container)",
    ],
    ['an unknown option to delete', { delete: 'bogus' }, 400, { delete: "unknown option 'bogus'" }],
  ])('refuses %s', async (_name, form, status, message) => {
    expectError(await client().api('PUT', lxc('pve3', 301), { form }), status, message);
  });

  it('refuses a locked container', async () => {
    const c = client();
    await c.setLock(301, 'backup');
    expectError(
      await c.api('PUT', lxc('pve3', 301), { form: { hostname: 'x' } }),
      500,
      'CT is locked (backup)',
    );
  });
});
