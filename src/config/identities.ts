// Each person as themselves in Proxmox: PVE_IDENTITIES maps the people who sign in to Proxmox API
// tokens, so that Proxmox's own permissions (pools, roles, ACLs, privilege-separated tokens) are
// a second fence behind the policy, and Proxmox's task log names the person's token. A JSON list
// of entries `{ match, token_id, token_secret_var }` (match: a user id, an email or `group:<name>`,
// or a list of them, as policy principals match), the first that matches a person wins, and one
// `{ fallback: true, token_id, token_secret_var }` may name a token for everyone else; without one,
// a person who matches nothing is refused before anything is sent. Where the server reaches
// several clusters, an object by cluster name, each a list; a cluster it does not name uses its
// own token for everyone, as without PVE_IDENTITIES. Secrets are named by variable, never written
// here. Pure; messages name settings and variables, never a value.

import { z } from 'zod';
import type { AppEnv } from '../env';
import { matchesPrincipal, type PersonFacts } from '../core/identity';
import { MIN_SECRET_LENGTH } from '../secrets/needles';
import { entriesOfJson, secretValues } from './named-secrets';
import { LOOKS_LIKE_A_SECRET, OWN_SETTINGS, SECRET_KEYS, VAR_NAME_RE } from './own-settings';

/** A Proxmox token a person's calls use: its id and the secret's variable and value. */
export interface MappedToken {
  tokenId: string;
  secretVar: string;
  secret: string;
}

/** One cluster's mapping: the entries in order, and the token for everyone else, if any. */
export interface IdentityMap {
  entries: { match: string[]; token: MappedToken }[];
  fallback: MappedToken | null;
}

/** The distinct tokens a cluster's mapping names (the fallback's too), each once. */
export function tokensOf(map: IdentityMap): MappedToken[] {
  const tokens = new Map<string, MappedToken>();
  for (const token of [...map.entries.map((e) => e.token), ...(map.fallback ? [map.fallback] : [])])
    tokens.set(token.tokenId, token);
  return [...tokens.values()];
}

/** By cluster name; a cluster not here uses its own token for everyone. */
export type Identities = ReadonlyMap<string, IdentityMap>;

/** As PVE's token ids: user@realm!tokenid, the user part perhaps an email (an OIDC realm's). */
const TOKEN_ID_RE = /^[^\s:/!=]+@[A-Za-z][A-Za-z0-9.\-_]*![A-Za-z][A-Za-z0-9.\-_]*$/;
/** What `match` may hold: a user id, an email or group:<name>, never scope: (no token matters). */
const MATCH_RE = /^(?!scope:)[^\s,]{1,200}$/;
export const MAX_IDENTITIES = 200;

const secretVar = z
  .string()
  .refine((name) => !LOOKS_LIKE_A_SECRET.test(name), {
    error: 'looks like a secret, not the name of the variable that holds it',
    abort: true,
  })
  .regex(VAR_NAME_RE, 'must be the name of a secret variable, like ALICE_TOKEN_SECRET')
  .refine((name) => !OWN_SETTINGS.has(name), {
    error: 'is a setting of this server of its own: name a variable of the token',
  });
const tokenId = z.string().regex(TOKEN_ID_RE, 'must look like user@realm!tokenid');
const matchOne = z
  .string()
  .regex(MATCH_RE, 'must be a user id, an email or group:<name>, without spaces or commas');

const matchedSchema = z.strictObject({
  match: z.union([matchOne, z.array(matchOne).min(1).max(50)]),
  token_id: tokenId,
  token_secret_var: secretVar,
});
const fallbackSchema = z.strictObject({
  fallback: z.literal(true),
  token_id: tokenId,
  token_secret_var: secretVar,
});
/** An entry with `fallback` is the fallback; any other, a matched one (its errors then said). */
const entrySchema = {
  safeParse: (raw: unknown) =>
    raw && typeof raw === 'object' && 'fallback' in raw
      ? fallbackSchema.safeParse(raw)
      : matchedSchema.safeParse(raw),
};
const listSchema = z.array(z.unknown()).min(1).max(MAX_IDENTITIES);

/** The mapping PVE_IDENTITIES sets, null without it, or every problem found with it. */
export function identitiesConfig(
  env: AppEnv,
  clusters: readonly string[],
): Identities | null | { error: string } {
  const text = env.PVE_IDENTITIES?.trim() ?? '';
  if (!text) return null;
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { error: 'PVE_IDENTITIES is not JSON: a list of { match, token_id, token_secret_var }' };
  }
  const problems: string[] = [];
  const byCluster = new Map<string, IdentityMap>();
  if (Array.isArray(document)) {
    if (clusters.length > 1)
      problems.push(
        `PVE_IDENTITIES must name the cluster of each list where the server reaches several: { ${clusters.map((c) => `"${c}": [...]`).join(', ')} }`,
      );
    else byCluster.set(clusters[0]!, mapOf(env, document, 'PVE_IDENTITIES', problems));
  } else if (document && typeof document === 'object') {
    for (const [cluster, list] of Object.entries(document)) {
      if (!clusters.includes(cluster)) {
        problems.push(
          `PVE_IDENTITIES names the cluster ${JSON.stringify(cluster.slice(0, 24))}, which the server does not reach (it reaches ${clusters.join(', ')})`,
        );
        continue;
      }
      byCluster.set(cluster, mapOf(env, list, `PVE_IDENTITIES.${cluster}`, problems));
    }
  } else problems.push('PVE_IDENTITIES must be a list of { match, token_id, token_secret_var }');
  return problems.length ? { error: [...new Set(problems)].join('; ') } : byCluster;
}

