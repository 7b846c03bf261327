// Whom a rule is for: its `principals` (only these users, groups and token scopes) and `except`
// (never these). Pure. A replayed call whose groups or scopes were never recorded (./unknown.ts)
// is judged by the entries naming people where they decide, and throws UnknownReached where a
// `group:` or `scope:` entry would.

import { matchesRulePrincipal, type Identity } from '../core/identity';
import { lostList, UnknownReached, type UnknownValue } from './unknown';

type Whom = { principals?: string[]; except?: string[] };

/** Whether a rule with `principals`/`except` applies to this identity. */
export function appliesTo(rule: Whom, identity: Identity): boolean {
  const named = rule.principals ? anyMatches(rule.principals, identity) : true;
  const exempt = rule.except ? anyMatches(rule.except, identity) : false;
  if (named === false || exempt === true) return false;
  if (named === true && exempt === false) return true;
  const field = named === null ? 'principals' : 'except';
  throw new UnknownReached(
    field,
    unknownFor((named === null ? rule.principals : rule.except)!, identity),
  );
}

/** appliesTo, or the UnknownReached it throws (groups nobody recorded): never on a live call. */
export function whetherApplies(rule: Whom, identity: Identity): boolean | UnknownReached {
  try {
    return appliesTo(rule, identity);
  } catch (err) {
    if (err instanceof UnknownReached) return err;
    throw err;
  }
}

/** Whether an entry names them (true), none does (false), or only an unknown list could tell (null). */
function anyMatches(entries: readonly string[], identity: Identity): boolean | null {
  let unknown = false;
  for (const entry of entries) {
    if (lostFor(entry, identity)) unknown = true;
    else if (matchesRulePrincipal(entry, identity)) return true;
  }
  return unknown ? null : false;
}

/** What an entry would need that the record lacks: its groups (`group:`) or scopes (`scope:`). */
function lostFor(entry: string, identity: Identity): UnknownValue | undefined {
  if (entry.startsWith('group:')) return lostList(identity.groups);
  if (entry.startsWith('scope:')) return lostList(identity.scopes);
  return undefined;
}

function unknownFor(entries: readonly string[], identity: Identity): UnknownValue {
  for (const entry of entries) {
    const lost = lostFor(entry, identity);
    if (lost) return lost;
  }
  throw new Error('no unknown entry');
}
