// Under `default: deny`, a tool the policy does not list is absent from tools/list and denied.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, text, TRANSPORTS } from '../support/worker/mcp';
import { sim } from '../support/worker/sim';
import { usePolicy } from '../support/worker/policy';

const CREATE_ONLY_POLICY = { version: '1', default: 'deny', tools: { pve_create_qemu_vm: {} } };

usePolicy(CREATE_ONLY_POLICY);

describe.each(TRANSPORTS)('default deny, only pve_create_qemu_vm listed (%s)', (kind) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(kind);
  });
  afterAll(() => client.close());

  it('leaves pve_list_vms out of tools/list', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['pve_create_qemu_vm']);
  });

  it('denies pve_list_vms without calling Proxmox', async () => {
    await sim.clearLog();
    const result = await call(client, 'pve_list_vms', {});
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('[POLICY DENIED] Tool "pve_list_vms" is not allowed by policy.');
    expect(result.structuredContent).toEqual({
      policy: {
        decision: 'deny',
        rule: '(default deny)',
        reason: 'Tool "pve_list_vms" is not allowed by policy.',
      },
    });
    expect(await sim.requests()).toEqual([]);
  });

  it('allows the listed tool', async () => {
    const result = await call(client, 'pve_create_qemu_vm', { node: 'pve1' });
    expect(result.isError).toBeFalsy();
  });
});