/** One cluster's list, its problems added to `problems`. */
function mapOf(env: AppEnv, list: unknown, where: string, problems: string[]): IdentityMap {
  const map: IdentityMap = { entries: [], fallback: null };
  const parsed = listSchema.safeParse(list);
  if (!parsed.success) {
    problems.push(`${where} must be a list of 1 to ${MAX_IDENTITIES} entries`);
    return map;
  }
  const seen = new Map<string, number>();
  parsed.data.forEach((raw, i) => {
    const at = `${where}[${i}]`;
    if (raw && typeof raw === 'object')
      for (const key of SECRET_KEYS)
        if (Object.hasOwn(raw, key))
          problems.push(
            `${at}.${key}: a secret is never written here; name its variable in token_secret_var`,
          );
    const entry = entrySchema.safeParse(raw);
    if (!entry.success) {
      problems.push(`${at}: ${issueText(entry.error)}`);
      return;
    }
    const token = mappedToken(env, entry.data, at, problems);
    if ('fallback' in entry.data) {
      if (map.fallback || i !== parsed.data.length - 1)
        problems.push(`${at}: one fallback at most, and last (the first match wins)`);
      if (token) map.fallback = token;
      return;
    }
    const match = [entry.data.match].flat();
    for (const m of match) {
      // An email in any case is the same person; user ids and groups are as written.
      const key = m.includes('@') && !m.startsWith('group:') ? m.toLowerCase() : m;
      const earlier = seen.get(key);
      if (earlier !== undefined)
        problems.push(`${at}: ${JSON.stringify(m)} is matched by ${where}[${earlier}] already`);
      else seen.set(key, i);
    }
    if (token) map.entries.push({ match, token });
  });
  return map;
}

function mappedToken(
  env: AppEnv,
  entry: { token_id: string; token_secret_var: string },
  at: string,
  problems: string[],
): MappedToken | null {
  const value = (env as unknown as Record<string, unknown>)[entry.token_secret_var];
  if (typeof value !== 'string' || value.trim() === '') {
    problems.push(
      `${at}: token_secret_var names ${entry.token_secret_var}, which is not set (\`wrangler secret put ${entry.token_secret_var}\`)`,
    );
    return null;
  }
  // Shorter, the scrubber would not remove it (secrets/needles.ts).
  if (value.trim().length < MIN_SECRET_LENGTH) {
    problems.push(`${at}: ${entry.token_secret_var} is too short to be a token secret`);
    return null;
  }
  if (/[\s=]/.test(value.trim())) {
    problems.push(`${at}: ${entry.token_secret_var} contains spaces or "="`);
    return null;
  }
  return { tokenId: entry.token_id, secretVar: entry.token_secret_var, secret: value.trim() };
}

/** The first issue's path and message (never the value given). */
function issueText(error: z.ZodError): string {
  const issue = error.issues[0]!;
  if (issue.code === 'unrecognized_keys')
    return `unknown key ${issue.keys.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}: an entry is { match, token_id, token_secret_var } or { fallback: true, token_id, token_secret_var }`;
  if (issue.code === 'invalid_type' && issue.path.length === 0)
    return 'must be { match, token_id, token_secret_var } or { fallback: true, token_id, token_secret_var }';
  const at = issue.path.length ? `${issue.path.join('.')} ` : '';
  return `${at}${issue.message}`;
}

/**
 * The token `who` acts with on `cluster`: their entry's, else the fallback; undefined when the
 * cluster has no mapping (its own token, as without PVE_IDENTITIES); null when they match nothing
 * and there is no fallback.
 */
export function tokenFor(
  identities: Identities | null,
  cluster: string,
  who: PersonFacts,
): MappedToken | null | undefined {
  const map = identities?.get(cluster);
  if (!map) return undefined;
  const found = map.entries.find((entry) => entry.match.some((m) => matchesPrincipal(m, who)));
  return found?.token ?? map.fallback;
}

/**
 * The values of every secret variable PVE_IDENTITIES names, however wrong the rest of it is: the
 * scrubber removes them (never a value of the server's own settings).
 */
export function identitySecrets(env: AppEnv): string[] {
  const named = entriesOfJson(env.PVE_IDENTITIES, true).map((e) => e.token_secret_var);
  return secretValues(env, named);
}
