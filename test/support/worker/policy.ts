// A test's policy as a fixture: put in force through the policy API (/admin/api/policy, the path
// the /admin console and `npm run policy -- push` take), so the Worker and its Durable Objects
// read it from the policy store as they read any activated version, and put back afterwards.
// Without sign-in (AUTH_MODE=none) the one local person is an editor and a change carries our
// own Origin, as the console's page does; with sign-in, `as` gives the headers of a policy
// editor's token (test/support/worker/oauth.ts asEditor).
//
// A project's files run one after another on each of its Workers, sharing its storage
// (vitest.config.ts), so a policy set in a file's beforeAll and put back in its afterAll governs
// that file only. Set it before the file's first tool call. The Worker and its Durable Objects
// share one isolate here, and a change made through it makes every policy source on it ask the
// store again at its next call (src/policy-store/isolate-cache.ts); across isolates (in production) a
// change takes up to the source's MAX_AGE_MS.

import { afterAll, beforeAll } from 'vitest';
import { ORIGIN, workerFetch } from './mcp';

const API = `${ORIGIN}/admin/api/policy`;

interface Overview {
  active: { version: number } | null;
  versions: unknown[];
}

/** Who changes the policy: the headers their requests carry (none without sign-in). */
export type Credentials = () => Promise<Record<string, string>>;

const LOCAL: Credentials = async () => ({});

async function overview(as: Credentials): Promise<Overview> {
  const res = await workerFetch(API, { headers: await as() });
  if (res.status !== 200) throw new Error(`GET ${API}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Overview;
}

async function activeVersion(as: Credentials): Promise<number | null> {
  return (await overview(as)).active?.version ?? null;
}

async function change(as: Credentials, path: string, body: object): Promise<Response> {
  return workerFetch(`${API}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: ORIGIN, ...(await as()) },
    body: JSON.stringify({ comment: 'test fixture', ...body }),
  });
}

/**
 * Puts `policy` in force (a new version, activated): answers its version and a function that
 * puts the version active before back. The store is read first, so that it has taken in the deployed policy
 * (POLICY, or policy.json) before this version: one it met only afterwards would win as a
 * redeploy.
 */
export async function setPolicy(
  policy: object,
  as: Credentials = LOCAL,
): Promise<{ version: number; restore: () => Promise<void> }> {
  const before = await activeVersion(as);
  // Written against the version in force, as the console writes a change (0: none was).
  const res = await change(as, '', { policy, activate: true, base: before ?? 0 });
  if (res.status !== 201) throw new Error(`the test policy was refused: ${await res.text()}`);
  const { version } = (await res.json()) as { version: number };
  const restore = async (): Promise<void> => {
    if (before === null || (await activeVersion(as)) !== version) return;
    const back = await change(as, `/${before}/activate`, { base: version });
    if (back.status !== 200) throw new Error(`the policy was not put back: ${await back.text()}`);
  };
  return { version, restore };
}

/**
 * Runs `policy` in shadow beside the version in force (a new version): answers its version and
 * a function that stops the shadow.
 */
export async function shadowPolicy(
  policy: object,
  as: Credentials = LOCAL,
): Promise<{ version: number; stop: () => Promise<void> }> {
  const base = (await activeVersion(as)) ?? 0;
  const res = await change(as, '', { policy, shadow: true, base });
  if (res.status !== 201) throw new Error(`the shadow policy was refused: ${await res.text()}`);
  const { version } = (await res.json()) as { version: number };
  const stop = async (): Promise<void> => {
    const done = await change(as, '/shadow/stop', { base });
    if (done.status !== 200) throw new Error(`the shadow was not stopped: ${await done.text()}`);
  };
  return { version, stop };
}

/**
 * `policy` in force for the rest of this file (from beforeAll), put back after it. Its `version`
 * (the store's number for it) is known once the file's tests run.
 */
export function usePolicy(policy: object, as: Credentials = LOCAL): { readonly version: number } {
  let set: { version: number; restore: () => Promise<void> } | undefined;
  beforeAll(async () => {
    set = await setPolicy(policy, as);
  });
  afterAll(async () => {
    await set?.restore();
  });
  return {
    get version() {
      if (!set) throw new Error('the test policy is set in beforeAll: read its version in a test');
      return set.version;
    },
  };
}

/** Every tool allowed with no rule: the worker tests' policy, where the tools themselves are under test. */
export const OPEN_POLICY = { version: '1', default: 'allow' } as const;
