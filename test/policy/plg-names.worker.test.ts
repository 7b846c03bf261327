// A policy written for plgonzalezrx8/proxmox-mcp's tool names and inputs (the server ours grew
// from; PolicyLayer policies are keyed by its names) loads unchanged and governs ours: start
// allowed, stop denied, shutdown denied for two vmids, snapshots limited to 2 an hour per person
// and named agent_*, everything unlisted denied and left out of tools/list.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { usePolicy } from '../support/worker/policy';

const PLG_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_list_vms: {},
    pve_get_vm_status: {},
    pve_start_vm: {},
    pve_stop_vm: { action: 'deny', reason: 'Agents never hard-stop guests here.' },
    pve_shutdown_vm: {
      deny_if: [
        {
          path: 'args.vmid',
          op: 'in',
          value: [100, 101],
          reason: 'Production guests are shut down by people.',
        },
      ],
    },
    pve_create_snapshot: {
      limits: [{ counter: 'snapshots', window: 'hour', max: 2, scope: 'user' }],
      require: [{ path: 'args.snapname', op: 'regex', value: '^agent_' }],
    },
  },
};

usePolicy(PLG_POLICY);

describe('a policy written for plgonzalezrx8/proxmox-mcp', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    await sim.config({ taskDurationMs: 100 });
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('lists exactly the tools it names (a denied one too, so its reason can be given)', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'pve_create_snapshot',
      'pve_get_vm_status',
      'pve_list_vms',
      'pve_shutdown_vm',
      'pve_start_vm',
      'pve_stop_vm',
    ]);
  });

  it('allows a start', async () => {
    await sim.clearLog();
    const r = await call(client, 'pve_start_vm', { node: 'pve2', vmid: 104, confirm: true });
    expect(r.isError, text(r)).toBeFalsy();
    expect((await sim.writes()).map((w) => w.path)).toEqual([
      '/api2/json/nodes/pve2/qemu/104/status/start',
    ]);
  });

  it('denies a stop, saying why, and a tool it does not name', async () => {
    await sim.clearLog();
    const stop = await call(client, 'pve_stop_vm', { node: 'pve1', vmid: 100, confirm: true });
    expect(text(stop)).toBe('[POLICY DENIED] Agents never hard-stop guests here.');
    const reboot = await call(client, 'pve_reboot_vm', { node: 'pve1', vmid: 100, confirm: true });
    expect(reboot.structuredContent!.policy).toMatchObject({ rule: '(default deny)' });
    expect(await sim.requests()).toEqual([]);
  });

  it('denies a shutdown of the guests its rule names, by vmid, and allows others', async () => {
    await sim.clearLog();
    const prod = await call(client, 'pve_shutdown_vm', { node: 'pve1', vmid: 100, confirm: true });
    expect(prod.structuredContent!.policy).toMatchObject({
      rule: '/tools/pve_shutdown_vm/deny_if/0',
      reason: 'Production guests are shut down by people.',
    });
    expect(await sim.requests()).toEqual([]);
    const other = await call(client, 'pve_shutdown_vm', { node: 'pve2', vmid: 103, confirm: true });
    expect(other.isError, text(other)).toBeFalsy();
  });

  it('limits snapshots to 2 an hour per person, and requires its naming rule', async () => {
    const badName = await call(client, 'pve_create_snapshot', {
      node: 'pve2',
      vmid: 104,
      snapname: 'mine',
      confirm: true,
    });
    expect(badName.structuredContent!.policy).toMatchObject({
      rule: '/tools/pve_create_snapshot/require/0',
    });
    for (const snapname of ['agent_a', 'agent_b']) {
      const r = await call(client, 'pve_create_snapshot', {
        node: 'pve2',
        vmid: 104,
        snapname,
        confirm: true,
        wait: true,
      });
      expect(r.isError, text(r)).toBeFalsy();
    }
    const third = await call(client, 'pve_create_snapshot', {
      node: 'pve2',
      vmid: 104,
      snapname: 'agent_c',
      confirm: true,
    });
    expect(third.structuredContent!.policy).toMatchObject({
      decision: 'limited',
      rule: '/tools/pve_create_snapshot/limits/0',
      retry_after_s: expect.any(Number),
    });
    // A preview takes no slot.
    const preview = await call(client, 'pve_create_snapshot', {
      node: 'pve2',
      vmid: 104,
      snapname: 'agent_c',
    });
    expect(preview.structuredContent!.mode).toBe('preview');
  });
});
