// What the policy store (./policy-store.ts) keeps and answers: numbered versions of the policy,
// which one is active, which one (if any) runs in shadow beside it, and what changed when.

/** One stored version, without its text. */
export interface PolicyVersionMeta {
  version: number;
  /** SHA-256 (hex) of the text exactly as stored. */
  sha256: string;
  /** Who added it: a person's email or user id, or `deploy` for a POLICY or policy.json seeded by a deploy. */
  author: string;
  /** Epoch ms. */
  created: number;
  comment: string;
  /** The version that was active when this one was added (null for the first). */
  replaces: number | null;
}

export interface PolicyVersion extends PolicyVersionMeta {
  text: string;
}

/** What the policy store says to an isolate that checks whether its policy is still the one. */
export interface PolicyHead {
  /** Goes up by one with every activation and every shadow change: an isolate compares it. */
  generation: number;
  /** The active version, with its text unless the isolate already holds this generation. */
  active: PolicyVersionRef | null;
  shadow: PolicyVersionRef | null;
  /** Why the deployed policy was not stored (it fails the checks); the active version stays. */
  deployProblems?: string[];
  /** The store has not seen the deployed policy (by its hash): ask again with its text. */
  needsDeployText?: true;
}

export interface PolicyVersionRef {
  version: number;
  sha256: string;
  /** Absent when the isolate already holds this generation (nothing to load again). */
  text?: string;
}

export type PolicyAction = 'add' | 'activate' | 'shadow_start' | 'shadow_stop' | 'deploy';

/** A change to the policy: who did what to which version, and why. */
export interface PolicyEvent {
  id: number;
  ts: number;
  actor: string;
  action: PolicyAction;
  version: number | null;
  comment: string;
  /** True when the editor overrode the check of which version was active (`policy push --force`). */
  forced?: boolean;
}

import type { ShadowDisagreement } from '../policy/shadow';

export type { ShadowDisagreement };

export interface PolicyOverview {
  generation: number;
  active: PolicyVersionMeta | null;
  shadow: (PolicyVersionMeta & { since: number; disagreements: number }) | null;
  /** Newest first. */
  versions: PolicyVersionMeta[];
  /** Newest first. */
  events: PolicyEvent[];
  /** Why the last deployed POLICY or policy.json was not stored, if it was not. */
  deployProblems: string[] | null;
}

/** What an editor asks the store to do with a new version. */
export interface NewVersion {
  text: string;
  author: string;
  comment: string;
  activate?: boolean;
  shadow?: boolean;
  /**
   * The active version the editor saw when writing the draft: if another has been activated
   * since, the change is refused (409), so nobody's edit silently replaces someone else's.
   */
  base?: number;
  /** Written without a base, on purpose: recorded on the change's event as forced. */
  forced?: boolean;
}

/**
 * Who changes which version is active or in shadow, why, and when; and the active version they
 * saw (`base`: another activated since refuses the change, 409) or `forced`, on purpose.
 */
export interface ChangeBy {
  actor: string;
  comment: string;
  now: number;
  base?: number;
  forced?: boolean;
}

export type StoreAnswer<T> =
  | { ok: true; value: T }
  | { ok: false; status: 400 | 404 | 409; problems: string[] };

/** The policy's versions, the active and the shadow one, and their history (./policy-store.ts, which implements it). */
export interface PolicyStoreObject {
  head(
    deployed: { sha256: string; text?: string },
    known: number | null,
    now: number,
  ): Promise<PolicyHead>;
  overview(): PolicyOverview;
  get(version: number): PolicyVersion | null;
  add(
    input: NewVersion,
    now: number,
  ): Promise<StoreAnswer<{ version: number; event: PolicyEvent }>>;
  activate(version: number, by: ChangeBy): StoreAnswer<{ event: PolicyEvent }>;
  shadow(version: number | null, by: ChangeBy): StoreAnswer<{ event: PolicyEvent }>;
  recordDisagreement(d: ShadowDisagreement): void;
  disagreements(version: number, limit: number): ShadowDisagreement[];
}
