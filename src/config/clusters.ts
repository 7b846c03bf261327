// The Proxmox clusters this server reaches: PVE_CLUSTERS (a JSON list, one entry per cluster,
// each reached its own way: a public hostname, perhaps behind Cloudflare Access, or a Workers VPC
// service binding), or the single-cluster settings (PVE_BASE_URL, PVE_TOKEN_ID, ...) as one
// cluster named `default`, so today's deployments run unchanged. Setting both is an error: which
// one was meant cannot be guessed. Secrets are never written in the JSON: an entry names the
// variable (a `wrangler secret`) that holds each one. The first cluster is the default.
// Pure; messages name settings and variables, never a value.

import { z } from 'zod';
import type { AppEnv } from '../env';
import type { PveClientConfig } from '../proxmox/client';
import type { SettingNames } from '../proxmox/errors';
import { clientConfig, type ClientSettings } from './parse';
import {
  LOOKS_LIKE_A_SECRET,
  OWN_SETTINGS,
  SINGLE_CLUSTER_SETTINGS,
  VAR_NAME_RE,
} from './own-settings';
import { CLUSTER_NAME_RE, DEFAULT_CLUSTER } from '../core/default-cluster';
import { entriesOfJson, secretValues } from './named-secrets';

/** One cluster: its name (a short slug, shown in messages and kept in the audit) and its client. */
export interface ClusterConfig {
  name: string;
  client: PveClientConfig;
  /** The VPC service binding it is reached through, if any (by its binding name). */
  vpcService: string | null;
}

export interface Clusters {
  /** In the order configured; the first is the default. */
  all: ClusterConfig[];
  /** Whether they come from PVE_CLUSTERS (false: the single-cluster settings, as `default`). */
  listed: boolean;
}

export { DEFAULT_CLUSTER };
/** More would not fit a tool's input schema, a message or a person's head. */
export const MAX_CLUSTERS = 16;

/** Of OWN_SETTINGS, those a cluster may name as its own (it then replaces the single cluster). */
const TAKEN_OVER = new Set(['PVE', 'PVE_TOKEN_SECRET', 'CF_ACCESS_CLIENT_SECRET']);

const varName = (what: string) =>
  z
    .string()
    .refine((name) => !LOOKS_LIKE_A_SECRET.test(name), {
      error: 'looks like a secret, not the name of the variable that holds it',
      abort: true,
    })
    .regex(VAR_NAME_RE, `must be the name of a ${what}, like PROD_TOKEN_SECRET`)
    .refine((name) => !OWN_SETTINGS.has(name) || TAKEN_OVER.has(name), {
      error: 'is a setting of this server of its own: name a variable of the cluster',
    });

const entrySchema = z.strictObject({
  name: z
    .string()
    .regex(CLUSTER_NAME_RE, 'must be a short slug: a-z first, then a-z, 0-9 or "-", 24 at most'),
  base_url: z.string().optional(),
  vpc_service: varName('VPC service binding declared in the Wrangler configuration').optional(),
  token_id: z.string(),
  token_secret_var: varName('secret variable'),
  access_client_id: z.string().optional(),
  access_secret_var: varName('secret variable').optional(),
  timeout_ms: z.number().int().min(100).max(120_000).optional(),
});
type Entry = z.output<typeof entrySchema>;

/** What an entry may not say, with what to do instead (checked before the shape). */
const REFUSED_KEYS: Readonly<Record<string, string>> = {
  token_secret:
    'is never read from PVE_CLUSTERS: put the secret in a variable (`wrangler secret put PROD_TOKEN_SECRET`) and name it in token_secret_var',
  access_client_secret:
    'is never read from PVE_CLUSTERS: put it in a variable and name it in access_secret_var',
  ca: "cannot be set in the Worker: a Worker's fetch trusts only public CAs. For a private CA, reach the cluster through a Workers VPC service created with --certificate-authority (wrangler vpc service create) and name its binding in vpc_service",
};

