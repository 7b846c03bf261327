// Argument and identity conditions: resolving a dotted path against the call, and the
// comparison operators. Pure. A comparison on an absent field reports `absent`: a `require`
// must hold, so the field being absent fails it (fail closed), while a `deny_if` does not fire
// on it; `exists` is how a rule forbids a field outright. A `*` segment reaches every key of an
// object argument; a path reaching nothing is absent.

import { matchesAnyPrincipal, type Identity } from '../identity';
import type { Condition } from './schema';

export interface CallView {
  tool: string;
  /** Validated arguments; property strings appear as objects of their typed fields. */
  args: Readonly<Record<string, unknown>>;
  /** A person approved this exact call (require_approval is then satisfied; limits still apply). */
  approved?: boolean;
}

const ABSENT = Symbol('absent');
/** What a path with `*` resolves to: every value it reaches (none: absent). */
class Each {
  constructor(readonly values: readonly unknown[]) {}
}
type Resolved = unknown | typeof ABSENT | Each;

/**
 * `args.<field>[.<key>...]`, or `user.id`, `user.email`, `user.groups`, `user.client`. A `*`
 * segment stands for every key of the object at that level (args.config.*.bridge).
 */
export function resolvePath(path: string, call: CallView, identity: Identity): Resolved {
  const [root, ...rest] = path.split('.');
  let value: unknown;
  if (root === 'args') value = call.args;
  else if (root === 'user') value = userView(identity);
  else return ABSENT;
  const found = walk(value, rest);
  if (found instanceof Each) return found.values.length ? found : ABSENT;
  return found;
}

function walk(value: unknown, keys: readonly string[]): unknown {
  for (const [i, key] of keys.entries()) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return ABSENT;
    if (key === '*') {
      const values = Object.values(value as Record<string, unknown>).flatMap((v) => {
        const found = walk(v, keys.slice(i + 1));
        return found instanceof Each ? found.values : found === ABSENT ? [] : [found];
      });
      return new Each(values);
    }
    if (!Object.prototype.hasOwnProperty.call(value, key)) return ABSENT;
    value = (value as Record<string, unknown>)[key];
  }
  return value === undefined ? ABSENT : value;
}

function userView(identity: Identity): Record<string, unknown> {
  return {
    id: identity.userId,
    ...(identity.email ? { email: identity.email } : {}),
    groups: identity.groups,
    client: identity.clientId,
  };
}

/**
 * Whether the condition holds for the call; `'absent'` when the field it compares is absent.
 * For a path with `*`, `quantifier` says whether one value (`any`, what a deny_if asks) or every
 * value (`all`, what a require asks) must satisfy it.
 */
export function testCondition(
  cond: Condition,
  call: CallView,
  identity: Identity,
  regex?: RegExp,
  quantifier: 'any' | 'all' = 'all',
): boolean | 'absent' {
  const actual = resolvePath(cond.path, call, identity);
  if (cond.op === 'exists') return (actual !== ABSENT) === cond.value;
  if (actual === ABSENT) return 'absent';
  if (actual instanceof Each) {
    const holds = (v: unknown) => compareValue(cond, v, regex);
    return quantifier === 'any' ? actual.values.some(holds) : actual.values.every(holds);
  }
  return compareValue(cond, actual, regex);
}

function compareValue(cond: Condition, actual: unknown, regex?: RegExp): boolean {
  const expected = cond.value;
  switch (cond.op) {
    case 'eq':
      return equal(actual, expected);
    case 'neq':
      return !equal(actual, expected);
    case 'in':
      return Array.isArray(expected) && expected.some((e) => equal(actual, e));
    case 'not_in':
      return Array.isArray(expected) && !expected.some((e) => equal(actual, e));
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return compare(cond.op, actual, expected);
    case 'regex':
      return typeof actual === 'string' && (regex ?? new RegExp(String(expected))).test(actual);
    case 'contains':
      if (Array.isArray(actual)) return actual.some((a) => equal(a, expected));
      return typeof actual === 'string' && typeof expected === 'string' && actual.includes(expected);
    case 'exists':
      return true;
  }
}

/** Equality that lets a number match its string form (PVE and JSON disagree on ids). */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'string') return b.trim() !== '' && Number(b) === a;
  if (typeof a === 'string' && typeof b === 'number') return a.trim() !== '' && Number(a) === b;
  return false;
}

function compare(op: 'lt' | 'lte' | 'gt' | 'gte', a: unknown, b: unknown): boolean {
  const x = typeof a === 'number' ? a : typeof a === 'string' && a.trim() !== '' ? Number(a) : NaN;
  const y = typeof b === 'number' ? b : NaN;
  if (Number.isNaN(x) || Number.isNaN(y)) return false;
  switch (op) {
    case 'lt':
      return x < y;
    case 'lte':
      return x <= y;
    case 'gt':
      return x > y;
    case 'gte':
      return x >= y;
  }
}

/** Whether a rule with `principals`/`except` applies to this identity. */
export function appliesTo(rule: { principals?: string[]; except?: string[] }, identity: Identity): boolean {
  if (rule.principals && !matchesAnyPrincipal(rule.principals, identity)) return false;
  if (rule.except && matchesAnyPrincipal(rule.except, identity)) return false;
  return true;
}
