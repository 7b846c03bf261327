// A broken POLICY never fails open: every call is denied saying why, and /health reports it.
// The Worker as deployed with that POLICY (workerFetchWith), its clients speaking 2026-07-28;
// the policy store of this file never takes it in, so no version is active. (A 2025 session's
// object reads the project's own settings; both eras hand every call to src/calls/run-call.ts.)

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { ORIGIN, text, workerFetchWith } from '../support/worker/mcp';
import { connect2026 } from '../support/worker/mcp-2026';
import { sim } from '../support/worker/sim';
import { auditRecords } from '../support/worker/audit';
import { freshDeployment } from '../support/worker/fresh';

/** A POLICY that fails its checks: no such default, no such window, a negative max. */
const BROKEN_POLICY = {
  version: '1',
  default: 'maybe',
  tools: {
    pve_list_vms: { limits: [{ counter: 'x', window: 'week', max: -1, scope: 'grant' }] },
  },
};

const workerFetch = workerFetchWith({ POLICY: JSON.stringify(BROKEN_POLICY) });

freshDeployment();

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<
    Parameters<typeof text>[0] & {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
    }
  >;

describe('an invalid POLICY', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect2026({ fetch: workerFetch });
  });
  afterAll(() => client.close());

  it('is reported by /health with every error and its pointer', async () => {
    const res = await workerFetch(`${ORIGIN}/health`);
    const body = (await res.json()) as {
      ok: boolean;
      policy: { valid: boolean; errors: { pointer: string }[] };
    };
    expect(body.ok).toBe(false);
    expect(body.policy.valid).toBe(false);
    expect(body.policy.errors.map((e) => e.pointer)).toEqual(
      expect.arrayContaining([
        '/default',
        '/tools/pve_list_vms/limits/0/window',
        '/tools/pve_list_vms/limits/0/max',
      ]),
    );
  });

  it.each([
    ['pve_list_vms', {}],
    ['pve_create_qemu_vm', { node: 'pve1', vmid: 7000, confirm: true }],
  ])('denies %s, saying the policy is invalid, without calling Proxmox', async (tool, args) => {
    await sim.clearLog();
    const result = await call(client, tool, args);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^\[POLICY DENIED\] The server's policy \(POLICY\) is invalid/);
    expect(result.structuredContent!.policy).toMatchObject({
      decision: 'deny',
      rule: '(invalid policy)',
    });
    expect(await sim.requests()).toEqual([]);
  });
});

describe('the audit trail while the policy is invalid', () => {
  // Its `sensitive` lists cannot be trusted, so every value is treated as one.
  it('keeps no argument value at all: the list of sensitive arguments is unknown', async () => {
    const client = await connect2026({ fetch: workerFetch });
    const logs: string[] = [];
    const spy = vi
      .spyOn(console, 'log')
      .mockImplementation((...a: unknown[]) => void logs.push(a.map(String).join(' ')));
    try {
      await call(client, 'pve_create_qemu_vm', {
        node: 'pve1',
        vmid: 7001,
        description: 'my-pin-4321',
        confirm: true,
      });
    } finally {
      spy.mockRestore();
      await client.close();
    }
    const { request_id: requestId } = JSON.parse(
      logs.find((l) => l.includes('"msg":"tool_call"'))!,
    ) as { request_id: string };
    const [record] = await auditRecords((r) => r.request_id === requestId);
    expect(record!.arg_keys).toEqual([
      'node',
      'vmid',
      'description',
      'wait',
      'timeout_s',
      'confirm',
    ]);
    expect(Object.values(record!.args)).toEqual(Array(6).fill('[redacted]'));
    expect(JSON.stringify(record)).not.toContain('my-pin-4321');
  });
});

describe('/admin while the policy is invalid', () => {
  it('says so at the top and shows the policy opened on its errors; values stay redacted', async () => {
    const html = await (await workerFetch(`${ORIGIN}/admin`)).text();
    expect(html).toContain('<strong>The policy is invalid: every tool call is denied.</strong>');
    expect(html).toContain('<details class="policy" id="policy-text" open>');
    expect(html).toMatch(
      /<summary><strong>POLICY variable<\/strong> · <strong class="bad">invalid — every tool call is denied<\/strong> · /,
    );
    expect(html).toContain('<ul class="errors"><li><code>');
    expect(html).toContain('/tools/pve_list_vms/limits/0/window');
    // The call recorded above: every value redacted in the record, and so on the page.
    expect(html).toContain('<code>description=[redacted]</code>');
    expect(html).not.toContain('my-pin-4321');
  });
});

// Last in this file: it puts a valid version in force.
describe('the policy API while no version is active', () => {
  const API = `${ORIGIN}/admin/api/policy`;
  const post = (path: string, body: unknown) =>
    workerFetch(`${API}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN },
      body: JSON.stringify(body),
    });
  const valid = { version: '1', default: 'deny', tools: { pve_list_vms: {} } };

  it('refuses an activation that names no base, saying none is active; base 0 puts one in force', async () => {
    const overview = (await (await workerFetch(API)).json()) as { active: unknown };
    expect(overview.active).toBeNull();
    const bare = await post('', { policy: valid, comment: 'no base', activate: true });
    expect(bare.status).toBe(409);
    expect(await bare.text()).toMatch(
      /no version is active \(the deployed policy was refused\) and the change names no base: nothing was changed; send base 0/,
    );
    const stale = await post('', {
      policy: valid,
      comment: 'an old page',
      activate: true,
      base: 3,
    });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toMatch(
      /no version is active .*, not version 3: nothing was changed/,
    );
    const none = (await (await workerFetch(API)).json()) as {
      active: unknown;
      versions: unknown[];
    };
    expect(none).toMatchObject({ active: null, versions: [] });
    const added = await post('', {
      policy: valid,
      comment: 'seen that none is',
      activate: true,
      base: 0,
    });
    expect(added.status).toBe(201);
    const after = (await (await workerFetch(API)).json()) as { active: { version: number } };
    expect(after.active.version).toBe(((await added.json()) as { version: number }).version);
  });
});
