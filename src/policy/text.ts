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

export function checkPolicyText(text: string, catalog: ToolCatalog): CheckedPolicy {
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
  return loadPolicy(document, catalog);
}

/** How many lines a text has, as an editor numbers them: a final line break starts none. */
export function countLines(text: string): number {
  let breaks = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) breaks++;
  return text === '' || text.endsWith('\n') ? breaks : breaks + 1;
}
