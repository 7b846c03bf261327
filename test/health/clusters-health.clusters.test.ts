// /health where the server reaches two clusters (this project's PVE_CLUSTERS: lab and prod):
// each is probed and named, and the one that does not answer is the one named in the problems,
// the other still reported reachable.

import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forgetProbes } from '../../src/health/proxmox-probe';
import { getHealth } from '../support/worker/health';
import { ORIGIN } from '../support/worker/mcp';
import { codeFlowTokens, registerClient } from '../support/worker/oauth';
import { simCluster } from '../support/worker/sim';

const lab = simCluster('lab');
const prod = simCluster('prod');

describe('GET /health with two clusters', () => {
  let token: string;
  beforeAll(async () => {
    const clientId = await registerClient('health of clusters');
    const login = { user: 'admin@example.com', groups: 'ops' };
    token = (await codeFlowTokens(clientId, login, ['policy:read'])).access_token;
  });
  beforeEach(async () => {
    forgetProbes();
    for (const cluster of [lab, prod]) {
      await cluster.reset();
      await cluster.clearFaults();
      await cluster.clearLog();
    }
  });

  it('probes each cluster with its own GET /version and names each', async () => {
    const { body } = await getHealth(ORIGIN, token);
    expect(body.view).toBe('operator');
    expect(body.proxmox).toMatchObject({
      configured: true,
      clusters: [
        { name: 'lab', via: 'url', reachable: true, status: 'ok' },
        { name: 'prod', via: 'url', reachable: true, status: 'ok' },
      ],
    });
    expect(body.problems ?? []).not.toContainEqual(expect.objectContaining({ check: 'proxmox' }));
    expect(await lab.requestLines()).toEqual(['GET /api2/json/version']);
    expect(await prod.requestLines()).toEqual(['GET /api2/json/version']);
  });

  it('names the cluster that does not answer, and keeps the other reachable', async () => {
    await prod.fault({ method: 'GET', path: '^/version$', status: 401, times: 1 });
    const { body } = await getHealth(ORIGIN, token);
    expect(body.ok).toBe(false);
    expect(body.proxmox).toMatchObject({
      clusters: [
        { name: 'lab', reachable: true, status: 'ok' },
        { name: 'prod', reachable: false, status: 'auth_failed' },
      ],
    });
    const proxmox = (body.problems ?? []).filter((p) => p.check === 'proxmox');
    expect(proxmox).toHaveLength(1);
    // Proxmox's refusal, in words naming prod's settings, not the single-cluster ones.
    expect(proxmox[0]!.message).toMatch(
      /^Cluster prod: Proxmox rejected the API token \(401 [^)]*\)\. Check cluster prod's token_id and PROD_TOKEN_SECRET, and/,
    );
    expect(proxmox[0]!.message).not.toMatch(/PVE_TOKEN/);
    // What to check is that cluster's own: its token id and the variable its secret is in.
    expect(proxmox[0]!.fix).toMatch(
      /^Check cluster prod's token_id and the secret \(`wrangler secret put PROD_TOKEN_SECRET`\)/,
    );

    // Anyone else (the fault spent, prod answers again): booleans only, still per cluster.
    forgetProbes();
    const anonymous = await getHealth(ORIGIN);
    expect(anonymous.body.proxmox).toEqual({
      configured: true,
      clusters: [
        { name: 'lab', via: 'url', reachable: true },
        { name: 'prod', via: 'url', reachable: true },
      ],
    });
  });
});
