// One server, two clusters (this project's PVE_CLUSTERS: lab, the default, and prod, two clusters
// of the simulator seeded alike, so VM 100 on pve1 is on both). A call goes where its `cluster`
// says and nowhere else, and the policy reads which: what each cluster was sent is read from its
// own request log.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditRecords } from '../support/worker/audit';
import { call, text } from '../support/worker/mcp';
import { asEditor, connectSignedIn } from '../support/worker/oauth';
import { usePolicy } from '../support/worker/policy';
import { simCluster } from '../support/worker/sim';

const lab = simCluster('lab');
const prod = simCluster('prod');
const STOP_100 = 'POST /api2/json/nodes/pve1/qemu/100/status/stop';
const SHUTDOWN_100 = 'POST /api2/json/nodes/pve1/qemu/100/status/shutdown';

usePolicy(
  {
    version: '1',
    default: 'allow',
    tools: {
      pve_shutdown_vm: {
        deny_if: [
          {
            path: 'args.cluster',
            op: 'eq',
            value: 'prod',
            reason: 'Agents do not shut guests down on prod.',
          },
        ],
      },
    },
  },
  asEditor(),
);

describe('two clusters behind one endpoint', () => {
  let client: Client;
  beforeAll(async () => {
    ({ client } = await connectSignedIn('http', { user: 'alice@example.com', groups: 'ops' }));
  });
  afterAll(() => client.close());
  beforeEach(async () => {
    for (const cluster of [lab, prod]) {
      await cluster.reset();
      await cluster.clearLog();
    }
  });

  it('lists cluster on every tool, one of the configured names, the first the default', async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(30);
    for (const tool of tools) {
      expect(tool.inputSchema.properties?.cluster, tool.name).toEqual({
        type: 'string',
        enum: ['lab', 'prod'],
        description: 'Cluster: lab, prod (default lab).',
      });
      expect(tool.inputSchema.required ?? []).not.toContain('cluster');
    }
  });

  it('reads the cluster it names, and the default without one', async () => {
    const onProd = await call(client, 'pve_get_vm_status', {
      node: 'pve1',
      vmid: 100,
      cluster: 'prod',
    });
    expect(onProd.isError).toBeFalsy();
    expect(await prod.requestLines()).toEqual([
      'GET /api2/json/nodes/pve1/qemu/100/status/current',
    ]);
    expect(await lab.requestLines()).toEqual([]);
    await prod.clearLog();
    await call(client, 'pve_get_vm_status', { node: 'pve1', vmid: 100 });
    expect(await lab.requestLines()).toEqual(['GET /api2/json/nodes/pve1/qemu/100/status/current']);
    expect(await prod.requestLines()).toEqual([]);
  });

  it('stops VM 100 only where cluster says: the other cluster is sent nothing', async () => {
    const stopped = await call(client, 'pve_stop_vm', {
      node: 'pve1',
      vmid: 100,
      cluster: 'prod',
      confirm: true,
    });
    expect(stopped.isError, text(stopped)).toBeFalsy();
    expect(await prod.writeLines()).toEqual([STOP_100]);
    expect(await lab.requestLines()).toEqual([]);
    expect((await lab.guest(100)).status).toBe('running');
  });

  it('judges args.cluster: a rule refuses prod and lets the same call on lab through', async () => {
    const shutdown = { node: 'pve1', vmid: 100, confirm: true };
    const refused = await call(client, 'pve_shutdown_vm', { ...shutdown, cluster: 'prod' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '/tools/pve_shutdown_vm/deny_if/0',
    });
    expect(text(refused)).toContain('Agents do not shut guests down on prod.');
    expect(await prod.requestLines()).toEqual([]);
    expect(await lab.requestLines()).toEqual([]);

    // Without cluster, the default (lab): args.cluster is filled in.
    const done = await call(client, 'pve_shutdown_vm', shutdown);
    expect(done.isError, text(done)).toBeFalsy();
    expect(await lab.writeLines()).toEqual([SHUTDOWN_100]);
    expect(await prod.requestLines()).toEqual([]);

    // The audit record keeps which cluster each call was for.
    const records = await auditRecords(
      (r) => r.tool === 'pve_shutdown_vm' && r.user_email === 'alice@example.com',
      2,
    );
    expect(records.map((r) => [r.args.cluster, r.decision])).toEqual([
      ['prod', 'deny'],
      ['lab', 'allow'],
    ]);
  });

  it('refuses a cluster it does not reach, naming the ones it does, and sends nothing', async () => {
    const result = await call(client, 'pve_stop_vm', {
      node: 'pve1',
      vmid: 100,
      cluster: 'staging',
      confirm: true,
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/cluster/);
    expect(text(result)).toMatch(/lab.*prod/);
    expect([...(await lab.requestLines()), ...(await prod.requestLines())]).toEqual([]);
  });
});
