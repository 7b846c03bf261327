// PVE_IDENTITIES: which Proxmox token each person acts with, checked once with the other
// settings. Each case is a mapping an operator writes; what matters is the token a person gets
// (first match, else the fallback, else none), and that a mistake is named with what to do and
// never with a secret's value.

import { describe, expect, it } from 'vitest';
import { configOf } from '../../src/config';
import { tokenFor } from '../../src/config/identities';
import type { AppEnv } from '../../src/env';
import { configProblems } from '../../src/health/config-checks';

const ALICE_SECRET = '1a2b3c4d-1111-4aaa-8bbb-alicesecret0';
const OPS_SECRET = '5e6f7a8b-2222-4ccc-8ddd-opssecret000';
const REST_SECRET = '9c0d1e2f-3333-4eee-8fff-restsecret00';
/** A PVE token secret as they are: a UUID. */
const HEX_SECRET = '8d4f2a6c-0b1e-4c3d-9e5f-7a1b3c5d7e9f';

const ALICE = {
  match: 'Alice@Example.com',
  token_id: 'alice@pve!mcp',
  token_secret_var: 'ALICE_TOKEN_SECRET',
};
const OPS = {
  match: ['group:ops', 'u-42'],
  token_id: 'ops@pve!mcp',
  token_secret_var: 'OPS_SECRET',
};
const REST = { fallback: true, token_id: 'readonly@pve!mcp', token_secret_var: 'REST_SECRET' };

function env(identities: unknown, extra: Record<string, unknown> = {}): AppEnv {
  return {
    AUTH_MODE: 'oauth',
    PVE_BASE_URL: 'https://pve.example.com:8006',
    PVE_TOKEN_ID: 'mcp@pve!mcp',
    PVE_TOKEN_SECRET: '0f0e0d0c-4444-4aaa-8bbb-servertoken0',
    PVE_IDENTITIES: JSON.stringify(identities),
    ALICE_TOKEN_SECRET: ALICE_SECRET,
    OPS_SECRET,
    REST_SECRET,
    ...extra,
  } as unknown as AppEnv;
}

const person = (userId: string, email?: string, groups: string[] = []) => ({
  userId,
  ...(email ? { email } : {}),
  groups,
});

/** The configuration's error about identities (failing the test if there is none). */
function identitiesError(e: AppEnv): string {
  const { identities } = configOf(e);
  if (!identities || !('error' in identities)) throw new Error('expected an error');
  for (const secret of [ALICE_SECRET, OPS_SECRET, REST_SECRET, HEX_SECRET])
    expect(identities.error).not.toContain(secret);
  return identities.error;
}

