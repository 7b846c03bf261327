import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { SIMULATOR_TOKENS } from './simulator/access/tokens.ts';
import { NOTIFY_SECRET, OTLP_KEY } from './test/support/notify-secret.ts';
import { serversPerWorker } from './test/support/per-worker.ts';

/**
 * A test file lives under the path of what it tests (test/policy/ for src/policy/, test/scripts/
 * for scripts/, test/simulator/ for simulator/; helpers in test/support/), and says where it runs
 * by the word before `.test.ts`: the name of its project (`limits.worker.test.ts`,
 * `consent.browser.test.ts`). A file with none runs in plain Node: `x.test.ts` for pure code of
 * src/, typed as Worker code, and `x.node.test.ts` for what uses Node's own modules.
 * test/layers.node.test.ts holds every file to one project and every folder to a real path.
 */
const NAMED_PROJECTS = [
  'worker',
  'signed-in',
  'notify',
  'redaction',
  'oidc',
  'github',
  'browser',
  'serial',
  'clusters',
  'identities',
  'people-clusters',
] as const;
const filesOf = (project: string): string => `test/**/*.${project}.test.ts`;

/**
 * Two clusters, lab and prod, of a Worker's simulator (PVE_CLUSTERS; each seeded alike, so the
 * same vmid is on both), each with its own token secret variable; no single-cluster settings.
 */
function labAndProd(
  address: (of: 'simulatorUrl' | 'simulatorTokenId' | 'simulatorTokenSecret') => string,
) {
  return {
    PVE_BASE_URL: '',
    PVE_TOKEN_ID: '',
    PVE_TOKEN_SECRET: '',
    PVE_CLUSTERS: JSON.stringify(
      ['lab', 'prod'].map((name) => ({
        name,
        base_url: `${address('simulatorUrl')}/t/${name}`,
        token_id: address('simulatorTokenId'),
        token_secret_var: `${name.toUpperCase()}_TOKEN_SECRET`,
      })),
    ),
    LAB_TOKEN_SECRET: address('simulatorTokenSecret'),
    PROD_TOKEN_SECRET: address('simulatorTokenSecret'),
  };
}

/**
 * A project running tests inside workerd (the Worker, its Durable Objects, the MCP transports)
 * against a real HTTP Proxmox simulator of each Worker's own. `policyFile` is the file whose text
 * the deployment's POLICY variable holds (none: the shipped policy.json, as a deployment without
 * POLICY); `vars` the project's settings over the defaults here (`address` names its Worker's
 * fake IdP, or the project's webhook receiver); `setups` the project's own global setups.
 */
