// GET /health with sign-in through OpenID Connect (IDP=oidc, ADMIN_USERS=lead@corp.example):
// Proxmox probed with one cached GET /version and each way the path to pveproxy fails named with
// its fix; details only for an administrator's token that carries a policy scope (or a web
// session: test/notify/receiver-address.notify.test.ts), never for a tool token or for a request
// because it names loopback; booleans and counts for everyone else; never a secret or an
// upstream body.

import { inject } from 'vitest';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forgetProbes, PROBE_TTL_MS } from '../../src/health/proxmox-probe';
import { fake } from '../support/idp-clients';
import { ORIGIN, workerFetch } from '../support/worker/mcp';
import { sim, type SimFault } from '../support/worker/sim';
import { accessToken, getHealth, type HealthBody, PUBLIC_ORIGIN } from '../support/worker/health';

const LEAD = { sub: 'lead', email: 'lead@corp.example', groups: ['pve-admins'] };
const MEMBER = { sub: 'member', email: 'member@corp.example', groups: ['pve-admins'] };
// A page from something in front of pveproxy (a router's or proxy's login), with a marker that must
// never come back out.
const HTML_PAGE =
  '<!doctype html><html><title>Router login</title><body>acme-team-secret-marker</body></html>';

const versionRequests = async (): Promise<number> =>
  (await sim.requests()).filter((r) => r.path === '/api2/json/version').length;

/** Nothing that identifies the token, its secret or what answered upstream. */
function expectNoSecrets(text: string): void {
  expect(text).not.toContain(inject('simulatorTokenSecret'));
  expect(text).not.toContain(inject('simulatorTokenId'));
  expect(text).not.toContain('acme-team-secret-marker');
  expect(text).not.toContain('mcp-test-secret');
}

const POLICY_READ = ['policy:read'];

beforeEach(async () => {
  forgetProbes();
  await sim.reset();
  await fake.reset();
});

describe("GET /health with an administrator's policy:read token (the operator view)", () => {
  let token: string;
  beforeAll(async () => {
    token = await accessToken(ORIGIN, LEAD, POLICY_READ);
  });

  it('probes Proxmox with one GET /version and keeps the answer for a while', async () => {
    await sim.clearLog();
    const first = await getHealth(ORIGIN, token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      ok: true,
      view: 'operator',
      auth_mode: 'oauth',
      idp: 'oidc',
      public_url: { configured: false, matches_request: true },
      oauth_kv: true,
      proxmox: {
        configured: true,
        via: 'url',
        reachable: true,
        status: 'ok',
        pve_version: '9.1.3',
      },
      audit: 'on',
      policy: { valid: true },
    });
    expect(first.body.proxmox.latency_ms).toEqual(expect.any(Number));
    expect(first.body).not.toHaveProperty('problems');
    await getHealth(ORIGIN, token);
    await getHealth(PUBLIC_ORIGIN);
    expect(await versionRequests()).toBe(1);
    expect(PROBE_TTL_MS).toBeLessThanOrEqual(30_000);
  });

  it.each<[string, SimFault, string, RegExp, RegExp]>([
    [
      'an HTML page',
      { path: '^/version$', status: 200, body: HTML_PAGE, contentType: 'text/html' },
      'not_pveproxy',
      /got text\/html/,
      /something other than pveproxy/,
    ],
    [
      'a redirect to a Cloudflare Access login',
      {
        path: '^/version$',
        status: 302,
        headers: {
          location:
            'https://acme.cloudflareaccess.com/cdn-cgi/access/login/pve?kid=acme-team-secret-marker',
        },
      },
      'access_denied',
      /Cloudflare Access refused the request/,
      /Service Auth policy/,
    ],
    [
      'a tunnel that is down (530, error 1033)',
      { path: '^/version$', status: 530, body: 'error code: 1033', times: 2 },
      'tunnel_down',
      /through the tunnel \(530, error 1033\)/,
      /cloudflared/,
    ],
    [
      'a rejected API token (401)',
      { path: '^/version$', status: 401, reason: 'authentication failure' },
      'auth_failed',
      /rejected the API token/,
      /PVE_TOKEN_SECRET/,
    ],
    [
      'no answer in time',
      { path: '^/version$', hang: true },
      'timeout',
      /did not answer GET \/version within 2 s/,
      /did not answer in time/,
    ],
    [
      'a dropped connection',
      { path: '^/version$', drop: true, times: 2 },
      'unreachable',
      /Could not connect to the Proxmox API/,
      /Nothing answered at PVE_BASE_URL/,
    ],
  ])(
    'names %s, with the fix, and nothing from upstream',
    async (_label, fault, status, message, fix) => {
      await sim.fault(fault);
      const { body, text } = await getHealth(ORIGIN, token);
      expect(body.ok).toBe(false);
      expect(body.proxmox).toMatchObject({ configured: true, reachable: false, status });
      expect(body.problems).toEqual([
        {
          check: 'proxmox',
          message: expect.stringMatching(message),
          fix: expect.stringMatching(fix),
        },
      ]);
      expectNoSecrets(text);
    },
  );
});

