// The policy in force, as a call, a page or /health sees it. The policy store
// (../policy-store/) holds its versions; the deployed policy (the POLICY variable when set, else
// the bundled policy.json) seeds it. A broken policy is kept as its errors, so that every call is
// denied and /health can say why.

import bundled from '../../policy.json';
import type { CompiledPolicy, PolicyError } from './load';

/** Where the deployed policy comes from. */
export type PolicyOrigin = 'POLICY' | 'policy.json';

/** Which policy decided: its version in the store (null before the store has one) and its hash. */
export interface PolicyVersionTag {
  origin: PolicyOrigin;
  version: number | null;
  sha256: string | null;
}

export type ActivePolicy =
  | (PolicyVersionTag & {
      ok: true;
      policy: CompiledPolicy;
      /** Its text as stored (what /admin shows and fingerprints). */
      text: string;
      /** A candidate evaluated beside it on live calls, never enforced. */
      shadow?: { version: number; policy: CompiledPolicy };
    })
  /**
   * No policy can decide: a broken one (its errors, and its text as given, for the people who
   * must fix it), or, with `unavailable`, a policy store that did not answer in time.
   */
  | (PolicyVersionTag & { ok: false; errors: PolicyError[]; text: string; unavailable?: true });

/** The deployed policy's origin and text (policy.json as pretty JSON). */
export function deployedPolicy(policyVariable: string | undefined): {
  origin: PolicyOrigin;
  text: string;
} {
  return policyVariable === undefined || policyVariable.trim() === ''
    ? { origin: 'policy.json', text: JSON.stringify(bundled, null, 2) }
    : { origin: 'POLICY', text: policyVariable };
}

/** How a policy is named to people: "version 3", or where it was deployed from. */
export function policyLabel(tag: PolicyVersionTag): string {
  return tag.version === null ? tag.origin : `version ${tag.version}`;
}
