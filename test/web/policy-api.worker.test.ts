// The policy API with AUTH_MODE=none (the worker project): the one local person may read and
// change it, but a change must carry this server's own Origin, as its own page's would: the door
// lets allowed CORS origins' pages through, and they must not rewrite the policy.

import { describe, expect, it } from 'vitest';
import { ORIGIN, workerFetch } from '../support/worker/mcp';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';

usePolicy(OPEN_POLICY);

const API = `${ORIGIN}/admin/api/policy`;
const DRAFT = { version: '1', default: 'allow' };

function post(headers: Record<string, string>): Promise<Response> {
  return workerFetch(API, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ policy: DRAFT, comment: 'stored, not activated' }),
  });
}

describe('the policy API without sign-in', () => {
  it('refuses a change without our Origin, takes one with it, and stores it inactive', async () => {
    const before = (await (await workerFetch(API)).json()) as {
      active: { version: number };
      versions: unknown[];
    };
    const bare = await post({});
    expect(bare.status).toBe(403);
    expect(await bare.json()).toMatchObject({ error: 'cross_origin' });
    const ok = await post({ origin: ORIGIN });
    expect(ok.status).toBe(201);
    const after = (await (await workerFetch(API)).json()) as {
      active: { version: number };
      versions: unknown[];
    };
    expect(after.versions).toHaveLength(before.versions.length + 1);
    expect(after.active.version).toBe(before.active.version);
  });
});
