import { availableParallelism } from 'node:os';
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { NOTIFY_SECRET } from './test/notify/secret.ts';
import { DEPLOYED as LIFECYCLE_POLICY } from './test/policy-lifecycle/deployed.ts';

/**
 * A project running tests inside workerd (the Worker, its Durable Objects, the MCP transports)
 * against a real HTTP Proxmox simulator that the global setup starts for it; `setups` adds the
 * project's own global setups.
 */
function workersProject(
  name: string,
  include: string[],
  policy: object | null,
  extra: (
    inject: (key: 'fakeIdpUrl' | 'receiverUrl') => string,
  ) => Record<string, string> = () => ({}),
  setups: string[] = [],
): TestProjectInlineConfiguration {
  // The pool starts a Worker (a Miniflare of its own) for each of the project's workers and calls
  // this for each start: each gets a simulator tenant of its own (simulator/tenant.ts), so the
  // files running side by side share no cluster, request log or fault queue; the files one Worker
  // runs one after another each begin from the seeded cluster (test/worker/helpers/each-file.ts).
  let starts = 0;
  return {
    plugins: [
      cloudflareTest(({ inject }) => {
        const simulator = `${inject('simulatorUrl')}/t/${name}-${++starts}`;
        return {
          main: './src/index.ts',
          wrangler: { configPath: './wrangler.toml' },
          miniflare: {
            bindings: {
              PVE_BASE_URL: `${simulator}/api2/json`,
              // Where test/worker/helpers/sim.ts finds this Worker's tenant (the Worker ignores it).
              TEST_SIMULATOR_URL: simulator,
              PVE_TOKEN_ID: inject('simulatorTokenId'),
              PVE_TOKEN_SECRET: inject('simulatorTokenSecret'),
              AUTH_MODE: 'none',
              PVE_TIMEOUT_MS: '2000',
              ...(policy ? { POLICY: JSON.stringify(policy) } : {}),
              ...extra(inject),
            },
          },
        };
      }),
    ],
    test: {
      name,
      include,
      // A project's files share Workers: each Worker (one workerd) runs file after file, keeping
      // its modules and its storage, instead of a workerd started and the Worker's modules loaded
      // again for every file (seconds of CPU each). So a file puts in force what it needs (its
      // policy through the policy API) and reads back only what it made; one about a fresh
      // deployment or the whole of a store says so (test/worker/helpers/fresh.ts).
      isolate: false,
      setupFiles: ['./test/worker/helpers/each-file.ts'],
      globalSetup: ['./test/global-setup.ts', ...setups],
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
}

/** Sign-in through the fake OpenID Connect provider; pve-admins are admitted. */
function oidcSignIn(inject: (key: 'fakeIdpUrl') => string): Record<string, string> {
  return {
    AUTH_MODE: 'oauth',
    IDP: 'oidc',
    OIDC_ISSUER: `${inject('fakeIdpUrl')}/oidc`,
    OIDC_CLIENT_ID: 'mcp-test-client',
    OIDC_CLIENT_SECRET: 'mcp-test-secret',
    ALLOWED_GROUPS: 'pve-admins',
  };
}

export default defineConfig({
  test: {
    // Vitest's default on N cores is N - 1 workers: one on a 2-core machine, where every file then
    // waits for the one before, though most of a file's time is spent waiting on a server, a
    // child process or a Durable Object deadline, not on the CPU. Two at least.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The per-call JSON log lines are asserted where they matter; elsewhere they are noise.
    onConsoleLog: (log) => !log.includes('"msg":"tool_call"'),
    projects: [
      // Without sign-in (AUTH_MODE=none), deploying the shipped policy.json as a deployment
      // without POLICY does: a file that needs another policy puts it in force through the
      // policy API (test/worker/helpers/policy.ts). Proxmox behind Cloudflare Access, as with the
      // access-hostname topology: a service token is configured (its secret must never come back
      // out, test/fail-closed/secrets.test.ts).
      workersProject(
        'workers',
        [
          'test/worker/**/*.test.ts',
          'test/policy/**/*.test.ts',
          'test/audit/**/*.test.ts',
          'test/fail-closed/**/*.test.ts',
          'test/insecure-upstream/**/*.test.ts',
        ],
        null,
        () => ({
          CF_ACCESS_CLIENT_ID: 'access-client.access',
          CF_ACCESS_CLIENT_SECRET: 'access-secret-0123456789abcdef',
        }),
      ),
      // Signed in through the development identity provider (OAuth): the sign-in itself, approvals
      // (page, conversation, quorums), commands inside guests, both MCP eras, and the policy's
      // versions, editors, shadow and replay, which need the deployed POLICY as version 1 (the
      // other files put theirs in force as a policy editor). Its own setup adds the outbound
      // probe: a loopback trap for the OAuth library's fetches.
      workersProject(
        'signed-in',
        [
          'test/auth/**/*.test.ts',
          'test/approvals/**/*.test.ts',
          'test/approvals-web/**/*.test.ts',
          'test/guest/**/*.test.ts',
          'test/eras/**/*.test.ts',
          'test/policy-lifecycle/**/*.test.ts',
        ],
        LIFECYCLE_POLICY,
        () => ({
          AUTH_MODE: 'oauth',
          IDP: 'dev',
          ALLOWED_USERS: 'alice@example.com',
          ALLOWED_GROUPS: 'ops,dev',
          ADMIN_USERS: 'admin@example.com',
          POLICY_EDITORS: 'editor@example.com,group:policy-editors',
        }),
        ['./test/auth/global-setup.ts'],
      ),
      // Approval notifications through the queue to a local receiver (its own global setup).
      workersProject(
        'notify',
        ['test/notify/**/*.test.ts'],
        null,
        (inject) => ({
          AUTH_MODE: 'oauth',
          IDP: 'dev',
          ALLOWED_GROUPS: 'ops',
          ADMIN_USERS: 'admin@example.com',
          POLICY_EDITORS: 'editor@example.com',
          APPROVAL_TTL_MINUTES: '15',
          APPROVAL_WEBHOOK_TIMEOUT_MS: '500',
          APPROVAL_WEBHOOKS: JSON.stringify([
            {
              name: 'json',
              url: `${inject('receiverUrl')}/json`,
              format: 'json',
              secret: NOTIFY_SECRET,
            },
            { name: 'slack', url: `${inject('receiverUrl')}/slack`, format: 'slack' },
            { name: 'teams', url: `${inject('receiverUrl')}/teams`, format: 'teams' },
            {
              name: 'flaky',
              url: `${inject('receiverUrl')}/flaky`,
              events: ['approval.requested'],
            },
            {
              name: 'hang',
              url: `${inject('receiverUrl')}/hang`,
              events: ['approval.requested'],
            },
          ]),
        }),
        ['./test/notify/global-setup.ts'],
      ),
      // A sensitive value followed everywhere (the notify receivers' global setup).
      workersProject(
        'redaction',
        ['test/redaction/**/*.test.ts'],
        null,
        (inject) => ({
          AUTH_MODE: 'oauth',
          IDP: 'dev',
          ALLOWED_GROUPS: 'ops',
          ADMIN_USERS: 'admin@example.com',
          POLICY_EDITORS: 'editor@example.com',
          APPROVAL_WEBHOOK_TIMEOUT_MS: '500',
          APPROVAL_WEBHOOKS: JSON.stringify(
            ['json', 'slack', 'teams'].map((format) => ({
              name: format,
              url: `${inject('receiverUrl')}/${format}`,
              format,
            })),
          ),
        }),
        ['./test/notify/global-setup.ts'],
      ),
      // Signed in through an OpenID Connect provider (the fake IdP): the sign-in itself, /health's
      // views and Proxmox probe, the Worker on public hostnames, and with PUBLIC_URL set (the
      // pages a person opens live on that origin only; test/public-url/). The shipped
      // policy.json, which lets the reads these call through.
      workersProject(
        'oidc',
        ['test/auth-oidc/**/*.test.ts', 'test/health/**/*.test.ts', 'test/public-url/**/*.test.ts'],
        null,
        (inject) => ({
          ...oidcSignIn(inject),
          ADMIN_USERS: 'lead@corp.example',
        }),
      ),
      workersProject('auth-github', ['test/auth-github/**/*.test.ts'], null, (inject) => ({
        AUTH_MODE: 'oauth',
        IDP: 'github',
        GITHUB_CLIENT_ID: 'mcp-test-client',
        GITHUB_CLIENT_SECRET: 'mcp-test-secret',
        GITHUB_ORG: 'acme',
        GITHUB_URL: `${inject('fakeIdpUrl')}/github`,
        GITHUB_API_URL: `${inject('fakeIdpUrl')}/github-api`,
        ALLOWED_GROUPS: 'acme/ops',
      })),
      {
        test: {
          name: 'browser',
          environment: 'node',
          include: ['test/browser/**/*.test.ts'],
          globalSetup: ['./test/browser/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 90_000,
        },
      },
      // Pure functions of src/ (parsers, the policy engine, the scrubber, export formats): in Node,
      // with no Worker to start, so each file costs no workerd start of its own.
      {
        test: {
          name: 'units',
          environment: 'node',
          isolate: false,
          include: ['test/units/**/*.test.ts'],
        },
      },
      // The call seam on its own (test/calls/) and the sign-in clients of the identity providers
      // (test/idp/): in Node, no workerd, against the simulator and the fake IdP. One file at a
      // time: the fake IdP's next sign-in and faults are one queue for all.
      {
        test: {
          name: 'calls',
          environment: 'node',
          fileParallelism: false,
          include: ['test/calls/**/*.test.ts', 'test/idp/**/*.test.ts'],
          globalSetup: ['./test/global-setup.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'node',
          environment: 'node',
          isolate: false,
          include: ['test/node/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
