// Values a replayed call does not have: the audit trail keeps some arguments redacted or cut, and
// older records keep no groups. Such a value stands in the call as an UnknownValue (the groups, as
// a list made by unknownGroups); a rule that needs it to decide throws UnknownReached, so that a
// replay reports the call as unknown instead of guessing. Live calls never carry either, so live
// decisions never throw (whether a live call needs its guest's facts read is found by judging
// it without them first: calls/policy-gate.ts).

/** A value the record does not hold: where it was (`args.params.site-secret`) and why it is gone. */
export class UnknownValue {
  constructor(
    readonly field: string,
    readonly why: string,
  ) {}
}

/**
 * A rule needed an UnknownValue to decide: which path (or principal filter) and, once known, which
 * rule. An answer, not a fault, so not an Error: it carries no stack, whose capture costs more than
 * judging the whole call (a live call whose guest's facts are read throws it to learn that they
 * must be).
 */
export class UnknownReached {
  readonly name = 'UnknownReached';
  readonly message: string;
  constructor(
    readonly path: string,
    readonly unknown: UnknownValue,
    readonly rule: string | null = null,
  ) {
    this.message = `${rule ?? path} needs ${unknown.field}, which is not known (${unknown.why})`;
  }

  toString(): string {
    return `${this.name}: ${this.message}`;
  }

  /** The same, naming the rule (a JSON pointer) that needed the value; the first name stays. */
  at(rule: string): UnknownReached {
    return this.rule ? this : new UnknownReached(this.path, this.unknown, rule);
  }
}

const LOST_LISTS = new WeakMap<readonly string[], UnknownValue>();

/**
 * An empty list that stands for groups (or token scopes) nobody recorded: a `group:` or `scope:`
 * principal or a `user.groups` path that needs them throws UnknownReached. A fresh list each
 * time, known by identity, so Identity keeps its type and no real list is ever taken for one.
 */
export function unknownList(unknown: UnknownValue): string[] {
  const list: string[] = [];
  LOST_LISTS.set(list, unknown);
  return list;
}

/** Why this list (groups, scopes) is not known, or undefined when it is the real one. */
export function lostList(list: readonly string[]): UnknownValue | undefined {
  return LOST_LISTS.get(list);
}
