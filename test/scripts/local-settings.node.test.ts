// What npm start makes of PVE_CLUSTERS before anything starts (scripts/local-settings.ts): the
// clusters it simulates and the real ones, whose secret variables a .dev.vars may hold (and which
// are then secrets: warned of when others can read the file); what it cannot use stops the start,
// naming the entry or the setting and never a value.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { localSettings } from '../../scripts/local-settings.ts';
import { IS_WINDOWS } from '../../scripts/processes.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-local-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** localSettings with no .dev.vars in `dir` unless one is written, and `env` as npm start's. */
function settings(env: Record<string, string>, devVars?: string, mode = 0o600) {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.vars`);
  if (devVars !== undefined) {
    writeFileSync(file, devVars);
    chmodSync(file, mode);
  }
  return localSettings(devVars === undefined ? env : { ...env, DEV_VARS: file }, dir);
}

const real = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  base_url: `https://${name}.example.com:8006/api2/json`,
  token_id: 'mcp@pve!mcp',
  token_secret_var: `${name.toUpperCase()}_SECRET`,
  ...extra,
});

describe('npm start with PVE_IDENTITIES', () => {
  it("reads the people's token secrets like any other secret, from .dev.vars or the environment", () => {
    const identities = JSON.stringify([
      { match: 'alice@example.com', token_id: 'alice@pve!mcp', token_secret_var: 'ALICE_SECRET' },
      { fallback: true, token_id: 'ro@pve!mcp', token_secret_var: 'RO_SECRET' },
    ]);
    const s = settings({ PVE_IDENTITIES: identities, RO_SECRET: 'r' }, 'ALICE_SECRET=a\n', 0o644);
    expect(s.secretVars).toEqual(['ALICE_SECRET', 'RO_SECRET']);
    expect(s.vars).toMatchObject({ PVE_IDENTITIES: identities, ALICE_SECRET: 'a', RO_SECRET: 'r' });
    if (!IS_WINDOWS)
      expect(s.warnings).toEqual([expect.stringMatching(/holds secrets \(ALICE_SECRET\)/)]);
    expect(() => settings({ PVE_IDENTITIES: identities })).toThrow(
      'PVE_IDENTITIES names ALICE_SECRET for a secret, and neither the environment nor .dev.vars sets it',
    );
    // Nor echoed, nor written where wrangler's command line would show it.
    expect(() =>
      settings({
        PVE_IDENTITIES: JSON.stringify({
          lab: [{ match: 'a', token_id: 'a@pve!b', token_secret: 'x' }],
        }),
      }),
    ).toThrow('PVE_IDENTITIES.lab[0].token_secret: a secret is never written');
  });
});

