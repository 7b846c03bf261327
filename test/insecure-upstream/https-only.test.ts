// PVE_BASE_URL with plain http to a host that is not this machine: the API token would cross the
// network unencrypted, so nothing is sent; /health says why and every call fails with the reason.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connect, ORIGIN, text, workerFetch } from '../worker/helpers/mcp';

const WHY =
  'PVE_BASE_URL must use https: (plain http is only allowed for a loopback address or through the PVE service binding), got http://pve.example.com:8006: the API token would cross the network unencrypted';

describe('PVE_BASE_URL over plain http to another host', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('/health is not ok and says why', async () => {
    const res = await workerFetch(`${ORIGIN}/health`);
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
    const result = await call(client, 'pve_list_vms', {});
    expect(result.isError).toBe(true);
    expect(result.structuredContent!.error).toMatchObject({ kind: 'config' });
    expect(text(result)).toBe(`This server's Proxmox connection is not configured: ${WHY}.`);
  });
});
