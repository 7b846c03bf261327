// A file whose claims are about a fresh deployment, or about the whole of a store (every audit
// record, every rate-limit counter, the policy's first version). A project's files share one
// Worker and its storage, one file after another (isolate: false in vitest.config.ts): before the
// file's first test this empties every Durable Object (cloudflare:test's reset), as a new
// deployment starts, but for the server's keys, which are put back: the isolate keeps the keys it
// has read (the argument HMAC's, the request-state codec's), as a deployment keeps its keys. The
// policy version every source on the isolate holds is then forgotten, as after a change made here,
// so the first call asks the emptied store, which takes in the deployed policy as version 1.

import { listDurableObjectIds, reset, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, expect } from 'vitest';
import { runtimeOf } from '../../../src/compose/runtime';
import type { AppEnv } from '../../../src/env';
import { SERVER_KEYS_OBJECT } from '../../../src/keys/names';
import type { ServerKeys } from '../../../src/keys/server-keys';

type KeyRow = { name: string; value: string };

export function freshDeployment(): void {
  beforeAll(async () => {
    const appEnv = env as unknown as AppEnv;
    const keys = () =>
      appEnv.SERVER_KEYS.get(
        appEnv.SERVER_KEYS.idFromName(SERVER_KEYS_OBJECT),
      ) as unknown as DurableObjectStub<ServerKeys>;
    const held = await runInDurableObject(keys(), (_i: ServerKeys, state) =>
      state.storage.sql.exec<KeyRow>('SELECT name, value FROM server_keys').toArray(),
    );
    // Every object made so far is loaded first: after reset() alone, a per-person counter from a
    // file run seconds before was seen to keep its count (an object evicted while idle, as it
    // seems, which reset() does not reach).
    // Every Durable Object binding the Worker has, so that one added later is not missed.
    const namespaces = Object.values(env).filter(
      (binding): binding is DurableObjectNamespace =>
        typeof binding === 'object' &&
        binding !== null &&
        Object.getPrototypeOf(binding)?.constructor?.name === 'DurableObjectNamespace',
    );
    expect(namespaces.length).toBeGreaterThanOrEqual(6);
    for (const ns of namespaces)
      for (const id of await listDurableObjectIds(ns))
        await runInDurableObject(ns.get(id), () => {});
    await reset();
    await runInDurableObject(keys(), (_i: ServerKeys, state) => {
      for (const row of held)
        state.storage.sql.exec(
          'INSERT INTO server_keys (name, value) VALUES (?, ?)',
          row.name,
          row.value,
        );
    });
    runtimeOf(appEnv).policy.forget();
  });
}
