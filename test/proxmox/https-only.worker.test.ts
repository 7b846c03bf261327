// PVE_BASE_URL with plain http to a host that is not this machine: the API token would cross the
// network unencrypted, so nothing is sent; /health says why and every call fails with the reason.
// The Worker as deployed with that setting (workerFetchWith), its clients speaking 2026-07-28
// (a 2025 session's object reads the project's own settings; both eras hand every call to the
// same call path, src/calls/run-call.ts).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ORIGIN, workerFetchWith } from '../support/worker/mcp';
import { connect2026 } from '../support/worker/mcp-2026';

const WHY =
  'PVE_BASE_URL must use https: (plain http is only allowed for a loopback address or through the PVE service binding), got http://pve.example.com:8006: the API token would cross the network unencrypted';

const insecure = workerFetchWith({ PVE_BASE_URL: 'http://pve.example.com:8006/api2/json' });

describe('PVE_BASE_URL over plain http to another host', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect2026({ fetch: insecure });
  });
  afterAll(() => client.close());

  it('/health is not ok and says why', async () => {
    const res = await insecure(`${ORIGIN}/health`);
    const body = (await res.json()) as {
      ok: boolean;
      proxmox: { configured: boolean };
      problems: { check: string; message: string }[];
    };
    expect(body.ok).toBe(false);
    expect(body.proxmox.configured).toBe(false);
    expect(body.problems.map((p) => p.message).join('\n')).toContain(WHY);
  });

  it('every call fails with that reason, before any request', async () => {
    const result = await client.callTool({ name: 'pve_list_vms', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { kind: 'config' } });
    expect(result.content).toEqual([
      { type: 'text', text: `This server's Proxmox connection is not configured: ${WHY}.` },
    ]);
  });
});
