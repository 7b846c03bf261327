// Policy corners that used to fail open, end to end over MCP (AUTH_MODE=none). The policy has
// no `default`, requires args.pool = "lab", and bounds args.vmid to 1000–5000.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { usePolicy } from '../support/worker/policy';
import { FAIL_CLOSED_POLICY } from '../support/policies/fail-closed';

usePolicy(FAIL_CLOSED_POLICY);

const JSON_TYPE = 'application/json;charset=UTF-8';

describe('a policy that fails closed', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('denies by default when the policy says no default: an unlisted tool is neither listed nor callable', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'pve_create_qemu_vm',
      'pve_get_task_status',
      'pve_list_vms',
      'pve_stop_vm',
    ]);
    await sim.clearLog();
    const start = await call(client, 'pve_start_vm', { node: 'pve1', vmid: 100, confirm: true });
    expect(start.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '(default deny)',
    });
    // Refused before anything reached Proxmox, not even the preview's read.
    expect(await sim.requests()).toEqual([]);
  });

  it('a require on an argument the call leaves out denies it, naming the rule, and writes nothing', async () => {
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: 2000,
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_create_qemu_vm/require/0',
    });
    expect(text(result)).toBe(
      '[POLICY DENIED] Denied by policy: args.pool is required (it must satisfy eq "lab") and this call has none.',
    );
    expect(await sim.writes()).toEqual([]);
  });

  it('a deny_if on the vmid sees the vmid the server would pick: without a vmid, 106 is denied, nothing written', async () => {
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      pool: 'lab',
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent!.policy).toMatchObject({
      rule: '/tools/pve_create_qemu_vm/deny_if/0',
      reason: 'Agent VMs take ids from 1000 up.',
    });
    expect(await sim.requestLines()).toEqual(['GET /api2/json/cluster/nextid']);
  });

  it('a preview shows and is checked against the same resolved vmid', async () => {
    await sim.fault({
      method: 'GET',
      path: '^/cluster/nextid$',
      status: 200,
      contentType: JSON_TYPE,
      body: { data: '1500' },
    });
    const preview = await call(client, 'pve_create_qemu_vm', { node: 'pve1', pool: 'lab' });
    expect(preview.isError, text(preview)).toBeFalsy();
    expect(preview.structuredContent).toMatchObject({
      mode: 'preview',
      vmid: 1500,
      vmid_source: 'next_free',
    });
  });

  it('creates when every rule holds', async () => {
    await sim.clearLog();
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      vmid: 2000,
      pool: 'lab',
      confirm: true,
    });
    expect(result.isError, text(result)).toBeFalsy();
    expect((await sim.writes()).map((w) => w.params!.vmid)).toEqual(['2000']);
  });

  it('after a collision, takes another vmid only when the policy allows that one too', async () => {
    // 4000 exists; nextid offers it once (allowed by the policy), the POST is refused, and the
    // next free id is then 106, which the policy refuses: no second POST goes out.
    expect((await sim.api('POST', '/nodes/pve2/qemu', { vmid: '4000' })).status).toBe(200);
    await sim.clearLog();
    await sim.fault({
      method: 'GET',
      path: '^/cluster/nextid$',
      status: 200,
      contentType: JSON_TYPE,
      body: { data: '4000' },
    });
    const result = await call(client, 'pve_create_qemu_vm', {
      node: 'pve1',
      pool: 'lab',
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('[POLICY DENIED] Agent VMs take ids from 1000 up.');
    expect(result.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_create_qemu_vm/deny_if/0',
    });
    const writes = await sim.writes();
    expect(writes.map((w) => [w.params!.vmid, w.status])).toEqual([['4000', 500]]);
  });
});
