// GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces over HTTP: the guest agent's
// interface list, PVE's three refusals in order, and the control API's agent switch.
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKENS } from '../../simulator/server.ts';
import { expectError, getData, useSimulator } from '../support/sim-harness.ts';

const client = useSimulator('agent');
const audit = { token: SIMULATOR_TOKENS.audit };

describe('QEMU guest agent: network-get-interfaces', () => {
  const path = (node: string, vmid: number) =>
    `/nodes/${node}/qemu/${vmid}/agent/network-get-interfaces`;

  it("lists the guest's interfaces with the MACs of its config", async () => {
    const c = client();
    const result = (await getData<{ result: Record<string, unknown>[] }>(c, path('pve1', 100)))
      .result;
    const mac = /=([0-9A-F:]{17})/.exec((await c.guest(100)).config.net0 ?? '')?.[1]?.toLowerCase();
    expect(result.map((nic) => nic.name)).toEqual(['lo', 'eth0']);
    expect(result[1]).toMatchObject({
      'hardware-address': mac,
      'ip-addresses': expect.arrayContaining([
        {
          'ip-address-type': 'ipv4',
          'ip-address': expect.stringMatching(/^10\.10\.0\./),
          prefix: 24,
        },
      ]),
    });
  });

  it("answers 500 in PVE's order: no agent configured, VM not running, agent not running", async () => {
    const c = client();
    expectError(await c.api('GET', path('pve2', 103)), 500, 'No QEMU guest agent configured');
    expectError(await c.api('GET', path('pve2', 104)), 500, 'VM 104 is not running');
    expectError(await c.api('GET', path('pve3', 105)), 500, 'QEMU guest agent is not running');
    await c.setAgent(105, true);
    expect((await c.api('GET', path('pve3', 105))).status).toBe(200);
    await c.setQmpStatus(105, 'paused');
    expectError(await c.api('GET', path('pve3', 105)), 500, 'QEMU guest agent is not running');
    await c.setAgent(100, false);
    expectError(await c.api('GET', path('pve1', 100)), 500, 'QEMU guest agent is not running');
  });

  it('needs a guest agent privilege', async () => {
    expectError(
      await client().api('GET', path('pve1', 100), audit),
      403,
      'Permission check failed (/vms/100, VM.GuestAgent.Audit|VM.GuestAgent.Unrestricted)',
    );
  });
});

describe('container interfaces', () => {
  const path = (node: string, vmid: number) => `/nodes/${node}/lxc/${vmid}/interfaces`;

  it("lists a running container's interfaces, both PVE 8's fields and PVE 9's ip-addresses", async () => {
    const c = client();
    const nics = await getData<Record<string, unknown>[]>(c, path('pve1', 110));
    const mac = /hwaddr=([0-9A-F:]{17})/i
      .exec((await c.guest(110)).config.net0 ?? '')?.[1]
      ?.toLowerCase();
    expect(nics.map((n) => n.name)).toEqual(['lo', 'eth0']);
    expect(nics[1]).toEqual({
      name: 'eth0',
      hwaddr: mac,
      'hardware-address': mac,
      inet: '10.10.0.53/24',
      'ip-addresses': [{ 'ip-address': '10.10.0.53', 'ip-address-type': 'inet', prefix: 24 }],
    });
  });

  it('answers null for a stopped container (it has no network namespace)', async () => {
    expect(await getData<unknown>(client(), path('pve3', 301))).toBeNull();
  });
});