describe('npm start with PVE_CLUSTERS', () => {
  it('simulates the clusters given no address and reads the real ones\u2019 secrets from .dev.vars', () => {
    const clusters = JSON.stringify([
      { name: 'lab' },
      real('prod', { access_secret_var: 'PROD_ACCESS' }),
    ]);
    const s = settings(
      { PVE_CLUSTERS: clusters },
      'PROD_SECRET=3f2a\nPROD_ACCESS=acc\nPOLICY_EDITORS=eve@example.com\n',
      0o644,
    );
    expect(s.clusters).toEqual({
      entries: JSON.parse(clusters),
      simulated: ['lab'],
      secretVars: ['PROD_SECRET', 'PROD_ACCESS'],
    });
    expect(s.pve).toBeUndefined();
    expect(s.vars).toMatchObject({
      PVE_CLUSTERS: clusters,
      PROD_SECRET: '3f2a',
      PROD_ACCESS: 'acc',
    });
    expect(s.fromFile).toEqual(['POLICY_EDITORS', 'PROD_SECRET', 'PROD_ACCESS']);
    if (!IS_WINDOWS)
      expect(s.warnings).toEqual([
        expect.stringMatching(
          /holds secrets \(PROD_SECRET, PROD_ACCESS\) and other users can read it/,
        ),
      ]);
  });

  it('takes PVE_CLUSTERS from .dev.vars too, the environment winning', () => {
    const s = settings({ PVE_CLUSTERS: '[{"name":"a"}]' }, `PVE_CLUSTERS='[{"name":"b"}]'\n`);
    expect(s.clusters?.simulated).toEqual(['a']);
    expect(settings({}, `PVE_CLUSTERS='[{"name":"b"}]'\n`).clusters?.simulated).toEqual(['b']);
  });

  it('leaves everything as it was without PVE_CLUSTERS', () => {
    const s = settings({ PVE_BASE_URL: 'https://pve:8006/api2/json', PVE_TOKEN_ID: 'a@pve!b' });
    expect(s.clusters).toBeUndefined();
    expect(s.pve).toEqual({ PVE_BASE_URL: 'https://pve:8006/api2/json', PVE_TOKEN_ID: 'a@pve!b' });
  });

  it.each([
    ['not JSON', '[{name: lab}]', 'PVE_CLUSTERS is not JSON'],
    ['not a list', '{"name":"lab"}', 'PVE_CLUSTERS must be a non-empty list of clusters'],
    ['an entry with no name', '[{"name":"lab"},{}]', 'PVE_CLUSTERS must be a non-empty list'],
    [
      'a name that is no slug',
      '[{"name":"lab"},{"name":"../prod"}]',
      'PVE_CLUSTERS[1].name must be a short slug',
    ],
    [
      'a token on a simulated cluster',
      '[{"name":"lab","token_id":"x@pve!y","token_secret_var":"LAB_SECRET"}]',
      'PVE_CLUSTERS[0] ("lab") has no base_url or vpc_service, so npm start simulates it with the simulator\'s own token: remove token_id, token_secret_var',
    ],
    [
      "a real cluster's secret in the variable a simulated one's goes in",
      JSON.stringify([{ name: 'lab' }, real('prod', { token_secret_var: 'LAB_TOKEN_SECRET' })]),
      'LAB_TOKEN_SECRET holds the simulated cluster lab',
    ],
    [
      'a secret written in an entry',
      JSON.stringify([real('prod', { token_secret: 'a-secret-value-1' })]),
      'PVE_CLUSTERS[0].token_secret: a secret is never written in PVE_CLUSTERS',
    ],
    [
      'a secret pasted as a variable name',
      JSON.stringify([real('prod', { token_secret_var: '0123456789abcdef0123' })]),
      'PVE_CLUSTERS[0].token_secret_var must be the name of the variable holding the secret',
    ],
  ])('stops at %s, never saying a value', (_what, value, message) => {
    let error = '';
    try {
      settings({ PVE_CLUSTERS: value });
    } catch (err) {
      error = (err as Error).message;
    }
    expect(error).toContain(message);
    for (const secret of ['a-secret-value-1', '0123456789abcdef0123'])
      expect(error).not.toContain(secret);
  });

  it('stops at a secret variable nobody sets, naming it and not the others', () => {
    expect(() => settings({ PVE_CLUSTERS: JSON.stringify([real('prod')]) })).toThrow(
      'PVE_CLUSTERS names PROD_SECRET for a secret, and neither the environment nor .dev.vars sets it',
    );
  });

  it('stops at single-cluster settings beside it, but not at one a cluster names as its own', () => {
    const clusters = JSON.stringify([{ name: 'lab' }]);
    expect(() =>
      settings({ PVE_CLUSTERS: clusters }, 'PVE_BASE_URL=https://pve:8006\nPVE_TOKEN_ID=a@pve!b\n'),
    ).toThrow(
      'set PVE_CLUSTERS or the single-cluster settings, not both: remove PVE_BASE_URL, PVE_TOKEN_ID',
    );
    const own = JSON.stringify([real('prod', { token_secret_var: 'PVE_TOKEN_SECRET' })]);
    expect(settings({ PVE_CLUSTERS: own, PVE_TOKEN_SECRET: 's' }).vars.PVE_TOKEN_SECRET).toBe('s');
  });

  it('refuses in .dev.vars a name that neither the Worker nor a cluster reads', () => {
    const clusters = JSON.stringify([real('prod')]);
    expect(() => settings({ PVE_CLUSTERS: clusters }, 'PROD_SECRET=1\nDC2_SECRET=2\n')).toThrow(
      /names settings the Worker does not read[\s\S]*- DC2_SECRET$/,
    );
  });
});
