// Whom a rule is for: its `principals` (only these users and groups) and `except` (never these).
// Pure. A replayed call whose groups were never recorded (./unknown.ts) is judged by the entries
// naming people where they decide, and throws UnknownReached where a group entry would.

import { matchesAnyPrincipal, matchesPerson, type Identity } from '../identity';
import { lostGroups, UnknownReached, type UnknownValue } from './unknown';

/** Whether a rule with `principals`/`except` applies to this identity. */
export function appliesTo(
  rule: { principals?: string[]; except?: string[] },
  identity: Identity,
): boolean {
  const lost = lostGroups(identity.groups);
  if (lost) return appliesWithoutGroups(rule, identity, lost);
  if (rule.principals && !matchesAnyPrincipal(rule.principals, identity)) return false;
  if (rule.except && matchesAnyPrincipal(rule.except, identity)) return false;
  return true;
}

/** appliesTo, or the UnknownReached it throws (groups nobody recorded): never on a live call. */
export function whetherApplies(
  rule: { principals?: string[]; except?: string[] },
  identity: Identity,
): boolean | UnknownReached {
  try {
    return appliesTo(rule, identity);
  } catch (err) {
    if (err instanceof UnknownReached) return err;
    throw err;
  }
}

/**
 * appliesTo for a person whose groups are not known: the entries naming people decide where they
 * can (named in `principals`, or in `except`), and where a `group:` entry would decide instead it
 * throws UnknownReached.
 */
function appliesWithoutGroups(
  rule: { principals?: string[]; except?: string[] },
  identity: Identity,
  lost: UnknownValue,
): boolean {
  const named = rule.principals ? listed(rule.principals, identity) : true;
  const exempt = rule.except ? listed(rule.except, identity) : false;
  if (named === false || exempt === true) return false;
  if (named === true && exempt === false) return true;
  throw new UnknownReached(named === null ? 'principals' : 'except', lost);
}

/** Whether a person entry names them (true), no entry could (false), or only a group could (null). */
function listed(entries: readonly string[], identity: Identity): boolean | null {
  if (entries.some((e) => !e.startsWith('group:') && matchesPerson(e, identity))) return true;
  return entries.some((e) => e.startsWith('group:')) ? null : false;
}
