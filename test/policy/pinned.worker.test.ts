// A policy that pins agent clones to one pool and one bridge, keeps NICs changed by agents on
// that bridge (args.config.*.bridge), and opens the raw API for two read paths only (args.method,
// args.path, args.params.*): each rule is enforced before anything is written.

import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, text } from '../support/worker/mcp';
import { simSession } from '../support/worker/session';
import { sim } from '../support/worker/sim';
import { usePolicy } from '../support/worker/policy';

const PINNED_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_clone_vm: {
      require: [
        {
          path: 'args.pool',
          op: 'eq',
          value: 'lab',
          reason: 'Agent clones go into the lab pool: pass pool: "lab".',
        },
        {
          path: 'args.net0.bridge',
          op: 'eq',
          value: 'vmbr1',
          reason:
            'Agent clones get their NIC on the lab bridge: pass net0, e.g. "virtio,bridge=vmbr1".',
        },
      ],
    },
    pve_set_vm_config: {
      deny_if: [
        {
          path: 'args.config.*.bridge',
          op: 'neq',
          value: 'vmbr1',
          reason: 'NICs set by agents stay on the lab bridge vmbr1.',
        },
      ],
    },
    pve_api_request: {
      require: [
        {
          path: 'args.method',
          op: 'eq',
          value: 'GET',
          reason: 'The raw API is open for reading only.',
        },
        {
          path: 'args.path',
          op: 'regex',
          value: '^/nodes/[a-z0-9-]+/qemu/[0-9]+/(rrddata|status/current)$',
          reason: 'The raw API is open for VM status and RRD data only.',
        },
      ],
      deny_if: [{ path: 'args.params.timeframe', op: 'eq', value: 'decade' }],
    },
  },
};

usePolicy(PINNED_POLICY);

