// The environment, parsed once into a checked configuration: every variable the Worker reads
// becomes a typed value, or a problem that says what to fix. Parsed once per environment object
// (an isolate keeps its env; the per-request copies the OAuth library needs share the parse).

import type { AppEnv } from '../env';
import type { PveClientConfig } from '../proxmox/client';
import { notifyTargets, type NotifyTarget } from '../notify/targets';
import { kept } from '../core/kept';
import { intSetting } from '../core/settings';
import { listSetting } from './lists';
import { signInSettings, type SignInSettings } from './sign-in';
import {
  approvalTtlMs,
  auditEnabled,
  auditLimits,
  authMode,
  configuredSecrets,
  corsOrigins,
  type AuthMode,
} from './parse';
import { clusterSecrets, clustersConfig, DEFAULT_CLUSTER, type Clusters } from './clusters';
import { type Identities, identitiesConfig, identitySecrets } from './identities';
import { type TracingSettings, tracingSecrets, tracingSettings } from './tracing';

export type { AuthMode };
export type { GithubSettings, IdpKind, IdpSettings, OidcSettings, SignInSettings } from './sign-in';

export interface Config {
  authMode: AuthMode | { error: string };
  /** The clusters (PVE_CLUSTERS, or the single-cluster settings as `default`), or what is wrong. */
  clusters: Clusters | { error: string };
  /** The default cluster's client: the first cluster's. */
  pve: PveClientConfig | { error: string };
  /** PVE_IDENTITIES: each person's Proxmox token, by cluster (null: the cluster's own for all). */
  identities: Identities | null | { error: string };
  audit: { enabled: boolean; retentionDays: number; maxRows: number };
  approvals: { ttlMs: number };
  /** ADMIN_USERS (ids or emails) and ADMIN_GROUPS. */
  admins: { users: string[]; groups: string[] };
  /** POLICY_EDITORS: who may change the policy (ids, emails and `group:<name>` entries). */
  editors: string[];
  /** APPROVAL_WEBHOOKS: who hears of approvals; APPROVAL_WEBHOOK_TIMEOUT_MS: one delivery's deadline. */
  notify: { targets: NotifyTarget[]; timeoutMs: number };
  /** OTEL_EXPORTER_OTLP_*: where the server's spans go; null: none is recorded. */
  tracing: TracingSettings | null;
  /** AUTH_MODE=none: browser origins allowed cross-origin. */
  corsOrigins: string[];
  /** What the scrubber removes wherever upstream text goes. */
  secrets: string[];
  /** The identity provider, who is admitted, PUBLIC_URL. */
  signIn: SignInSettings;
  /** The POLICY variable (JSON text), or undefined: the bundled policy.json. */
  policyText: string | undefined;
  /** Bindings a deploy configuration may leave out (typed as present, but absent then). */
  bindings: { oauthKv: boolean; notifyQueue: boolean };
  /**
   * Settings with a value that cannot be used, each replaced by its default (or dropped): /health
   * lists them. (A missing or broken auth mode or Proxmox connection is fatal instead: see above.)
   */
  problems: {
    setting: 'audit' | 'approvals' | 'cors' | 'notify' | 'tracing';
    message: string;
  }[];
}

const parsed = new WeakMap<object, Config>();

export function configOf(env: AppEnv): Config {
  return kept(parsed, env, () => parse(env));
}

export { listSetting } from './lists';

function parse(env: AppEnv): Config {
  const audit: string[] = [];
  const approvals: string[] = [];
  const cors: string[] = [];
  const notify: string[] = [];
  const tracing: string[] = [];
  const mode = authMode(env);
  const signIn = signInSettings(env);
  const clusters = clustersConfig(env);
  // Receivers (approval webhooks, an OTLP collector) on loopback only where the server answers
  // loopback alone (the door in ../app/app.ts): it runs on a developer's machine, and the
  // receiver is theirs.
  const localDevelopment = mode === 'none' || (mode === 'oauth' && signIn.idpKind === 'dev');
  const config: Config = {
    authMode: mode,
    clusters,
    pve: 'error' in clusters ? clusters : clusters.all[0]!.client,
    identities: identitiesConfig(
      env,
      'error' in clusters ? [DEFAULT_CLUSTER] : clusters.all.map((c) => c.name),
    ),
    audit: { enabled: auditEnabled(env, audit), ...auditLimits(env, audit) },
    approvals: { ttlMs: approvalTtlMs(env, approvals) },
    admins: { users: listSetting(env.ADMIN_USERS), groups: listSetting(env.ADMIN_GROUPS) },
    editors: listSetting(env.POLICY_EDITORS),
    notify: {
      targets: notifyTargets(env.APPROVAL_WEBHOOKS, notify, { localDevelopment }),
      timeoutMs: intSetting(
        env.APPROVAL_WEBHOOK_TIMEOUT_MS,
        'APPROVAL_WEBHOOK_TIMEOUT_MS',
        5_000,
        100,
        30_000,
        notify,
      ),
    },
    tracing: tracingSettings(env, tracing, { localDevelopment }),
    corsOrigins: corsOrigins(listSetting(env.CORS_ORIGINS), cors),
    secrets: [...configuredSecrets(env), ...clusterSecrets(env), ...identitySecrets(env)],
    signIn,
    policyText: env.POLICY,
    bindings: {
      oauthKv: Boolean((env as Partial<AppEnv>).OAUTH_KV),
      notifyQueue: Boolean(env.NOTIFY_QUEUE),
    },
    problems: [],
  };
  // A receiver's address can be its credential (Slack, Teams), and its signing secret is one.
  config.secrets = [
    ...config.secrets,
    ...config.notify.targets.flatMap((t) => [t.url, ...(t.secret ? [t.secret] : [])]),
    ...tracingSecrets(env, config.tracing),
  ];
  config.problems = [
    ...audit.map((message) => ({ setting: 'audit' as const, message })),
    ...approvals.map((message) => ({ setting: 'approvals' as const, message })),
    ...cors.map((message) => ({ setting: 'cors' as const, message })),
    ...notify.map((message) => ({ setting: 'notify' as const, message })),
    ...tracing.map((message) => ({ setting: 'tracing' as const, message })),
  ];
  return config;
}