/** The clusters the environment configures, or every problem found with them. */
export function clustersConfig(env: AppEnv): Clusters | { error: string } {
  const text = env.PVE_CLUSTERS?.trim() ?? '';
  const timeout = env.PVE_TIMEOUT_MS;
  if (!text) {
    const single = clientConfig(singleSettings(env, timeout));
    if ('error' in single) return single;
    return {
      all: [
        {
          name: DEFAULT_CLUSTER,
          client: single,
          vpcService: env.PVE ? 'PVE' : null,
        },
      ],
      listed: false,
    };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { error: 'PVE_CLUSTERS is not JSON: it must be a list of clusters, [{ "name": ... }]' };
  }
  const problems: string[] = [];
  const entries = entriesOf(document, problems);
  // What a cluster names (its binding, its secrets' variables) is its own, whatever it is called.
  const named = new Set(
    entries.flatMap((e) =>
      [e.vpc_service, e.token_secret_var, e.access_secret_var].filter((n) => n !== undefined),
    ),
  );
  const both: string[] = SINGLE_CLUSTER_SETTINGS.filter(
    (name) => !named.has(name) && (env[name] ?? '').trim() !== '',
  );
  if (env.PVE && !named.has('PVE')) both.push('the PVE binding');
  if (both.length)
    problems.push(
      `set PVE_CLUSTERS or the single-cluster settings, not both: remove ${both.join(', ')} (a cluster of PVE_CLUSTERS names its own URL, token and secrets)`,
    );
  const all: ClusterConfig[] = [];
  for (const entry of entries) {
    const client = clientConfig(entrySettings(env, entry, timeout, problems));
    // (An empty error: what is wrong is already said, a named secret that is not set.)
    if ('error' in client) problems.push(...client.error.split('; ').filter(Boolean));
    else
      all.push({
        name: entry.name,
        client: { ...client, names: settingNames(entry) },
        vpcService: entry.vpc_service ?? null,
      });
  }
  // One bad PVE_TIMEOUT_MS is said once, not once per cluster.
  if (problems.length) return { error: [...new Set(problems)].join('; ') };
  return { all, listed: true };
}

/** The entries of a PVE_CLUSTERS document that have the right shape; the rest become problems. */
function entriesOf(document: unknown, problems: string[]): Entry[] {
  if (!Array.isArray(document) || document.length === 0) {
    problems.push('PVE_CLUSTERS must be a non-empty list of clusters, [{ "name": ... }]');
    return [];
  }
  if (document.length > MAX_CLUSTERS) {
    problems.push(`PVE_CLUSTERS lists ${document.length} clusters; at most ${MAX_CLUSTERS}`);
    return [];
  }
  const entries: Entry[] = [];
  const seen = new Set<string>();
  document.forEach((raw, i) => {
    const where = `PVE_CLUSTERS[${i}]`;
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
      for (const [key, why] of Object.entries(REFUSED_KEYS))
        if (Object.hasOwn(raw, key)) problems.push(`${where}.${key} ${why}`);
    }
    const parsed = entrySchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const text = issueText(where, issue);
        if (text) problems.push(text);
      }
      return;
    }
    const entry = parsed.data;
    if (seen.has(entry.name)) {
      problems.push(`${where}.name: "${entry.name}" names two clusters; each name once`);
      return;
    }
    seen.add(entry.name);
    if (entry.base_url === undefined && entry.vpc_service === undefined)
      problems.push(`${where} ("${entry.name}"): set base_url, vpc_service, or both`);
    else entries.push(entry);
  });
  return entries;
}

/** An issue as a message: where, and what is allowed (never the value given). */
function issueText(where: string, issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.filter((k) => !Object.hasOwn(REFUSED_KEYS, k));
    if (!keys.length) return '';
    return `${where}: unknown ${keys.length > 1 ? 'keys' : 'key'} ${keys.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}; allowed: ${Object.keys(entrySchema.shape).join(', ')}`;
  }
  const at = issue.path.length ? `.${issue.path.join('.')}` : '';
  const message =
    issue.code === 'invalid_type'
      ? `must be ${issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}`
      : issue.message;
  return `${where}${at} ${message}`;
}

