// What /health finds wrong in a configuration before calling anything: each case one mistake a
// team makes on the way to a deployed server, reported with the check it fails and a fix, and
// never with a secret's value.

import { describe, expect, it } from 'vitest';
import { configOf } from '../../src/config';
import { providerEnv, runtimeOf } from '../../src/compose/runtime';
import type { AppEnv } from '../../src/env';
import { configProblems, publicUrlState } from '../../src/health/config-checks';

const ORIGIN = 'https://mcp.example.com';
const SECRET = 'oidc-secret-value-7f3a';

/** A complete deploy configuration, as the examples under deploy/ give once filled in. */
function env(overrides: Record<string, unknown> = {}): AppEnv {
  const base: Record<string, unknown> = {
    OAUTH_KV: {},
    AUTH_MODE: 'oauth',
    PUBLIC_URL: ORIGIN,
    IDP: 'oidc',
    OIDC_ISSUER: 'https://idp.example.com',
    OIDC_CLIENT_ID: 'client',
    OIDC_CLIENT_SECRET: SECRET,
    ALLOWED_GROUPS: 'ops',
    PVE_BASE_URL: 'https://pve-api.example.com',
    PVE_TOKEN_ID: 'mcp@pve!mcp',
    PVE_TOKEN_SECRET: 'd7f0e5a0-0000-4000-8000-000000000000',
  };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete base[k];
    else base[k] = v;
  }
  return base as unknown as AppEnv;
}

const problems = (e: AppEnv, url = `${ORIGIN}/health`) =>
  configProblems(configOf(e), new Request(url));

describe('configProblems', () => {
  it('finds nothing wrong in a complete configuration', () => {
    expect(problems(env())).toEqual([]);
    expect(publicUrlState(configOf(env()), new Request(`${ORIGIN}/health`))).toEqual({
      configured: true,
      matches_request: true,
    });
  });

  it.each<[string, Record<string, unknown>, string, RegExp, RegExp]>([
    [
      'a missing OAUTH_KV binding',
      { OAUTH_KV: undefined },
      'oauth_kv',
      /OAUTH_KV binding is missing/,
      /wrangler kv namespace create OAUTH_KV/,
    ],
    [
      'an incomplete identity provider',
      { OIDC_CLIENT_SECRET: undefined, OIDC_ISSUER: '' },
      'sign_in',
      /OIDC_ISSUER is not set; OIDC_CLIENT_SECRET is not set/,
      /wrangler secret put/,
    ],
    [
      'no identity provider at all',
      { IDP: undefined },
      'sign_in',
      /IDP is not set/,
      /README: Sign-in/,
    ],
    [
      'nobody admitted',
      { ALLOWED_GROUPS: undefined },
      'sign_in',
      /neither ALLOWED_USERS nor ALLOWED_GROUPS/,
      /ALLOWED_GROUPS/,
    ],
    [
      'a PUBLIC_URL that is not a URL',
      { PUBLIC_URL: 'mcp.example.com' },
      'public_url',
      /not a URL/,
      /https:\/\/mcp\.example\.com/,
    ],
    [
      'a PUBLIC_URL on plain http',
      { PUBLIC_URL: 'http://mcp.example.com' },
      'public_url',
      /not https/,
      /https:\/\//,
    ],
    [
      'a missing Proxmox token secret',
      { PVE_TOKEN_SECRET: undefined },
      'proxmox',
      /PVE_TOKEN_SECRET is not set/,
      /wrangler secret put PVE_TOKEN_SECRET/,
    ],
    [
      'an audit setting out of range',
      { AUDIT_RETENTION_DAYS: '0' },
      'audit',
      /AUDIT_RETENTION_DAYS/,
      /default/,
    ],
    [
      'an audit switch that is neither true nor false',
      { AUDIT_ENABLED: 'no' },
      'audit',
      /AUDIT_ENABLED must be true or false, got "no"; the audit stays on/,
      /default/,
    ],
    [
      'an approval lifetime over a day',
      { APPROVAL_TTL_MINUTES: '1441' },
      'approvals',
      /APPROVAL_TTL_MINUTES must be an integer from 1 to 1440, got "1441"; using 15/,
      /default/,
    ],
    [
      'a CORS origin with a path',
      { CORS_ORIGINS: 'https://app.example.com/ui' },
      'cors',
      /"https:\/\/app\.example\.com\/ui" is not an origin/,
      /exact origins/,
    ],
  ])('reports %s with its fix', (_label, overrides, check, message, fix) => {
    const found = problems(env(overrides));
    expect(found).toEqual([
      { check, message: expect.stringMatching(message), fix: expect.stringMatching(fix) },
    ]);
    expect(JSON.stringify(found)).not.toContain(SECRET);
  });

  it('parses the environment once into a checked configuration, shared by the copies the OAuth library gets', () => {
    const e = env({
      APPROVAL_TTL_MINUTES: '30',
      CORS_ORIGINS: 'https://app.example.com/, http://localhost:5173 ftp:/x',
      ADMIN_USERS: 'ana@example.com',
    });
    const config = configOf(e);
    expect(configOf(e)).toBe(config);
    expect(runtimeOf(providerEnv(e)).config).toBe(config);
    expect(config).toMatchObject({
      authMode: 'oauth',
      audit: { enabled: true, retentionDays: 90, maxRows: 1_000_000 },
      approvals: { ttlMs: 30 * 60_000 },
      admins: { users: ['ana@example.com'], groups: [] },
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      problems: [{ setting: 'cors', message: expect.stringMatching(/"ftp:\/x" is not an origin/) }],
    });
    expect(config.pve).toMatchObject({
      baseUrl: 'https://pve-api.example.com/api2/json',
      tokenId: 'mcp@pve!mcp',
    });
    expect(config.secrets).toEqual(['d7f0e5a0-0000-4000-8000-000000000000', SECRET]);
  });

  it('reports a PUBLIC_URL that is not the origin the request came to, naming both', () => {
    const e = env({ PUBLIC_URL: 'https://mcp.example.com/' });
    expect(problems(e, 'https://proxmox-mcp.acme.workers.dev/health')).toEqual([
      {
        check: 'public_url',
        message: expect.stringMatching(
          /^PUBLIC_URL is https:\/\/mcp\.example\.com but this request came to https:\/\/proxmox-mcp\.acme\.workers\.dev: .*cannot sign in \(401\)/,
        ),
        fix: expect.stringMatching(
          /Set PUBLIC_URL to https:\/\/proxmox-mcp\.acme\.workers\.dev .* workers_dev = false/,
        ),
      },
    ]);
    expect(
      publicUrlState(configOf(e), new Request('https://proxmox-mcp.acme.workers.dev/health')),
    ).toEqual({
      configured: true,
      matches_request: false,
    });
  });

  it('accepts plain http for a loopback PUBLIC_URL, and no sign-in settings without sign-in', () => {
    expect(
      problems(env({ PUBLIC_URL: 'http://127.0.0.1:8787' }), 'http://127.0.0.1:8787/health'),
    ).toEqual([]);
    expect(
      problems(
        env({ AUTH_MODE: 'none', IDP: undefined, OAUTH_KV: undefined, PUBLIC_URL: undefined }),
      ),
    ).toEqual([]);
  });
});
