// The counter store, through the real PolicyCounters Durable Object: reservation up to the max,
// release, windows, expiry, exactness under concurrent callers; and the gate failing closed.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/core/identity';
import { passGate } from '../../src/calls/policy-gate';
import { reserveLimits, type CounterBackend } from '../../src/counters/reserve';
import { WindowCounters, type ReserveItem } from '../../src/counters/window-counters';
import { evaluatePolicy, type AppliedLimit } from '../../src/policy/evaluate';
import { loadPolicy } from '../../src/policy/load';
import type { ActivePolicy } from '../../src/policy/source';
import { checkPolicyText } from '../../src/policy/text';
import { TOOL_CATALOG } from '../../src/tools';
import type { AppEnv } from '../../src/env';
import { SCOPES } from '../../src/core/scopes';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const ns = (env as unknown as AppEnv).POLICY_COUNTERS;
const T0 = Date.parse('2026-11-30T12:00:10Z');
const who: Identity = {
  userId: 'u',
  groups: [],
  clientId: 'c',
  grantId: 'g',
  scopes: SCOPES,
};

function item(key: string, max: number, now = T0): ReserveItem {
  const start = Math.floor(now / 60_000) * 60_000;
  return {
    key,
    windowStart: start,
    windowEnd: start + 60_000,
    max,
    rule: '/t',
    counter: key,
    window: 'minute',
    scope: 'grant',
  };
}

describe('PolicyCounters (one Durable Object per scope key)', () => {
  it('reserves up to the max, then refuses with the retry time, and releases', async () => {
    const stub = ns.get(ns.idFromName(`test:${crypto.randomUUID()}`));
    for (let i = 0; i < 3; i++) expect(await stub.reserve([item('a', 3)], T0)).toBeNull();
    const over = await stub.reserve([item('a', 3)], T0);
    expect(over).toMatchObject({ kind: 'limited', retry_after_s: 50 });
    await stub.release([item('a', 3)]);
    expect(await stub.reserve([item('a', 3)], T0)).toBeNull();
    expect((await stub.list(T0)).map((r) => [r.key, r.count])).toEqual([['a', 3]]);
  });

  it("takes all of a call's slots or none", async () => {
    const stub = ns.get(ns.idFromName(`test:${crypto.randomUUID()}`));
    expect(await stub.reserve([item('x', 5), item('y', 1)], T0)).toBeNull();
    expect(await stub.reserve([item('x', 5), item('y', 1)], T0)).toMatchObject({
      kind: 'limited',
      counter: 'y',
    });
    expect((await stub.list(T0)).map((r) => [r.key, r.count])).toEqual([
      ['x', 1],
      ['y', 1],
    ]);
  });

  it('starts a new window at the minute boundary and forgets ended ones', async () => {
    const stub = ns.get(ns.idFromName(`test:${crypto.randomUUID()}`));
    expect(await stub.reserve([item('w', 1)], T0)).toBeNull();
    expect(await stub.reserve([item('w', 1)], T0)).not.toBeNull();
    const next = T0 + 50_000; // 12:01:00
    expect(await stub.reserve([item('w', 1, next)], next)).toBeNull();
    expect((await stub.list(next)).map((r) => r.windowStart)).toEqual([
      Date.parse('2026-11-30T12:01:00Z'),
    ]);
  });

  it('is exact under 50 concurrent callers', async () => {
    const stub = ns.get(ns.idFromName(`test:${crypto.randomUUID()}`));
    const results = await Promise.all(
      Array.from({ length: 50 }, () => stub.reserve([item('c', 7)], T0)),
    );
    expect(results.filter((r) => r === null)).toHaveLength(7);
  });

  it('never releases below zero', async () => {
    const stub = ns.get(ns.idFromName(`test:${crypto.randomUUID()}`));
    await stub.reserve([item('z', 2)], T0);
    await stub.release([item('z', 2)]);
    await stub.release([item('z', 2)]);
    expect((await stub.list(T0))[0]?.count).toBe(0);
  });

  it('stores every count: an object started again over the same storage counts on from there', async () => {
    const stub = ns.get(ns.idFromName(`test:${crypto.randomUUID()}`));
    for (let i = 0; i < 3; i++) await stub.reserve([item('r', 4), item('s', 9)], T0);
    await stub.release([item('s', 9)]);
    await stub.reserve([item('old', 9, T0 - 120_000)], T0 - 120_000);
    // What the object would load after an eviction or a restart, used inside the object.
    const seen = await runInDurableObject(stub, async (_instance, state) => {
      const again = await WindowCounters.load(state.storage);
      return {
        loaded: again.list(T0).map((r) => [r.key, r.count]),
        fourth: again.reserve([item('r', 4)], T0),
        fifth: again.reserve([item('r', 4)], T0),
      };
    });
    expect(seen.loaded).toEqual([
      ['r', 3],
      ['s', 2],
    ]);
    expect(seen.fourth).toBeNull();
    expect(seen.fifth).toMatchObject({ kind: 'limited', counter: 'r' });
    // The ended window was dropped from storage on the next reservation, not only from memory.
    const stored = await runInDurableObject(stub, (_instance, state) =>
      state.storage.list({ prefix: 'counter:' }),
    );
    expect([...stored.keys()].every((k) => !k.endsWith(':old'))).toBe(true);
  });
});