function workersProject(
  name: string,
  policyFile: string | null,
  vars: (
    address: (
      of:
        | 'fakeIdpUrl'
        | 'receiverUrl'
        | 'simulatorUrl'
        | 'simulatorTokenId'
        | 'simulatorTokenSecret',
    ) => string,
  ) => Record<string, string> = () => ({}),
  setups: string[] = [],
): TestProjectInlineConfiguration {
  return {
    plugins: [
      // The pool starts a Worker (a Miniflare of its own) for each of the project's workers, and
      // each Worker gets a Proxmox simulator (a process) and a fake IdP of its own, started and
      // stopped with it. So the files running side by side share no cluster, request log, fault
      // queue or next sign-in, and no busy neighbour (nor vitest's own busy main process) delays
      // one's Proxmox answers; the files one Worker runs one after another each begin from the
      // seeded cluster (test/support/worker/each-file.ts).
      cloudflareTest(() => {
        throw new Error("this project's pool is serversPerWorker's (below)");
      }),
      serversPerWorker(({ inject }, { simulatorUrl: simulator, fakeIdpUrl }) => {
        return {
          main: './src/index.ts',
          wrangler: { configPath: './wrangler.toml' },
          miniflare: {
            bindings: {
              PVE_BASE_URL: `${simulator}/api2/json`,
              // Where test/support/worker/sim.ts finds this Worker's simulator (the Worker
              // ignores it).
              TEST_SIMULATOR_URL: simulator,
              PVE_TOKEN_ID: inject('simulatorTokenId'),
              PVE_TOKEN_SECRET: inject('simulatorTokenSecret'),
              AUTH_MODE: 'none',
              PVE_TIMEOUT_MS: '2000',
              ...(policyFile
                ? { POLICY: readFileSync(new URL(policyFile, import.meta.url), 'utf8') }
                : {}),
              // Where test/support/idp-clients.ts finds this Worker's fake IdP.
              TEST_FAKE_IDP_URL: fakeIdpUrl,
              ...vars((of) =>
                of === 'fakeIdpUrl' ? fakeIdpUrl : of === 'simulatorUrl' ? simulator : inject(of),
              ),
            },
          },
        };
      }),
    ],
    test: {
      name,
      include: [filesOf(name)],
      // A project's files share Workers: each Worker (one workerd) runs file after file, keeping
      // its modules and its storage, instead of a workerd started and the Worker's modules loaded
      // again for every file (seconds of CPU each). So a file puts in force what it needs (its
      // policy through the policy API) and reads back only what it made; one about a fresh
      // deployment or the whole of a store says so (test/support/worker/fresh.ts).
      isolate: false,
      setupFiles: ['./test/support/worker/each-file.ts'],
      globalSetup: ['./test/support/setup/pve.ts', ...setups],
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
}

/** Spans exported to the project's receiver (test/support/setup/receivers.ts), with a key. */
function otlpExport(address: (of: 'receiverUrl') => string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${address('receiverUrl')}/v1/traces`,
    OTEL_EXPORTER_OTLP_HEADERS: `x-otlp-key=${OTLP_KEY}`,
  };
}

/** Sign-in through the fake OpenID Connect provider; pve-admins are admitted. */
function oidcSignIn(address: (of: 'fakeIdpUrl') => string): Record<string, string> {
  return {
    AUTH_MODE: 'oauth',
    IDP: 'oidc',
    OIDC_ISSUER: `${address('fakeIdpUrl')}/oidc`,
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
      // policy API (test/support/worker/policy.ts). Proxmox behind Cloudflare Access, as with the
      // access-hostname topology: a service token is configured (its secret must never come back
      // out, test/secrets/fail-closed.worker.test.ts). Spans go to the receiver's OTLP path, but
      // only a client's sampled trace is recorded (none started here: the sampler's ratio is 0).
      workersProject(
        'worker',
        null,
        (address) => ({
          CF_ACCESS_CLIENT_ID: 'access-client.access',
          CF_ACCESS_CLIENT_SECRET: 'access-secret-0123456789abcdef',
          ...otlpExport(address),
          OTEL_TRACES_SAMPLER_ARG: '0',
        }),
        ['./test/support/setup/receivers.ts'],
      ),
      // Signed in through the development identity provider (OAuth): the sign-in itself, approvals
      // (page, conversation, quorums), commands inside guests, both MCP eras, and the policy's
      // versions, editors, shadow and replay. A deployment with POLICY set, as the other projects
      // are deployments without it: the policy store's tests read that text as version 1 (a
      // Durable Object reads the project's settings, so a file cannot deploy its own); the other
      // files put theirs in force as a policy editor. Its own setup adds the outbound probe: a
      // loopback trap for the OAuth library's fetches.
      workersProject(
        'signed-in',
        './test/support/policies/deployed.json',
        () => ({
          AUTH_MODE: 'oauth',
          IDP: 'dev',
          ALLOWED_USERS: 'alice@example.com',
          ALLOWED_GROUPS: 'ops,dev',
          ADMIN_USERS: 'admin@example.com',
          POLICY_EDITORS: 'editor@example.com,group:policy-editors',
        }),
        ['./test/support/setup/outbound-probe.ts'],
      ),
      // Approval notifications through the queue to a local receiver (its own global setup).
      workersProject(
        'notify',
        null,
        (address) => ({
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
              url: `${address('receiverUrl')}/json`,
              format: 'json',
              secret: NOTIFY_SECRET,
            },
            { name: 'slack', url: `${address('receiverUrl')}/slack`, format: 'slack' },
            { name: 'teams', url: `${address('receiverUrl')}/teams`, format: 'teams' },
            {
              name: 'flaky',
              url: `${address('receiverUrl')}/flaky`,
              events: ['approval.requested'],
            },
            {
              name: 'hang',
              url: `${address('receiverUrl')}/hang`,
              events: ['approval.requested'],
            },
          ]),
        }),
        ['./test/support/setup/receivers.ts'],
      ),
      // A sensitive value followed everywhere (the notify receivers' global setup), every call's
      // spans included (each recorded: the sampler's default ratio is 1).
      workersProject(
        'redaction',
        null,
        (address) => ({
          ...otlpExport(address),
          AUTH_MODE: 'oauth',
          IDP: 'dev',
          ALLOWED_GROUPS: 'ops',
          ADMIN_USERS: 'admin@example.com',
          POLICY_EDITORS: 'editor@example.com',
          APPROVAL_WEBHOOK_TIMEOUT_MS: '500',
          APPROVAL_WEBHOOKS: JSON.stringify(
            ['json', 'slack', 'teams'].map((format) => ({
              name: format,
              url: `${address('receiverUrl')}/${format}`,
              format,
            })),
          ),
        }),
        ['./test/support/setup/receivers.ts'],
      ),
      // Signed in through an OpenID Connect provider (the fake IdP): the sign-in itself, /health's
      // views and Proxmox probe, the Worker on public hostnames, and with PUBLIC_URL set (the
      // pages a person opens live on that origin only; test/app/public-url.oidc.test.ts). The
      // shipped policy.json, which lets the reads these call through.
      workersProject('oidc', null, (address) => ({
        ...oidcSignIn(address),
        ADMIN_USERS: 'lead@corp.example',
      })),
      // Two clusters, lab and prod (PVE_CLUSTERS; two clusters of the Worker's simulator, each
      // seeded alike, so the same vmid is on both), each with its own token secret variable; no
      // single-cluster settings. Signed in through the development identity provider.
      workersProject('clusters', null, (address) => ({
        ...labAndProd(address),
        AUTH_MODE: 'oauth',
        IDP: 'dev',
        ALLOWED_GROUPS: 'ops',
        ADMIN_USERS: 'admin@example.com',
        POLICY_EDITORS: 'editor@example.com',
      })),
      // Each person as themselves in Proxmox (PVE_IDENTITIES): alice's token (the lab pool only),
      // group ops' (bob's: every guest), no fallback, on the simulator's ACLs
      // (simulator/access/acl.ts). Signed in through the development identity provider; every
      // call allowed by the policy, so that Proxmox alone says what each may do.
      workersProject('identities', null, () => ({
        PVE_IDENTITIES: JSON.stringify([
          {
            match: 'alice@example.com',
            token_id: SIMULATOR_TOKENS.alice.id,
            token_secret_var: 'ALICE_TOKEN_SECRET',
          },
          {
            match: ['group:ops'],
            token_id: SIMULATOR_TOKENS.bob.id,
            token_secret_var: 'OPS_TOKEN_SECRET',
          },
          // Two an operator should hear of: a token that holds nothing, one that holds too much.
          {
            match: 'group:auditors',
            token_id: SIMULATOR_TOKENS.dave.id,
            token_secret_var: 'DAVE_TOKEN_SECRET',
          },
          {
            match: 'group:root',
            token_id: SIMULATOR_TOKENS.admin.id,
            token_secret_var: 'ROOT_TOKEN_SECRET',
          },
        ]),
        ALICE_TOKEN_SECRET: SIMULATOR_TOKENS.alice.secret,
        OPS_TOKEN_SECRET: SIMULATOR_TOKENS.bob.secret,
        DAVE_TOKEN_SECRET: SIMULATOR_TOKENS.dave.secret,
        ROOT_TOKEN_SECRET: SIMULATOR_TOKENS.admin.secret,
        POLICY: JSON.stringify({ version: '1', default: 'allow' }),
        AUTH_MODE: 'oauth',
        IDP: 'dev',
        ADMIN_USERS: 'admin@example.com',
        POLICY_EDITORS: 'editor@example.com',
      })),
      // Two clusters (as the clusters project's) where PVE_IDENTITIES names prod only: there,
      // group ops acts with bob's token and nobody else has one (no fallback); on lab, which it
      // does not name, everyone acts with the cluster's own token.
      workersProject('people-clusters', null, (address) => ({
        ...labAndProd(address),
        PVE_IDENTITIES: JSON.stringify({
          prod: [
            {
              match: 'group:ops',
              token_id: SIMULATOR_TOKENS.bob.id,
              token_secret_var: 'OPS_TOKEN_SECRET',
            },
          ],
        }),
        OPS_TOKEN_SECRET: SIMULATOR_TOKENS.bob.secret,
        POLICY: JSON.stringify({ version: '1', default: 'allow' }),
        AUTH_MODE: 'oauth',
        IDP: 'dev',
      })),
      workersProject('github', null, (address) => ({
        AUTH_MODE: 'oauth',
        IDP: 'github',
        GITHUB_CLIENT_ID: 'mcp-test-client',
        GITHUB_CLIENT_SECRET: 'mcp-test-secret',
        GITHUB_ORG: 'acme',
        GITHUB_URL: `${address('fakeIdpUrl')}/github`,
        GITHUB_API_URL: `${address('fakeIdpUrl')}/github-api`,
        ALLOWED_GROUPS: 'acme/ops',
      })),
      {
        test: {
          name: 'browser',
          environment: 'node',
          include: [filesOf('browser')],
          globalSetup: ['./test/support/setup/browser.ts'],
          testTimeout: 60_000,
          hookTimeout: 90_000,
        },
      },
      // The call seam on its own (calls/run-call) and the sign-in clients of the identity
      // providers (auth/idp-*): in Node, no workerd, against the simulator and the fake IdP. One
      // file at a time: the fake IdP's next sign-in and faults are one queue for all.
      {
        test: {
          name: 'serial',
          environment: 'node',
          fileParallelism: false,
          include: [filesOf('serial')],
          globalSetup: ['./test/support/setup/pve.ts', './test/support/setup/servers.ts'],
          testTimeout: 30_000,
        },
      },
      // Everything else runs in plain Node, with no Worker to start: pure functions of src/
      // (`x.test.ts`, typed as Worker code), and scripts, the simulator, the bundle and the import
      // graph (`x.node.test.ts`, which use Node's own modules). Files share the module cache.
      {
        test: {
          name: 'node',
          environment: 'node',
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...NAMED_PROJECTS.map(filesOf)],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
