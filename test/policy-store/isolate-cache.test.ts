// The per-isolate policy cache (src/policy-store/isolate-cache.ts) on a clock the test moves, over a
// store port that answers what the test says: what is served without asking, what is checked in
// the background, when a call must wait, that an older answer never replaces a newer one, that a
// change made here (through any source on the isolate) is asked for at once, and that a store that
// cannot answer fails closed.
// (The real store and isolates: test/policy-store/lifecycle.signed-in.test.ts.)

import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock';
import { sha256Hex } from '../../src/encoding';
import { FRESH_MS, MAX_AGE_MS, storedPolicySource } from '../../src/policy-store/isolate-cache';
import type { PolicyHead } from '../../src/policy-store/types';
import { TOOL_CATALOG } from '../../src/tools';

const DEPLOYED = JSON.stringify({ version: '1', default: 'deny', tools: { pve_list_vms: {} } });
const OPEN = JSON.stringify({ version: '1', default: 'allow' });

class Clock0 implements Clock {
  at = 1_000_000;
  now(): number {
    return this.at;
  }
}

interface Asked {
  deployed: { sha256: string; text?: string };
  known: number | null;
}

/** A store whose answers the test sets: `generation` and the active text; `fail` makes it throw. */
function fakeStore() {
  const state = { generation: 1, text: DEPLOYED, fail: false, seenDeploy: false };
  const asked: Asked[] = [];
  const head = async (deployed: Asked['deployed'], known: number | null): Promise<PolicyHead> => {
    asked.push({ deployed, known });
    if (state.fail) throw new Error('policy store.head did not answer within 3000 ms');
    if (!state.seenDeploy) {
      if (deployed.text === undefined)
        return { generation: 0, active: null, shadow: null, needsDeployText: true };
      state.seenDeploy = true;
    }
    const withText = known !== state.generation;
    return {
      generation: state.generation,
      active: {
        version: state.generation,
        sha256: await sha256Hex(state.text),
        ...(withText ? { text: state.text } : {}),
      },
      shadow: null,
    };
  };
  return { state, asked, store: { head } };
}

function setup() {
  const clock = new Clock0();
  const fake = fakeStore();
  const background: Promise<unknown>[] = [];
  const source = storedPolicySource({
    store: () => fake.store,
    deployed: { origin: 'POLICY', text: DEPLOYED },
    clock,
    catalog: TOOL_CATALOG,
  });
  const active = () => source.active((work) => void background.push(work));
  const settle = () => Promise.all(background.splice(0));
  return { clock, fake, source, active, settle };
}

describe('the per-isolate policy cache', () => {
  it('sends the deployed policy as its hash, and its text only when the store asks', async () => {
    const t = setup();
    expect(await t.active()).toMatchObject({ ok: true, version: 1 });
    expect(t.fake.asked.map((a) => a.deployed.text !== undefined)).toEqual([false, true]);
    expect(t.fake.asked[0]!.deployed.sha256).toBe(await sha256Hex(DEPLOYED));
    t.clock.at += MAX_AGE_MS;
    await t.active();
    expect(t.fake.asked.at(-1)).toEqual({
      deployed: { sha256: await sha256Hex(DEPLOYED) },
      known: 1,
    });
  });

  it('serves a version confirmed less than FRESH_MS ago without asking', async () => {
    const t = setup();
    await t.active();
    const asked = t.fake.asked.length;
    t.clock.at += FRESH_MS - 1;
    await t.active();
    expect(t.fake.asked.length).toBe(asked);
  });

  it('between FRESH_MS and MAX_AGE_MS serves what it holds and checks in the background', async () => {
    const t = setup();
    await t.active();
    t.fake.state.generation = 2;
    t.fake.state.text = OPEN;
    t.clock.at += FRESH_MS;
    expect((await t.active()).version).toBe(1); // served at once
    await t.settle();
    expect((await t.active()).version).toBe(2); // the background check brought it
  });

  it('past MAX_AGE_MS waits for the store, and refuses (fail closed) when it cannot answer', async () => {
    const t = setup();
    await t.active();
    t.clock.at += MAX_AGE_MS;
    t.fake.state.fail = true;
    const answer = await t.active();
    expect(answer).toMatchObject({ ok: false, unavailable: true });
    // A cold isolate too.
    const cold = setup();
    cold.fake.state.fail = true;
    expect(await cold.active()).toMatchObject({ ok: false, unavailable: true, version: null });
    // And it recovers as soon as the store answers.
    t.fake.state.fail = false;
    expect(await t.active()).toMatchObject({ ok: true, version: 1 });
  });

  it('never goes back to an older generation when answers arrive out of order', async () => {
    const clock = new Clock0();
    const answers: ((head: PolicyHead) => void)[] = [];
    const source = storedPolicySource({
      store: () => ({
        head: (deployed) =>
          deployed.text === undefined
            ? Promise.resolve({
                generation: 0,
                active: null,
                shadow: null,
                needsDeployText: true as const,
              })
            : new Promise<PolicyHead>((resolve) => answers.push(resolve)),
      }),
      deployed: { origin: 'POLICY', text: DEPLOYED },
      clock,
      catalog: TOOL_CATALOG,
    });
    const head = async (generation: number, text: string): Promise<PolicyHead> => ({
      generation,
      active: { version: generation, sha256: await sha256Hex(text), text },
      shadow: null,
    });
    const slow = source.active();
    const fast = source.active();
    await new Promise((r) => setTimeout(r, 10));
    answers[1]!(await head(3, OPEN)); // the later check answers first, with the newer state
    expect((await fast).version).toBe(3);
    answers[0]!(await head(2, DEPLOYED)); // the earlier one answers late, with an older state
    await slow;
    expect((await source.active()).version).toBe(3);
  });

  it('after a change made here, asks the store before its next call, and an older answer confirms nothing', async () => {
    const t = setup();
    await t.active();
    t.clock.at += FRESH_MS; // a background check starts, asked before the change
    await t.active();
    t.clock.at += 1;
    t.source.forget();
    await t.settle(); // it answers the old generation after the change
    const asked = t.fake.asked.length;
    t.fake.state.generation = 2;
    t.fake.state.text = OPEN;
    expect((await t.active()).version).toBe(2);
    expect(t.fake.asked.length).toBe(asked + 1);
  });

  it('after a change made through another source on this isolate, asks the store too', async () => {
    const here = setup();
    const there = setup();
    await here.active();
    await there.active();
    here.fake.state.generation = 2;
    here.fake.state.text = OPEN;
    const asked = here.fake.asked.length;
    there.source.forget(); // the change went through the other one (another object's Runtime)
    expect((await here.active()).version).toBe(2); // within FRESH_MS, yet asked
    expect(here.fake.asked.length).toBe(asked + 1);
  });
});