describe('reserveLimits across scopes', () => {
  const limits = (maxUser: number): AppliedLimit[] => [
    { ...item('g/1', 10), scope: 'grant', rule: '/a' },
    { ...item('u/1', maxUser), scope: 'user', rule: '/b' },
  ];
  const backend = (name: string): CounterBackend => ({
    target: (scope) => ns.get(ns.idFromName(`${name}:${scope}`)),
  });

  it('gives back the slots already taken when a later scope is full', async () => {
    const name = crypto.randomUUID();
    const first = await reserveLimits(limits(1), who, backend(name), T0);
    expect(first.ok).toBe(true);
    const second = await reserveLimits(limits(1), who, backend(name), T0);
    expect(second.ok).toBe(false);
    const grant = await ns.get(ns.idFromName(`${name}:grant`)).list(T0);
    expect(grant[0]?.count).toBe(1);
  });
});

describe('the policy gate fails closed', () => {
  const checked = checkPolicyText(
    JSON.stringify({
      version: '1',
      tools: {
        pve_list_vms: { limits: [{ counter: 'c', window: 'minute', max: 5, scope: 'global' }] },
      },
    }),
    TOOL_CATALOG,
  );
  if (!checked.ok) throw new Error('test policy invalid');
  const policy: ActivePolicy = {
    ok: true,
    origin: 'POLICY',
    version: 1,
    sha256: null,
    policy: checked.policy,
    text: '{}',
  };

  it('denies when the counter store throws', async () => {
    const broken: CounterBackend = {
      target: () => ({
        reserve: () => Promise.reject(new Error('storage unavailable')),
        release: () => undefined,
      }),
    };
    const gate = await passGate(policy, broken, {
      tool: 'pve_list_vms',
      args: {},
      identity: who,
      dryRun: false,
      now: T0,
    });
    expect(gate).toEqual({
      ok: false,
      refusal: {
        kind: 'deny',
        rule: '(counter store unavailable)',
        reason: expect.stringMatching(/could not be checked/),
      },
    });
  });

  it('takes no slot for a dry run', async () => {
    let reserved = 0;
    const counting: CounterBackend = {
      target: () => ({
        reserve: () => {
          reserved++;
          return null;
        },
        release: () => undefined,
      }),
    };
    const gate = await passGate(policy, counting, {
      tool: 'pve_list_vms',
      args: {},
      identity: who,
      dryRun: true,
      now: T0,
    });
    expect(gate.ok).toBe(true);
    expect(reserved).toBe(0);
  });

  it('evaluates without readings to the limits the store must reserve', () => {
    const loaded = loadPolicy(
      {
        version: '1',
        tools: {
          pve_list_vms: { limits: [{ counter: 'c', window: 'minute', max: 5, scope: 'global' }] },
        },
      },
      TOOL_CATALOG,
    );
    const d = loaded.ok
      ? evaluatePolicy(loaded.policy, { tool: 'pve_list_vms', args: {} }, who, null, T0)
      : null;
    expect(d).toMatchObject({
      kind: 'allow',
      limits: [{ key: 'pve_list_vms/c', scope: 'global', max: 5 }],
    });
  });
});
