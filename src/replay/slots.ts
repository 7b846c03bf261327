// Rate-limit slots for a replay, in memory, counted where the live store counts them: per scope
// object (counterObjectName; a session's own, or for a client without sessions the grant's, as
// compose/call-host.ts keeps them) and readingKey. A slot is sure when the candidate allows the call
// and it is no preview; it is only maybe taken when the record cannot tell (the call's decision,
// or whether it was a preview, is unknown). A call only maybe slots would refuse is unknown too:
// which calls those earlier unknowns let through is exactly what the replay cannot say.

import { counterObjectName } from '../counters/reserve';
import type { Identity } from '../core/identity';
import {
  checkLimits,
  readingKey,
  type AppliedLimit,
  type CounterReadings,
  type LimitedDecision,
} from '../policy/evaluate';
import type { UnknownValue } from '../policy/unknown';

/** The MCP session a record names when its client had none (mcp/modern/handler.ts). */
const STATELESS = 'stateless';

/** What an unknown decision depends on when it is the calls before it (their slots). */
export const EARLIER_CALLS = '(earlier calls whose decision is unknown)';

/** Whose slots: the caller, and the session the record names. */
export interface SlotOwner {
  identity: Identity;
  session: string;
}

export type SlotAnswer =
  | { kind: 'allow' }
  | LimitedDecision
  | { kind: 'unknown'; rule: string; unknown: string; reason: string };

/** What a call the candidate allows counts against. */
export interface SlotClaim {
  /** The limits that apply to the caller. */
  sure: readonly AppliedLimit[];
  /** The limits that may: whom they are for needs `whom`, which the record lacks (groups). */
  maybe: readonly AppliedLimit[];
  whom: UnknownValue | null;
  /** Not a preview (false), or what telling whether it was one needs. */
  preview: false | UnknownValue;
}

export class ReplaySlots {
  private readonly sure = new Map<string, number>();
  /** Slots maybe taken, beyond the sure ones. */
  private readonly maybe = new Map<string, number>();

  /**
   * Limited when a limit that applies is used up by sure slots. Unknown when that would refuse
   * it unless it was a preview and the record cannot tell, or when maybe slots use up a limit, or
   * a limit that may apply is used up. Else allowed, taking its slots: maybe ones where it may
   * not have taken them.
   */
  take(claim: SlotClaim, owner: SlotOwner, now: number): SlotAnswer {
    const { sure, maybe, whom, preview } = claim;
    const all = [...sure, ...maybe];
    const keys = all.map((limit) => this.key(limit, owner));
    const over = checkLimits(sure, this.readings(all, keys, false), now);
    if (over && !preview) return over;
    // Limited unless a preview, and either way it takes no slot.
    if (over && preview)
      return unknown(
        over.rule,
        preview,
        `${over.counter} is used up: only a preview would pass, and whether this call was one`,
      );
    const maybeOver = checkLimits(all, this.readings(all, keys, true), now);
    if (maybeOver || preview) this.add(this.maybe, keys);
    else {
      this.add(this.sure, keys.slice(0, sure.length));
      this.add(this.maybe, keys.slice(sure.length));
    }
    if (!maybeOver) return { kind: 'allow' };
    if (whom && maybe.some((limit) => limit.rule === maybeOver.rule))
      return unknown(
        maybeOver.rule,
        whom,
        `${maybeOver.counter} is used up (or may be), and whether it counts this caller`,
      );
    const limit = all.find((l) => l.rule === maybeOver.rule)!;
    return {
      kind: 'unknown',
      rule: limit.rule,
      unknown: EARLIER_CALLS,
      reason: `Earlier calls whose decision is unknown may have used up ${limit.counter} (${limit.max} per ${limit.window} per ${limit.scope}${limit.cluster ? ` on cluster ${limit.cluster}` : ''}).`,
    };
  }

  /** A call whose decision is unknown may have taken the slots of these limits. */
  mayTake(limits: readonly AppliedLimit[], owner: SlotOwner): void {
    this.add(
      this.maybe,
      limits.map((limit) => this.key(limit, owner)),
    );
  }

  private key(limit: AppliedLimit, { identity, session }: SlotOwner): string {
    const object =
      limit.scope !== 'session'
        ? counterObjectName(limit.scope, identity, limit.guest)
        : session === STATELESS
          ? counterObjectName('grant', identity)
          : `session:${session}`;
    // readingKey starts with the scope: a grant's session counters stay apart from its own.
    return `${object}|${readingKey(limit)}`;
  }

  /** This call's readings, keyed as checkLimits reads them: sure slots, or sure and maybe. */
  private readings(
    limits: readonly AppliedLimit[],
    keys: readonly string[],
    withMaybe: boolean,
  ): CounterReadings {
    return new Map(
      limits.map((limit, i) => {
        const key = keys[i]!;
        const count = (this.sure.get(key) ?? 0) + (withMaybe ? (this.maybe.get(key) ?? 0) : 0);
        return [readingKey(limit), count];
      }),
    );
  }

  private add(counts: Map<string, number>, keys: readonly string[]): void {
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
}

function unknown(rule: string, lost: UnknownValue, what: string): SlotAnswer {
  return {
    kind: 'unknown',
    rule,
    unknown: lost.field,
    reason: `${what} depends on ${lost.field}, which is not known (${lost.why}).`,
  };
}
