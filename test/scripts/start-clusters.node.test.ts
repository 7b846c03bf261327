// `npm start` with PVE_CLUSTERS: two clusters it simulates (lab, the full seed; prod, a smaller
// site with other nodes and guests and a VM 100 of its own) beside a real one it only reaches
// (dc2: a simulator of this test's, with a wrong token secret). The banner names each; one MCP
// client lists the guests of every cluster, each marked with its own, and stops VM 100 only where
// `cluster` says; `npm run doctor` checks each cluster and names dc2 and its secret variable.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createSimClient } from '../../simulator/control/sim-client.ts';
import { SIMULATOR_TOKENS, startSimulator, type RunningSimulator } from '../../simulator/server.ts';
import { devAccessToken } from '../support/oauth-node.ts';
import { startNpm, type NpmStart } from '../support/npm-start.ts';
import { runDoctor } from '../support/run-doctor.ts';

const WRONG_SECRET = 'not-the-dc2-token-secret';

let dc2: RunningSimulator;
let server: NpmStart;
let simulatorUrl: string;

beforeAll(async () => {
  // A 401 at once: the probe's deadline is 3 s, and pveproxy's own delay is about that.
  dc2 = await startSimulator({ port: 0, authFailDelayMs: 0 });
  server = await startNpm({
    PVE_CLUSTERS: JSON.stringify([
      { name: 'lab' },
      { name: 'prod' },
      {
        name: 'dc2',
        base_url: `${dc2.url}/api2/json`,
        token_id: SIMULATOR_TOKENS.admin.id,
        token_secret_var: 'DC2_TOKEN_SECRET',
      },
    ]),
    DC2_TOKEN_SECRET: WRONG_SECRET,
    // Every call allowed: the shipped policy puts a hard stop behind a person's approval.
    POLICY: JSON.stringify({ version: '1', default: 'allow' }),
  });
  simulatorUrl = /lab +(http:\/\/127\.0\.0\.1:\d+)\/t\/lab\/api2\/json/.exec(server.output())![1]!;
}, 70_000);

afterAll(async () => {
  await server?.stop();
  await dc2?.close();
});

async function connect(): Promise<Client> {
  const token = await devAccessToken(server.url, 'ada@example.com');
  const client = new Client({ name: 'start-clusters-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe('npm start with PVE_CLUSTERS', () => {
  it('names each cluster, where it is and what it simulates', () => {
    expect(server.output()).toMatch(
      /Proxmox clusters \(PVE_CLUSTERS, the first the default\):\n {2}lab {3}http:\/\/127\.0\.0\.1:\d+\/t\/lab\/api2\/json \(simulated: 3 nodes, 13 guests\)\n {2}prod {2}http:\/\/127\.0\.0\.1:\d+\/t\/prod\/api2\/json \(simulated: 2 nodes, 5 guests\)\n {2}dc2 {3}http:\/\/127\.0\.0\.1:\d+\/api2\/json\n/,
    );
    expect(server.output()).not.toContain(WRONG_SECRET);
  });

  it('lists the guests of both simulated clusters, each with its own, and names the one that refused', async () => {
    const client = await connect();
    const list = await client.callTool({ name: 'pve_list_vms', arguments: { limit: 1000 } });
    await client.close();
    const result = list.structuredContent as {
      guests: { cluster: string; vmid: number; name: string; node: string }[];
      unreachable?: { cluster: string }[];
    };
    const seen = result.guests.map((vm) => `${vm.cluster}/${vm.vmid} ${vm.name} on ${vm.node}`);
    expect(seen).toHaveLength(18);
    expect(seen).toContain('lab/100 web01 on pve1');
    expect(seen).toContain('prod/100 gw01 on hv1');
    expect(seen.slice(13)).toEqual([
      'prod/100 gw01 on hv1',
      'prod/400 app01 on hv1',
      'prod/401 app02 on hv2',
      'prod/402 db02 on hv2',
      'prod/410 cache01 on hv2',
    ]);
    expect(result.unreachable?.map((u) => u.cluster)).toEqual(['dc2']);
  });

  it('stops VM 100 only on the cluster named', async () => {
    const lab = createSimClient(simulatorUrl, 'lab');
    const prod = createSimClient(simulatorUrl, 'prod');
    await lab.clearRequests();
    await prod.clearRequests();
    const client = await connect();
    const stop = await client.callTool({
      name: 'pve_stop_vm',
      arguments: { node: 'hv1', vmid: 100, cluster: 'prod', confirm: true },
    });
    await client.close();
    expect(stop.isError, JSON.stringify(stop.content)).toBeFalsy();
    const stops = (await prod.requests()).filter((r) => r.method === 'POST');
    expect(stops.map((r) => r.path)).toEqual(['/api2/json/nodes/hv1/qemu/100/status/stop']);
    expect((await lab.requests()).filter((r) => r.method === 'POST')).toEqual([]);
    expect((await lab.guest(100)).status).toBe('running');
  });

  it('is checked cluster by cluster by npm run doctor, which names dc2 and its secret variable', async () => {
    const { status, output, line } = await runDoctor(server.url);
    expect(status, output).toBe(1);
    expect(line('proxmox lab')).toMatch(
      /^PASS .*reachable \(GET \/version in \d+ ms, PVE 9\.1\.3\)/,
    );
    expect(line('proxmox prod')).toMatch(
      /^PASS .*reachable \(GET \/version in \d+ ms, PVE 9\.1\.3\)/,
    );
    expect(line('proxmox dc2')).toMatch(/^FAIL {2}proxmox dc2\s+Cluster dc2: .*401/);
    expect(line('proxmox dc2')).toContain('DC2_TOKEN_SECRET');
    expect(output).not.toContain(WRONG_SECRET);
    expect(output).not.toContain(SIMULATOR_TOKENS.admin.secret);
  }, 60_000);
});