function singleSettings(env: AppEnv, timeout: string | undefined): ClientSettings {
  return {
    names: {
      baseUrl: 'PVE_BASE_URL',
      tokenId: 'PVE_TOKEN_ID',
      tokenSecret: 'PVE_TOKEN_SECRET',
      accessId: 'CF_ACCESS_CLIENT_ID',
      accessSecret: 'CF_ACCESS_CLIENT_SECRET',
      binding: 'PVE service binding',
    },
    baseUrl: env.PVE_BASE_URL,
    tokenId: env.PVE_TOKEN_ID,
    tokenSecret: env.PVE_TOKEN_SECRET,
    accessId: env.CF_ACCESS_CLIENT_ID,
    accessSecret: env.CF_ACCESS_CLIENT_SECRET,
    binding: env.PVE,
    timeoutMs: timeout,
  };
}

function entrySettings(
  env: AppEnv,
  entry: Entry,
  timeout: string | undefined,
  problems: string[],
): ClientSettings {
  const where = `PVE_CLUSTERS "${entry.name}"`;
  const variables = env as unknown as Record<string, unknown>;
  const reported = new Set<'tokenSecret' | 'accessSecret'>();
  const secret = (
    name: string | undefined,
    field: 'tokenSecret' | 'accessSecret',
  ): string | undefined => {
    if (name === undefined) return undefined;
    const value = variables[name];
    if (typeof value === 'string' && value.trim() !== '') return value;
    reported.add(field);
    problems.push(
      `${where}: ${field === 'tokenSecret' ? 'token_secret_var' : 'access_secret_var'} names ${name}, which is not set (\`wrangler secret put ${name}\`)`,
    );
    return undefined;
  };
  let binding: PveClientConfig['binding'];
  if (entry.vpc_service !== undefined) {
    const bound = variables[entry.vpc_service] as { fetch?: unknown } | undefined;
    if (bound && typeof bound.fetch === 'function') binding = bound as PveClientConfig['binding'];
    else
      problems.push(
        `${where}: vpc_service names ${entry.vpc_service}, which is not a binding of this Worker (declare it under vpc_services in the Wrangler configuration)`,
      );
  }
  return {
    names: {
      baseUrl: `${where} base_url`,
      tokenId: `${where} token_id`,
      tokenSecret: `${where} token_secret_var (${entry.token_secret_var})`,
      accessId: `${where} access_client_id`,
      accessSecret: `${where} access_secret_var`,
      binding: `${where} vpc_service`,
    },
    baseUrl: entry.base_url,
    tokenId: entry.token_id,
    tokenSecret: secret(entry.token_secret_var, 'tokenSecret'),
    accessId: entry.access_client_id,
    accessSecret: secret(entry.access_secret_var, 'accessSecret'),
    binding,
    // A cluster's own deadline, else PVE_TIMEOUT_MS, else the default.
    timeoutMs: entry.timeout_ms !== undefined ? String(entry.timeout_ms) : timeout,
    // A secret variable named but not set is said once, above.
    reported,
  };
}

/** How messages about a cluster's answers name its settings (cluster prod's token_id, ...). */
function settingNames(entry: Entry): SettingNames {
  const its = `cluster ${entry.name}'s`;
  return {
    baseUrl: `${its} base_url`,
    // (Not its value: these messages reach agents, and the token id names a Proxmox user.)
    tokenId: `${its} token_id`,
    tokenSecret: entry.token_secret_var,
    accessId: `${its} access_client_id`,
    accessSecret: entry.access_secret_var ?? `${its} access_secret_var`,
  };
}

/** The values of every secret variable PVE_CLUSTERS names: the scrubber removes them. */
export function clusterSecrets(env: AppEnv): string[] {
  const named = entriesOfJson(env.PVE_CLUSTERS, false).flatMap((e) => [
    e.token_secret_var,
    e.access_secret_var,
  ]);
  // Only what a cluster may name: never PUBLIC_URL or another of the server's own settings.
  return secretValues(env, named, TAKEN_OVER);
}
