// The doctor's reading of /health and its verdict, without a server: what a deployed URL's public
// view yields (failing checks named, details withheld, the way to get them), what is skipped
// without a token, and the exit codes.

import { describe, expect, it } from 'vitest';
import { healthResults, type Health } from '../../../scripts/doctor/health-checks.ts';
import { signInResult } from '../../../scripts/doctor/mcp-checks.ts';
import { fail, formatResult, pass, skip, summary } from '../../../scripts/doctor/report.ts';

const PUBLIC_HEALTH: Health = {
  ok: false,
  version: '0.1.0',
  view: 'public',
  auth_mode: 'oauth',
  idp: 'oidc',
  public_url: { configured: true, matches_request: true },
  oauth_kv: true,
  proxmox: { configured: true, reachable: false },
  audit: 'on',
  policy: { origin: 'policy.json', valid: true },
  failing: ['proxmox'],
};

describe('the doctor on /health with two clusters', () => {
  const TWO: Health = {
    ...PUBLIC_HEALTH,
    view: 'operator',
    failing: undefined,
    proxmox: {
      configured: true,
      clusters: [
        { name: 'lab', reachable: true, status: 'ok', latency_ms: 4, pve_version: '9.1.3' },
        { name: 'prod', reachable: false, status: 'auth_failed' },
      ],
    },
    problems: [
      {
        check: 'proxmox',
        message: 'Cluster prod: Proxmox rejected the API token (401 authentication failure)',
        fix: "Check cluster prod's token_id (mcp@pve!mcp) and the secret (`wrangler secret put PROD_TOKEN_SECRET`).",
      },
    ],
  };

  it('checks each cluster apart: passes the one that answers, fails the other naming its token', () => {
    const results = healthResults(TWO);
    expect(results.filter((r) => r.name.startsWith('proxmox'))).toEqual([
      {
        name: 'proxmox lab',
        outcome: 'PASS',
        detail: 'reachable (GET /version in 4 ms, PVE 9.1.3)',
      },
      {
        name: 'proxmox prod',
        outcome: 'FAIL',
        detail: 'Cluster prod: Proxmox rejected the API token (401 authentication failure)',
        fix: "Check cluster prod's token_id (mcp@pve!mcp) and the secret (`wrangler secret put PROD_TOKEN_SECRET`).",
      },
    ]);
    // The public view names the cluster, with how to see why.
    const publicView = healthResults({
      ...TWO,
      view: 'public',
      problems: undefined,
      failing: ['proxmox'],
    });
    expect(publicView.find((r) => r.name === 'proxmox prod')).toMatchObject({
      outcome: 'FAIL',
      detail: 'cluster prod does not answer (the public view: no details).',
    });
    expect(publicView.find((r) => r.name === 'proxmox lab')?.outcome).toBe('PASS');
  });
});

describe('the doctor on /health with PVE_IDENTITIES', () => {
  const PEOPLE: Health = {
    ...PUBLIC_HEALTH,
    view: 'operator',
    failing: undefined,
    identities: { tokens: 3 },
    problems: [
      {
        check: 'identities',
        message:
          'dave@pve!mcp (PVE_IDENTITIES) holds no privileges at all: Proxmox answers it with empty lists, not refusals, so its people see an empty cluster.',
        fix: 'Grant its user a role, and the token too where it is privilege-separated (docs/deploy.md, 1a).',
      },
      {
        check: 'identities',
        message:
          "root@pam!mcp (PVE_IDENTITIES) holds more than this server's tools need: Permissions.Modify, Sys.Modify.",
        fix: 'Give the token (privilege-separated) a role with only what its people need (docs/deploy.md, 1a): the policy is then not the only fence.',
      },
    ],
  };

  it('names the token that holds nothing and the one that holds too much, in one failed check', () => {
    const result = healthResults(PEOPLE).find((r) => r.name === 'identities');
    expect(result).toMatchObject({ outcome: 'FAIL' });
    expect(result?.detail).toContain('dave@pve!mcp (PVE_IDENTITIES) holds no privileges at all');
    expect(result?.detail).toContain('root@pam!mcp (PVE_IDENTITIES) holds more than');
    expect(result?.fix).toContain('Grant its user a role');
    // Tokens that hold what they should: a pass, counted.
    expect(
      healthResults({
        ...PEOPLE,
        problems: undefined,
        proxmox: { configured: true, reachable: true, status: 'ok' },
      }).find((r) => r.name === 'identities'),
    ).toEqual({
      name: 'identities',
      outcome: 'PASS',
      detail:
        '3 Proxmox tokens people act with (PVE_IDENTITIES): each holds privileges, none beyond what the tools need',
    });
  });
});

describe('the doctor on a public /health', () => {
  it('fails the checks /health names, says details are withheld and how to see them', () => {
    const results = healthResults(PUBLIC_HEALTH);
    expect(results.filter((r) => r.outcome === 'FAIL')).toEqual([
      {
        name: 'proxmox',
        outcome: 'FAIL',
        detail:
          '/health reports a problem here (its details are for an administrator: the public view).',
        fix: expect.stringMatching(
          /--token with a token of an ADMIN_USERS \/ ADMIN_GROUPS member that carries policy:read .*or open \/health in a browser signed in on \/admin/,
        ),
      },
    ]);
    expect(results.map((r) => r.name)).toEqual([
      'health',
      'sign_in',
      'public_url',
      'oauth_kv',
      'proxmox',
      'policy',
      'audit',
    ]);
  });

  it('fails an audit trail that is off', () => {
    const audit = healthResults({
      ...PUBLIC_HEALTH,
      failing: [],
      ok: true,
      proxmox: { configured: true, reachable: true },
      audit: 'off',
    }).find((r) => r.name === 'audit');
    expect(audit).toMatchObject({
      outcome: 'FAIL',
      fix: expect.stringMatching(/Remove AUDIT_ENABLED/),
    });
  });

  it('skips the signed-in checks without a token for a real identity provider', async () => {
    const { result, token } = await signInResult(
      'https://mcp.example.com',
      PUBLIC_HEALTH,
      undefined,
    );
    expect(token).toBeUndefined();
    expect(result).toMatchObject({ outcome: 'SKIP', fix: expect.stringMatching(/--token/) });
  });
});

describe('the verdict', () => {
  it.each([
    [[pass('a', 'x'), pass('b', 'y')], '2 passed, 0 failed', 0],
    [[pass('a', 'x'), skip('b', 'y', 'z')], '1 passed, 0 failed, 1 skipped', 2],
    [[fail('a', 'x', 'y'), skip('b', 'y', 'z')], '0 passed, 1 failed, 1 skipped', 1],
  ])('counts %j', (results, line, exitCode) => {
    expect(summary(results)).toEqual({ line, exitCode });
  });

  it('prints each check on one line, with its fix when it fails', () => {
    expect(
      formatResult(
        fail('policy', 'policy (POLICY) is invalid:\n/default: bad\n/tools: worse', 'Correct it.'),
      ),
    ).toBe(
      'FAIL  policy                 policy (POLICY) is invalid: /default: bad; /tools: worse Fix: Correct it.',
    );
  });
});
