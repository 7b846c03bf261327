// A hung Durable Object never hangs a call: each store call has a deadline, and a call that
// cannot be checked is refused with a clear message. A slot reserved after the deadline is
// given back when it finally lands.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PolicyCounters } from '../../src/counters/policy-counters';
import type { AppEnv } from '../../src/env';
import { STORE_DEADLINE_MS } from '../../src/stores/deadline';
import { call, connect, ORIGIN, text, workerFetch } from '../worker/helpers/mcp';
import { sim } from '../worker/helpers/sim';

const appEnv = env as unknown as AppEnv;
const HANG_MS = STORE_DEADLINE_MS + 1_500;

/**
 * Holds every event of a Durable Object back for `ms`, as an overloaded or stuck object would.
 * Resolves once the hold has begun; `over` settles when the object answers again.
 */
async function hang(stub: DurableObjectStub, ms: number): Promise<{ over: Promise<unknown> }> {
  const over = runInDurableObject(stub, (_instance, state) => {
    void state.blockConcurrencyWhile(() => new Promise((r) => setTimeout(r, ms)));
  });
  await new Promise((r) => setTimeout(r, 100));
  return { over };
}

describe('store deadlines', () => {
  let client: Client;
  beforeAll(async () => {
    await sim.reset();
    client = await connect('http');
  });
  afterAll(() => client.close());

  it('a hung counter object times out into a denial, and its late slot is given back', async () => {
    const counters = appEnv.POLICY_COUNTERS.get(appEnv.POLICY_COUNTERS.idFromName('grant:local'));
    expect((await call(client, 'pve_list_vms', { limit: 1 })).isError).toBeFalsy(); // the object exists
    const before = await runInDurableObject(counters as DurableObjectStub<PolicyCounters>, (i) => i.list(Date.now()));
    await sim.clearLog();
    const held = await hang(counters, HANG_MS);
    const started = Date.now();
    const result = await call(client, 'pve_list_vms', { limit: 1 });
    const took = Date.now() - started;
    expect(result.isError).toBe(true);
    expect(result.structuredContent!.policy).toMatchObject({ decision: 'deny', rule: '(counter store unavailable)' });
    expect(text(result)).toMatch(/could not be checked, so the call is denied/);
    expect(took).toBeGreaterThanOrEqual(STORE_DEADLINE_MS - 100);
    expect(took).toBeLessThan(HANG_MS - 100);
    expect(await sim.requests()).toEqual([]);
    // Once the object answers again, the reservation it finally made is released.
    await held.over;
    await new Promise((r) => setTimeout(r, 200));
    const after = await runInDurableObject(counters as DurableObjectStub<PolicyCounters>, (i) => i.list(Date.now()));
    expect(after.map((r) => r.count)).toEqual(before.map((r) => r.count));
  });

  it('a hung session object makes a request answer 503, not hang', async () => {
    const other = await connect('http');
    const session = (other.transport as StreamableHTTPClientTransport).sessionId!;
    // A fresh isolate-level cache would remember the owner: ask as another session id's owner.
    const stub = appEnv.MCP_OBJECT.get(appEnv.MCP_OBJECT.idFromName(`streamable-http:${session}-x`));
    const held = await hang(stub, HANG_MS);
    const started = Date.now();
    const res = await workerFetch(`${ORIGIN}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': `${session}-x` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(HANG_MS);
    await held.over;
    await other.close();
  });
});