describe('a policy pinning clones to the lab pool and bridge', () => {
  const session = simSession();
  const client = (): Client => session.client;

  async function denied(
    tool: string,
    args: Record<string, unknown>,
    rule: string,
    reason: RegExp,
  ): Promise<void> {
    await sim.clearLog();
    const r = await call(client(), tool, { ...args, confirm: true });
    expect(text(r)).toMatch(/^\[POLICY DENIED\] /);
    expect(text(r)).toMatch(reason);
    expect(r.structuredContent!.policy).toMatchObject({ decision: 'deny', rule });
    expect(await sim.writes()).toEqual([]);
  }

  const CLONE = { node: 'pve1', source_vmid: 9000, name: 'lab-01' };
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['without a pool', {}, '/tools/pve_clone_vm/require/0', /pass pool: "lab"/],
    [
      'into another pool',
      { pool: 'prod', net0: 'virtio,bridge=vmbr1' },
      '/tools/pve_clone_vm/require/0',
      /lab pool/,
    ],
    [
      "keeping the template's NIC (no net0)",
      { pool: 'lab' },
      '/tools/pve_clone_vm/require/1',
      /pass net0, e\.g\. "virtio,bridge=vmbr1"/,
    ],
    [
      'on another bridge',
      { pool: 'lab', net0: 'virtio,bridge=vmbr0' },
      '/tools/pve_clone_vm/require/1',
      /lab bridge/,
    ],
  ])('refuses a clone %s', (_label, args, rule, reason) =>
    denied('pve_clone_vm', { ...CLONE, ...args }, rule, reason),
  );

  it('judges the NIC a clone keeps from its template when the call gives no net0', async () => {
    // The template's NIC is on vmbr0: kept, it is outside the lab bridge.
    await denied(
      'pve_clone_vm',
      { ...CLONE, pool: 'lab' },
      '/tools/pve_clone_vm/require/1',
      /lab bridge/,
    );
    // Moved to vmbr1 by its owner, the NIC it keeps meets the rule: no net0 needed.
    const original = String((await sim.guest(9000)).config.net0);
    expect(original).toMatch(/bridge=vmbr0/);
    const moved = await sim.api('PUT', '/nodes/pve1/qemu/9000/config', {
      net0: original.replace('bridge=vmbr0', 'bridge=vmbr1'),
    });
    expect(moved.status).toBe(200);
    try {
      const r = await call(client(), 'pve_clone_vm', { ...CLONE, pool: 'lab' });
      expect(r.isError, text(r)).toBeFalsy();
      expect(r.structuredContent!.mode).toBe('preview');
    } finally {
      await sim.api('PUT', '/nodes/pve1/qemu/9000/config', { net0: original });
    }
  });

  it('lets a clone into the lab pool on the lab bridge through, and it lands there', async () => {
    const r = await call(client(), 'pve_clone_vm', {
      ...CLONE,
      pool: 'lab',
      net0: 'virtio,bridge=vmbr1',
      confirm: true,
      wait: true,
    });
    expect(r.isError, text(r)).toBeFalsy();
    const vm = await sim.guest(r.structuredContent!.vmid as number);
    expect(vm.pool).toBe('lab');
    expect(vm.config.net0).toMatch(/,bridge=vmbr1$/);
  });

  it('keeps NICs set through the config on the lab bridge, and lets other changes through', async () => {
    await denied(
      'pve_set_vm_config',
      { node: 'pve1', vmid: 100, config: { net1: 'virtio,bridge=vmbr0' } },
      '/tools/pve_set_vm_config/deny_if/0',
      /stay on the lab bridge/,
    );
    for (const config of [{ net1: 'virtio,bridge=vmbr1' }, { memory: 2048 }]) {
      const r = await call(client(), 'pve_set_vm_config', { node: 'pve1', vmid: 100, config });
      expect(r.structuredContent!.mode, text(r)).toBe('preview');
    }
  });

  it('refuses a NIC without a bridge (user-mode networking, outside the lab bridge), alone or beside a pinned one', async () => {
    for (const config of [
      { net1: 'virtio' },
      { net0: 'virtio,bridge=vmbr1', net1: 'e1000,firewall=1' },
    ]) {
      await denied(
        'pve_set_vm_config',
        { node: 'pve1', vmid: 100, config },
        '/tools/pve_set_vm_config/deny_if/0',
        /stay on the lab bridge/,
      );
    }
  });

  it('opens the raw API for the two read paths only', async () => {
    const status = await call(client(), 'pve_api_request', {
      method: 'GET',
      path: '/nodes/pve1/qemu/100/status/current',
    });
    expect(status.isError, text(status)).toBeFalsy();
    expect(status.structuredContent!.data).toMatchObject({ status: 'running' });
    // Allowed by the policy: it reaches Proxmox (which the simulator does not implement).
    const rrd = await call(client(), 'pve_api_request', {
      method: 'GET',
      path: '/nodes/pve1/qemu/100/rrddata',
      params: { timeframe: 'hour' },
    });
    expect(rrd.structuredContent!.error).toMatchObject({
      kind: expect.stringMatching(/^upstream\./),
    });
    await denied(
      'pve_api_request',
      { method: 'POST', path: '/nodes/pve1/qemu/100/status/current' },
      '/tools/pve_api_request/require/0',
      /reading only/,
    );
    await denied(
      'pve_api_request',
      { method: 'GET', path: '/access/users' },
      '/tools/pve_api_request/require/1',
      /status and RRD data only/,
    );
    await denied(
      'pve_api_request',
      { method: 'GET', path: '/nodes/pve1/qemu/100/status/current/x' },
      '/tools/pve_api_request/require/1',
      /only/,
    );
    await denied(
      'pve_api_request',
      { method: 'GET', path: '/nodes/pve1/qemu/100/rrddata', params: { timeframe: 'decade' } },
      '/tools/pve_api_request/deny_if/0',
      /args\.params\.timeframe eq "decade"/,
    );
    // Parameters that look like a parsed property string from the outside are still parameters.
    await denied(
      'pve_api_request',
      {
        method: 'GET',
        path: '/nodes/pve1/qemu/100/rrddata',
        params: { text: 'a', fields: 'b', timeframe: 'decade' },
      },
      '/tools/pve_api_request/deny_if/0',
      /timeframe/,
    );
  });
});
