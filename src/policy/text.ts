// A policy as text (the POLICY variable, policy.json, a version an editor submits): parsed as
// JSON and checked against the tools this server offers, exactly as `npm run policy -- check`
// checks a file. One function, so that what the store accepts and what the checker passes agree.

import {
  type CompiledPolicy,
  loadPolicy,
  type PolicyError,
  type PolicyWarning,
  type ToolCatalog,
} from './load';

/** The most policy text a version may hold: far above a real policy, far below a store's row. */
export const MAX_POLICY_BYTES = 256 * 1024;
/**
 * The most lines a version may hold: the bytes alone would let 256 KiB of line breaks (valid
 * JSON) through, and the console diffs versions line by line. A 10,000-line policy passes.
 */
export const MAX_POLICY_LINES = 20_000;

export type CheckedPolicy =
  | { ok: true; policy: CompiledPolicy; warnings: PolicyWarning[] }
  | { ok: false; errors: PolicyError[] };

/**
 * `clusters`: the names of the clusters the server reaches, where known (the console, the policy
 * API, the CLI given PVE_CLUSTERS): a rule on `args.cluster` or `target.cluster` naming another is
 * a warning, not an error, so that a policy can be written before its cluster is added.
 */
export function checkPolicyText(
  text: string,
  catalog: ToolCatalog,
  clusters?: readonly string[],
): CheckedPolicy {
  if (new TextEncoder().encode(text).length > MAX_POLICY_BYTES)
    return {
      ok: false,
      errors: [
        { pointer: '', message: `the policy is larger than ${MAX_POLICY_BYTES / 1024} KiB` },
      ],
    };
  const lines = countLines(text);
  if (lines > MAX_POLICY_LINES)
    return {
      ok: false,
      errors: [
        {
          pointer: '',
          message: `the policy has ${lines.toLocaleString('en-US')} lines; at most ${MAX_POLICY_LINES.toLocaleString('en-US')}`,
        },
      ],
    };
  let document: unknown;
  try {
    document = JSON.parse(text) as unknown;
  } catch (err) {
    return {
      ok: false,
      errors: [
        {
          pointer: '',
          message: `not valid JSON: ${err instanceof Error ? err.message : 'parse error'}`,
        },
      ],
    };
  }
  const loaded = loadPolicy(document, catalog);
  if (!loaded.ok || !clusters) return loaded;
  return { ...loaded, warnings: [...loaded.warnings, ...unknownClusters(document, clusters)] };
}

/**
 * Every rule on the cluster (a condition or a `when`) and every limit for some clusters that
 * names one the server does not reach.
 */
function unknownClusters(document: unknown, clusters: readonly string[]): PolicyWarning[] {
  const out: PolicyWarning[] = [];
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${at}/${i}`);
      return;
    }
    if (!value || typeof value !== 'object') return;
    const rule = value as Record<string, unknown>;
    // A condition on the cluster, or a limit for some clusters.
    const where =
      rule.path === 'args.cluster' || rule.path === 'target.cluster'
        ? 'value'
        : typeof rule.counter === 'string' && rule.cluster !== undefined
          ? 'cluster'
          : null;
    if (where) {
      const unknown = [rule[where]]
        .flat()
        .filter((n) => typeof n === 'string' && !clusters.includes(n));
      if (unknown.length)
        out.push({
          pointer: `${at}/${where}`,
          message: `${unknown.map((n) => JSON.stringify(n)).join(', ')}: no cluster of this server is named so (it reaches ${clusters.join(', ')}); the rule never matches it until one is`,
        });
    }
    for (const [key, v] of Object.entries(rule))
      walk(v, `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  };
  walk(document, '');
  return out;
}

/** How many lines a text has, as an editor numbers them: a final line break starts none. */
export function countLines(text: string): number {
  let breaks = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) breaks++;
  return text === '' || text.endsWith('\n') ? breaks : breaks + 1;
}