describe('GET /health on a public hostname', () => {
  it('gives anyone booleans and counts, no details', async () => {
    await sim.fault({ path: '^/version$', status: 200, body: HTML_PAGE, contentType: 'text/html' });
    const { body, text } = await getHealth(PUBLIC_ORIGIN);
    expect(body).toMatchObject({
      ok: false,
      view: 'public',
      problem_count: 1,
      failing: ['proxmox'],
      policy: { valid: true },
    });
    expect(body.proxmox).toEqual({ configured: true, via: 'url', reachable: false });
    expect(body).not.toHaveProperty('problems');
    expect(text).not.toMatch(/pveproxy|text\/html|PVE_BASE_URL/);
    expectNoSecrets(text);
  });

  it("gives an administrator's policy:read token for this server the details", async () => {
    const token = await accessToken(PUBLIC_ORIGIN, LEAD, POLICY_READ);
    await sim.fault({ path: '^/version$', status: 530, body: 'error code: 1033', times: 2 });
    const { body, text } = await getHealth(PUBLIC_ORIGIN, token);
    expect(body).toMatchObject({
      ok: false,
      view: 'operator',
      proxmox: { reachable: false, status: 'tunnel_down' },
    });
    expect(body.problems).toEqual([
      expect.objectContaining({ check: 'proxmox', fix: expect.stringMatching(/cloudflared/) }),
    ]);
    expect(text).not.toContain(token);
    expect(text).not.toContain('lead@corp.example');
    expectNoSecrets(text);
  });

  it("gives no details to someone else's token, to an administrator's token for another resource, or to a made-up one", async () => {
    const member = await accessToken(PUBLIC_ORIGIN, MEMBER, POLICY_READ);
    const elsewhere = await accessToken(ORIGIN, LEAD, POLICY_READ);
    for (const token of [member, elsewhere, 'lead:grant:not-a-token', 'garbage']) {
      const { body } = await getHealth(PUBLIC_ORIGIN, token);
      expect(body.view).toBe('public');
      expect(body.proxmox).not.toHaveProperty('status');
    }
  });

  it("gives an administrator's MCP client token (tool scopes, pve:read) the public view", async () => {
    await sim.fault({ path: '^/version$', status: 530, body: 'error code: 1033', times: 2 });
    for (const scopes of [['pve:read'], ['pve:read', 'pve:operate', 'pve:guest', 'pve:raw']]) {
      const token = await accessToken(PUBLIC_ORIGIN, LEAD, scopes);
      const { body, text } = await getHealth(PUBLIC_ORIGIN, token);
      expect(body).toMatchObject({ view: 'public', failing: ['proxmox'] });
      expect(body).not.toHaveProperty('problems');
      expect(text).not.toMatch(/cloudflared|1033|tunnel/);
    }
  });

  it('gives a request the public view whatever it says of where it comes from', async () => {
    await sim.fault({ path: '^/version$', status: 530, body: 'error code: 1033', times: 2 });
    const claims: Record<string, string>[] = [
      {},
      { host: 'localhost' },
      { 'cf-connecting-ip': '127.0.0.1' },
      { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '::1' },
    ];
    for (const origin of [ORIGIN, 'http://127.0.0.1', 'http://[::1]'])
      for (const headers of claims) {
        const res = await workerFetch(`${origin}/health`, { headers });
        const body = (await res.json()) as HealthBody;
        expect(body.view, `${origin} ${JSON.stringify(headers)}`).toBe('public');
        // Each asker's own answer: nothing in between keeps it for another.
        expect(res.headers.get('cache-control')).toBe('private, no-store');
        expect(res.headers.get('vary')).toMatch(/Cookie, Authorization/);
        expect(body).not.toHaveProperty('problems');
      }
  });
});
