import { availableParallelism } from 'node:os';
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { NOTIFY_SECRET } from './test/notify/secret.ts';
import { DEPLOYED as LIFECYCLE_POLICY } from './test/policy-lifecycle/deployed.ts';

/** Test policies: each workerd project runs the Worker under one POLICY (or the bundled file). */
const POLICIES = {
  open: { version: '1', default: 'allow' },
  broken: {
    version: '1',
    default: 'maybe',
    tools: {
      pve_list_vms: { limits: [{ counter: 'x', window: 'week', max: -1, scope: 'grant' }] },
    },
  },
  notify: {
    version: '1',
    default: 'deny',
    tools: {
      pve_stop_vm: {
        action: 'require_approval',
        reason: 'Stopping a guest needs a person.',
      },
      pve_delete_vm: {
        action: 'require_approval',
        reason: 'Deleting a guest needs a lead.',
        notify: ['json'],
      },
      pve_set_vm_config: {
        action: 'require_approval',
        reason: 'Config changes need a person.',
        notify: ['json', 'slack', 'teams'],
      },
    },
  },
  // Every tool that takes a sensitive value needs a person's approval, announced to every receiver:
  // the marker test (test/redaction/) follows each value through every place it could go.
  redaction: {
    version: '1',
    default: 'deny',
    tools: Object.fromEntries(
      (
        [
          ['pve_create_qemu_vm', ['description']],
          ['pve_clone_vm', ['description']],
          ['pve_create_lxc', ['password']],
          ['pve_set_vm_config', ['config.description']],
          ['pve_create_snapshot', ['description']],
          ['pve_create_backup', ['notes']],
          ['pve_guest_exec', ['command', 'input_data']],
          ['pve_guest_file_read', ['file']],
          ['pve_api_request', ['params.site-secret']],
        ] as const
      ).map(([tool, sensitive]) => [
        tool,
        {
          action: 'require_approval',
          reason: 'A person approves this.',
          sensitive,
          notify: ['json', 'slack', 'teams'],
        },
      ]),
    ),
  },
};

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
  exclude: string[] = [],
): TestProjectInlineConfiguration {
  // The pool starts a Worker (a Miniflare of its own) for each test file and calls this for each
  // start: each gets a fresh simulator tenant (simulator/tenant.ts), so a project's files run side
  // by side without sharing a cluster, a request log or a fault queue.
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
              // Where test/worker/helpers/sim.ts finds this file's tenant (the Worker ignores it).
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
      exclude,
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
      // without POLICY does: each file puts the policy it needs in force through the policy API
      // (test/worker/helpers/policy.ts). Proxmox behind Cloudflare Access, as with the
      // access-hostname topology: a service token is configured (its secret must never come back
      // out, test/fail-closed/secrets.test.ts).
      workersProject(
        'workers',
        [
          'test/worker/**/*.test.ts',
          'test/policy/**/*.test.ts',
          'test/audit/**/*.test.ts',
          'test/idp/**/*.test.ts',
          'test/fail-closed/**/*.test.ts',
        ],
        null,
        () => ({
          CF_ACCESS_CLIENT_ID: 'access-client.access',
          CF_ACCESS_CLIENT_SECRET: 'access-secret-0123456789abcdef',
        }),
        [],
        ['test/policy/broken.test.ts'],
      ),
      workersProject('policy-broken', ['test/policy/broken.test.ts'], POLICIES.broken),
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
        POLICIES.notify,
        (inject) => ({
          AUTH_MODE: 'oauth',
          IDP: 'dev',
          ALLOWED_GROUPS: 'ops',
          ADMIN_USERS: 'admin@example.com',
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
        POLICIES.redaction,
        (inject) => ({
          AUTH_MODE: 'oauth',
          IDP: 'dev',
          ALLOWED_GROUPS: 'ops',
          ADMIN_USERS: 'admin@example.com',
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
      // Plain http to a Proxmox that is not on this machine: refused before any request.
      workersProject(
        'insecure-upstream',
        ['test/insecure-upstream/**/*.test.ts'],
        POLICIES.open,
        () => ({
          PVE_BASE_URL: 'http://pve.example.com:8006/api2/json',
        }),
      ),
      workersProject('auth-oidc', ['test/auth-oidc/**/*.test.ts'], POLICIES.open, oidcSignIn),
      // /health's views and Proxmox probe, and the Worker on public hostnames, with a real IdP.
      workersProject('health', ['test/health/**/*.test.ts'], POLICIES.open, (inject) => ({
        ...oidcSignIn(inject),
        ADMIN_USERS: 'lead@corp.example',
      })),
      // PUBLIC_URL set: the pages a person opens live on that origin only; the Worker's other
      // hostnames (workers.dev) send a browser there.
      workersProject('public-url', ['test/public-url/**/*.test.ts'], POLICIES.open, (inject) => ({
        ...oidcSignIn(inject),
        PUBLIC_URL: 'https://mcp.example.test',
      })),
      workersProject('auth-github', ['test/auth-github/**/*.test.ts'], POLICIES.open, (inject) => ({
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
          include: ['test/units/**/*.test.ts'],
        },
      },
      // The call seam on its own (test/calls/): in Node, no workerd, against the simulator.
      {
        test: {
          name: 'calls',
          environment: 'node',
          include: ['test/calls/**/*.test.ts'],
          globalSetup: ['./test/global-setup.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/node/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