describe('PVE_IDENTITIES', () => {
  it('gives each person the first entry that matches them, else the fallback', () => {
    const { identities } = configOf(env([ALICE, OPS, REST]));
    if (!identities || 'error' in identities) throw new Error(JSON.stringify(identities));
    // An email matches in any case, as policy principals do.
    expect(tokenFor(identities, 'default', person('u-1', 'alice@example.com'))).toEqual({
      tokenId: 'alice@pve!mcp',
      secretVar: 'ALICE_TOKEN_SECRET',
      secret: ALICE_SECRET,
    });
    expect(
      tokenFor(identities, 'default', person('u-2', 'bob@example.com', ['ops']))?.tokenId,
    ).toBe('ops@pve!mcp');
    expect(tokenFor(identities, 'default', person('u-42'))?.tokenId).toBe('ops@pve!mcp');
    // Alice in ops: her own entry comes first.
    expect(
      tokenFor(identities, 'default', person('u-1', 'alice@example.com', ['ops']))?.tokenId,
    ).toBe('alice@pve!mcp');
    expect(tokenFor(identities, 'default', person('u-3', 'eve@example.com'))?.tokenId).toBe(
      'readonly@pve!mcp',
    );
    // Their secrets are scrubbed wherever upstream text goes.
    expect(configOf(env([ALICE, OPS, REST])).secrets).toEqual(
      expect.arrayContaining([ALICE_SECRET, OPS_SECRET, REST_SECRET]),
    );
  });

  it('maps no one without a fallback, and everyone to the cluster’s own token without PVE_IDENTITIES', () => {
    const { identities } = configOf(env([ALICE]));
    if (!identities || 'error' in identities) throw new Error(JSON.stringify(identities));
    expect(tokenFor(identities, 'default', person('u-3', 'eve@example.com'))).toBeNull();
    expect(configOf(env(undefined, { PVE_IDENTITIES: undefined })).identities).toBeNull();
    expect(tokenFor(null, 'default', person('u-3'))).toBeUndefined();
  });

  it('takes one list per cluster where there are several; a cluster not named keeps its own token', () => {
    const clusters = JSON.stringify([
      {
        name: 'lab',
        base_url: 'https://lab:8006',
        token_id: 'mcp@pve!lab',
        token_secret_var: 'LAB_SECRET',
      },
      {
        name: 'prod',
        base_url: 'https://prod:8006',
        token_id: 'mcp@pve!prod',
        token_secret_var: 'PROD_SECRET',
      },
    ]);
    const several = {
      PVE_BASE_URL: '',
      PVE_TOKEN_ID: '',
      PVE_TOKEN_SECRET: '',
      PVE_CLUSTERS: clusters,
      LAB_SECRET: 'lab-secret-value-1',
      PROD_SECRET: 'prod-secret-value-1',
    };
    const { identities } = configOf(env({ prod: [ALICE] }, several));
    if (!identities || 'error' in identities) throw new Error(JSON.stringify(identities));
    expect(tokenFor(identities, 'prod', person('u-1', 'alice@example.com'))?.tokenId).toBe(
      'alice@pve!mcp',
    );
    expect(tokenFor(identities, 'lab', person('u-1', 'alice@example.com'))).toBeUndefined();
    expect(identitiesError(env([ALICE], several))).toBe(
      'PVE_IDENTITIES must name the cluster of each list where the server reaches several: { "lab": [...], "prod": [...] }',
    );
    expect(identitiesError(env({ staging: [ALICE] }, several))).toContain(
      'PVE_IDENTITIES names the cluster "staging", which the server does not reach (it reaches lab, prod)',
    );
  });

  it.each([
    ['not JSON', '[{', 'PVE_IDENTITIES is not JSON'],
    ['an empty list', [], 'PVE_IDENTITIES must be a list of 1 to 200 entries'],
    [
      'a token id PVE would refuse',
      [{ ...ALICE, token_id: 'alice' }],
      'PVE_IDENTITIES[0]: token_id must look like user@realm!tokenid',
    ],
    [
      'a secret written in the entry',
      [{ ...ALICE, token_secret: ALICE_SECRET }],
      'PVE_IDENTITIES[0].token_secret: a secret is never written here',
    ],
    [
      'a secret pasted as a variable',
      [{ ...ALICE, token_secret_var: HEX_SECRET }],
      'PVE_IDENTITIES[0]: token_secret_var looks like a secret',
    ],
    [
      'a variable of the server',
      [{ ...ALICE, token_secret_var: 'OIDC_CLIENT_SECRET' }],
      'is a setting of this server of its own',
    ],
    [
      'a variable that is not set',
      [{ ...ALICE, token_secret_var: 'NOBODY_SECRET' }],
      'token_secret_var names NOBODY_SECRET, which is not set',
    ],
    [
      'one person matched twice',
      [ALICE, { ...OPS, match: ['alice@example.com'] }],
      'PVE_IDENTITIES[1]: "alice@example.com" is matched by PVE_IDENTITIES[0] already',
    ],
    [
      'a fallback before the end',
      [REST, ALICE],
      'PVE_IDENTITIES[0]: one fallback at most, and last',
    ],
    [
      'a scope as a match',
      [{ ...ALICE, match: 'scope:pve:read' }],
      'must be a user id, an email or group:<name>',
    ],
    [
      'an unknown key',
      [{ ...ALICE, role: 'admin' }],
      'PVE_IDENTITIES[0]: unknown key "role": an entry is { match, token_id, token_secret_var } or { fallback: true, token_id, token_secret_var }',
    ],
  ])('names %s, never a secret, and /health says so', (_what, value, message) => {
    const e = env(value, typeof value === 'string' ? { PVE_IDENTITIES: value } : {});
    expect(identitiesError(e)).toContain(message);
    const problems = configProblems(configOf(e), new Request('https://mcp.example.com/health'));
    expect(problems).toContainEqual(
      expect.objectContaining({
        check: 'proxmox',
        message: expect.stringContaining(
          'Proxmox identities are not configured, so every call is refused',
        ),
        fix: expect.stringContaining('Correct PVE_IDENTITIES'),
      }),
    );
  });
});
