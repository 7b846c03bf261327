// The active policy: the POLICY variable (JSON text) when set, else the bundled policy.json,
// loaded against the tools this server offers. Loaded once per distinct text; a broken policy
// is kept as its errors, so that every call is denied and /health can say why.

import bundled from '../../policy.json';
import { loadPolicy, type CompiledPolicy, type PolicyError, type ToolCatalog } from './load';

export type PolicyOrigin = 'POLICY' | 'policy.json';

/**
 * The policy in force, with its text as given (POLICY's own text; the bundled file written out
 * with two-space indents): what /admin shows and fingerprints. A broken one keeps its errors.
 */
export type ActivePolicy =
  | { ok: true; origin: PolicyOrigin; policy: CompiledPolicy; text: string }
  | { ok: false; origin: PolicyOrigin; errors: PolicyError[]; text: string };

let cached: { text: string | undefined; catalog: ToolCatalog; active: ActivePolicy } | undefined;

export function activePolicy(text: string | undefined, catalog: ToolCatalog): ActivePolicy {
  if (cached && cached.text === text && cached.catalog === catalog) return cached.active;
  const origin: PolicyOrigin = text === undefined || text.trim() === '' ? 'policy.json' : 'POLICY';
  let active: ActivePolicy;
  if (origin === 'policy.json') {
    active = withOrigin(loadPolicy(bundled, catalog), origin, JSON.stringify(bundled, null, 2));
  } else {
    let document: unknown;
    try {
      document = JSON.parse(text!) as unknown;
      active = withOrigin(loadPolicy(document, catalog), origin, text!);
    } catch (err) {
      active = {
        ok: false,
        origin,
        text: text!,
        errors: [
          {
            pointer: '',
            message: `POLICY is not valid JSON: ${err instanceof Error ? err.message : 'parse error'}`,
          },
        ],
      };
    }
  }
  cached = { text, catalog, active };
  return active;
}

function withOrigin(
  result: ReturnType<typeof loadPolicy>,
  origin: PolicyOrigin,
  text: string,
): ActivePolicy {
  return result.ok
    ? { ok: true, origin, policy: result.policy, text }
    : { ok: false, origin, errors: result.errors, text };
}
