// Conditions on the call's arguments, on who calls, on the guest it acts on (`target.`, facts
// read from Proxmox before deciding) and on the guest it makes (`new.`): resolving a dotted path
// against the call, and judging a `deny_if` or a `require` on what it reaches. Pure.
//
// What a path reaches is one of three things, and the difference is what makes rules fail closed:
// - a value;
// - missing: what would carry the field is there without it — a NIC (net0) without `bridge`, an
//   argument the tool takes that the call leaves out, a person without an email. A missing value
//   equals nothing: `neq` and `not_in` hold for it (a NIC without a bridge is not on vmbr1, so
//   `deny_if bridge neq vmbr1` fires), the other comparisons do not (a disk without a new size is
//   not bigger than 512 GiB); a `require` is never met by it (`exists: false` aside);
// - absent: nothing to judge — the tool cannot carry the field at all (an `all_tools` rule on an
//   argument this tool does not take), or what would carry it is not there (no net0 in the call
//   for `args.net0.bridge`). A `deny_if` does not fire; a `require` is not met.
// A `*` segment stands for every key of an object argument whose kind can carry the rest of the
// path (for `args.config.*.bridge`: every NIC the call sets, not its memory or its disks): a
// `deny_if` fires when one of them matches, a `require` needs every one and at least one. A list
// argument (an argv) is reached by index (`args.command.0`, the program) or by `*` (every item).
// `aggregate` turns a `*` path into one number: the `sum` of its values (missing counts 0) or the
// `count` of the values present (0 when it reaches nothing). A size comparison (lt...gte) or a
// sum over a value that is not a number (a term below 0, for a sum) cannot judge it: the rule
// refuses the call (a deny_if fires; a require is not met) instead of letting it through.
//
// A rule may carry `when`, a test of its own (path, op, value, aggregate): it then applies only to
// a call `when` fires on as a deny_if would (src/policy/evaluate.ts), so one rule can be for one
// program of an argv (`when: args.command.0 regex ps$`) or one kind of call. A `when` that needs
// a lost value throws UnknownReached, whatever the rule itself would say: whether the rule is for
// the call is not known.
//
// A replayed call may hold values its record lost (./unknown.ts). A rule that reaches one throws
// UnknownReached, unless what is known already decides it: a `*` deny_if that fires on a known
// value, a require that a known value fails, `exists` on a value that was there but not kept.

import type { Identity } from '../core/identity';
import type { Condition } from './schema';
import { lostList, UnknownReached, UnknownValue } from './unknown';

/**
 * A guest as `guest` limits count it: its vmid, unique in its cluster; where the server reaches
 * several clusters, `<cluster>/<vmid>` (VM 104 on lab and VM 104 on prod are two guests).
 */
export type GuestKey = number | string;

/** The key of guest `vmid` (none: no guest), of `cluster` when there are several (else none). */
export function guestKey(
  vmid: number | undefined,
  cluster: string | undefined,
): GuestKey | undefined {
  if (vmid === undefined) return undefined;
  return cluster === undefined ? vmid : `${cluster}/${vmid}`;
}

export interface CallView {
  tool: string;
  /** Validated arguments; property strings appear as objects of their typed fields. */
  args: Readonly<Record<string, unknown>>;
  /**
   * The guest the call acts on, as Proxmox says it is (or a new guest as the call would make it):
   * what `target.` paths reach, by TARGET_FIELDS name, an Unread where it could not be read.
   * Left out: the call acts on no guest, or the policy reaches none of its facts.
   */
  target?: Readonly<Record<string, unknown>>;
  /** The guest the call acts on (or makes): a `guest` limit counts per guest (see GuestKey). */
  guest?: GuestKey;
  /**
   * The guest the call makes beside the one it acts on (a clone's new guest), as the call would
   * make it: what `new.` paths reach, by NEW_FIELDS name. Left out: the call makes none.
   */
  made?: Readonly<Record<string, unknown>>;
  /** A person approved this exact call (require_approval is then satisfied; limits still apply). */
  approved?: boolean;
}

/** One tool's arguments and the fields a rule may reach inside each (see ToolCatalog in load.ts). */
export type ToolArgs = Readonly<Record<string, readonly string[] | null>>;

const ABSENT = Symbol('absent');
const MISSING = Symbol('missing');
/**
 * What a path reaches in a value the record lost: there but not known (`present`: the lost value
 * itself), or not knowable at all (inside a lost value: a value, missing, or absent).
 */
class Unseen {
  constructor(
    readonly unknown: UnknownValue,
    readonly present: boolean,
  ) {}
}
type Reached = unknown | typeof MISSING | Unseen;
/** What a `*` path reaches: every value (or missing field) of the keys that can carry it. */
class Each {
  constructor(readonly values: readonly Reached[]) {}
}
type Resolved = Reached | typeof ABSENT | Each;

/** The caller's fields a `user.` path reaches (the loader refuses any other). */
export const USER_FIELDS: readonly string[] = ['id', 'email', 'groups', 'scopes', 'client'];

/**
 * The facts of the guest a call acts on that a `target.` path reaches (the loader refuses any
 * other): its pool, tags (a list), name, node, status (running, stopped, unknown: a paused VM is
 * running) and qmpstatus (QEMU's own: paused), template, protection, lock, ha (the HA state;
 * absent when HA does not manage it), vm_type (qemu, lxc) and cluster (the one the call is for:
 * known, never read).
 */
export const TARGET_FIELDS: readonly string[] = [
  'pool',
  'tags',
  'name',
  'node',
  'status',
  'qmpstatus',
  'template',
  'protection',
  'lock',
  'ha',
  'vm_type',
  'cluster',
];

/** The facts of a guest a call makes that a `new.` path reaches (the loader refuses any other). */
export const NEW_FIELDS: readonly string[] = [
  'pool',
  'tags',
  'name',
  'node',
  'template',
  'vm_type',
];

/**
 * A fact of the call's target that could not be read from Proxmox (in time, or at all): a rule
 * that reaches it refuses the call, a `deny_if` as if it fired, a `require` as if it were unmet.
 */
export class Unread {
  constructor(readonly why: string) {}
}

/**
 * Marks the facts of a guest that does not exist (Proxmox says its id is free), for a call that
 * needs none: it has none of the facts Proxmox gives of a guest (a `target.` path to one is
 * missing, and a refusal says why), but those something it left behind keeps (its backup's
 * config) and the cluster.
 */
export const NO_SUCH_GUEST: unique symbol = Symbol('no such guest');

/**
 * The facts of a guest that does not exist, said so: none, or those something it left behind
 * keeps (its backup's config).
 */
export function noSuchGuest(
  kept: Readonly<Record<string, unknown>> = {},
): Readonly<Record<string, unknown>> {
  return { ...kept, [NO_SUCH_GUEST]: true };
}

/** Whether `facts` are those of a guest that does not exist. */
export function isNoSuchGuest(facts: Readonly<Record<string, unknown>> | undefined): boolean {
  return facts !== undefined && NO_SUCH_GUEST in facts;
}

/**
 * A guest none of whose facts is known, and why: a rule that needs one of them throws
 * UnknownReached (the rules before it decide without them).
 */
export function unknownTarget(why: string): Readonly<Record<string, unknown>> {
  return Object.freeze(
    Object.fromEntries(
      TARGET_FIELDS.map((fact) => [fact, new UnknownValue(`target.${fact}`, why)]),
    ),
  );
}

/**
 * The guest a recorded call acted on, whose facts the record does not keep (replays, the
 * shadow): a rule that needs one of them is unknown.
 */
export const UNRECORDED_TARGET = unknownTarget(
  'the record keeps no facts of the guest it acted on',
);

/** The catalog's mark for an argument that is a list, reached by index (see ToolArgs). */
export const LIST_ITEMS = '#';
const INDEX_RE = /^\d{1,3}$/;

/**
 * `args.<argument>[.<key>...]` (with at most one `*`), `user.<field>`, `target.<fact>` or
 * `new.<fact>`.
 */
export function resolvePath(
  path: string,
  call: CallView,
  identity: Identity,
  toolArgs: ToolArgs,
): Resolved {
  const [root, first, ...rest] = path.split('.');
  if (root === 'user') {
    if (!first || !USER_FIELDS.includes(first) || rest.length) return ABSENT;
    const value = userView(identity)[first];
    return value === undefined ? MISSING : seen(value);
  }
  if (root === 'target' || root === 'new') {
    const [known, facts] =
      root === 'target' ? [TARGET_FIELDS, call.target] : [NEW_FIELDS, call.made];
    if (!first || !known.includes(first) || rest.length || !facts) return ABSENT;
    const value = ownValue(facts, first);
    // A fact the record does not keep: not even whether the guest had it is known.
    if (value instanceof UnknownValue) return new Unseen(value, false);
    return value === undefined ? MISSING : seen(value);
  }
  if (root !== 'args' || !first || !Object.hasOwn(toolArgs, first)) return ABSENT;
  const fields = toolArgs[first] ?? null;
  const value = ownValue(call.args, first);
  if (rest.length === 0) return value === undefined ? MISSING : seen(value);
  if (value === undefined) return ABSENT;
  if (rest[0] !== '*') return carries(fields, rest) ? walk(value, rest) : ABSENT;
  // A lost object's keys are not known: nor is what its `*` would reach.
  if (value instanceof UnknownValue) return new Unseen(value, false);
  if (!isRecord(value) && !(Array.isArray(value) && fields?.includes(LIST_ITEMS))) return ABSENT;
  const tail = rest.slice(1);
  const values: Reached[] = [];
  for (const [key, element] of Object.entries(value)) {
    if (tail.length === 0) {
      if (element !== undefined) values.push(seen(element));
    } else if (carries(fields, [key, ...tail])) {
      const found = walk(element, tail);
      if (found !== ABSENT) values.push(found);
    }
  }
  return values.length ? new Each(values) : ABSENT;
}

/** The value at `keys` inside `value`: missing when only the last key is not there. */
function walk(value: unknown, keys: readonly string[]): Resolved {
  let here = value;
  for (const [i, key] of keys.entries()) {
    const last = i === keys.length - 1;
    if (here instanceof UnknownValue) return new Unseen(here, false);
    if (Array.isArray(here)) {
      // A list's item by index; past its end is missing (the argv has no such argument).
      if (!INDEX_RE.test(key)) return ABSENT;
      const item: unknown = here[Number(key)];
      if (item === undefined) return last ? MISSING : ABSENT;
      here = item;
      continue;
    }
    if (!isRecord(here)) return ABSENT;
    const next = ownValue(here, key);
    if (next === undefined) return last ? MISSING : ABSENT;
    here = next;
  }
  return seen(here);
}

/** A value reached, or the lost value reached itself (which was there: only its value is gone). */
function seen(value: unknown): unknown {
  return value instanceof UnknownValue ? new Unseen(value, true) : value;
}

/** Whether the argument's kind has this field (free keys: any one key). */
function carries(fields: readonly string[] | null, keys: readonly string[]): boolean {
  if (!fields) return false;
  if (fields.includes(LIST_ITEMS)) return keys.length === 1 && INDEX_RE.test(keys[0] ?? '');
  if (fields.includes('*')) return keys.length === 1;
  return fieldSet(fields).has(keys.join('.'));
}

const sets = new WeakMap<readonly string[], ReadonlySet<string>>();
function fieldSet(fields: readonly string[]): ReadonlySet<string> {
  let set = sets.get(fields);
  if (!set) {
    set = new Set(fields);
    sets.set(fields, set);
  }
  return set;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An own property only: a key named like an Object.prototype member reaches nothing. */
function ownValue(record: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Why the target fact a condition reaches could not be read; null when it was read. */
export function unreadWhy(cond: { path: string }, call: CallView): string | null {
  const [root, first] = cond.path.split('.');
  if (root !== 'target' || !first || !call.target) return null;
  const value = ownValue(call.target, first);
  return value instanceof Unread ? value.why : null;
}

function userView(identity: Identity): Record<string, unknown> {
  return {
    id: identity.userId,
    email: identity.email || undefined,
    groups: lostList(identity.groups) ?? identity.groups,
    scopes: lostList(identity.scopes) ?? identity.scopes,
    client: identity.clientId,
  };
}

/**
 * Why a rule refuses a call (how its reason is worded when it has none of its own); `unread`, a
 * target fact it needs could not be read (its reason then says so, whatever the rule's own).
 */
export type Refusal = 'matched' | 'missing' | 'absent' | 'not_a_number' | 'unread';

/** Stands for a lost value that was there, where only its presence counts (`exists`). */
const SOME_VALUE = Symbol('some value');

/**
 * Whether a `deny_if` (fires) or a `require` (is not met) refuses the call, and why; null when
 * it lets the call through. Throws UnknownReached when that depends on a value the call lacks.
 */
export function judgeCondition(
  cond: Condition,
  kind: 'deny_if' | 'require',
  call: CallView,
  identity: Identity,
  toolArgs: ToolArgs,
  regex?: RegExp,
): Refusal | null {
  const reached = resolvePath(cond.path, call, identity, toolArgs);
  if (reached instanceof Unread) return 'unread';
  if (cond.aggregate) {
    const total = aggregate(cond.aggregate, reached);
    if (total === null) return 'not_a_number';
    if (total instanceof Unseen) throw new UnknownReached(cond.path, total.unknown);
    const holds = compareValue(cond, total, regex);
    return kind === 'deny_if' ? (holds ? 'matched' : null) : holds ? null : 'matched';
  }
  if (reached === ABSENT) return kind === 'deny_if' ? null : 'absent';
  // Whether a lost value that was there exists is known; nothing else about it is.
  const judged = (reached instanceof Each ? reached.values : [reached]).map((v) =>
    v instanceof Unseen && v.present && cond.op === 'exists' ? SOME_VALUE : v,
  );
  const known = judged.filter((v) => !(v instanceof Unseen));
  if (kind === 'deny_if') {
    // A size rule cannot judge what is not a number ("current=65536"): it refuses instead.
    if (
      NUMERIC_OPS.has(cond.op) &&
      known.some((v) => v !== MISSING && !Number.isFinite(toNumber(v)) && !isInfinity(v))
    )
      return 'not_a_number';
    // One known value that fires decides it, whatever the lost ones hold (only the wording of
    // the reason could differ: a lost value might have been "not a number").
    const hit = known.find((v) => denyHolds(cond, v, regex));
    if (hit !== undefined) return hit === MISSING ? 'missing' : 'matched';
  } else {
    const unmet = known.find((v) => !requireHolds(cond, v, regex));
    if (unmet !== undefined) return unmet === MISSING ? 'absent' : 'matched';
  }
  const lost = judged.find((v): v is Unseen => v instanceof Unseen);
  if (lost) throw new UnknownReached(cond.path, lost.unknown);
  return null;
}

/** A deny_if's test of one value: a missing one is unequal to everything, and nothing else. */
function denyHolds(cond: Condition, value: Reached, regex?: RegExp): boolean {
  if (cond.op === 'exists') return (value !== MISSING) === cond.value;
  if (value === MISSING) return cond.op === 'neq' || cond.op === 'not_in';
  return compareValue(cond, value, regex);
}

/** A require's test of one value: a missing one never meets it, unless it asks for absence. */
function requireHolds(cond: Condition, value: Reached, regex?: RegExp): boolean {
  if (cond.op === 'exists') return (value !== MISSING) === cond.value;
  if (value === MISSING) return false;
  return compareValue(cond, value, regex);
}

const NUMERIC_OPS: ReadonlySet<string> = new Set(['lt', 'lte', 'gt', 'gte']);

/** A number too big to write, as JSON and form values can spell it. */
function isInfinity(value: unknown): boolean {
  return Math.abs(toNumber(value)) === Infinity;
}

/**
 * The sum or count over a `*` path; null when a value to add up is not a finite number of at
 * least 0 (a sum is for caps: a negative term would only lower it); an Unseen when it depends on
 * a lost value (a count, only on one that may not be there).
 */
function aggregate(kind: 'sum' | 'count', reached: Resolved): number | null | Unseen {
  const values = reached === ABSENT ? [] : reached instanceof Each ? reached.values : [reached];
  const present = values.filter((v) => v !== MISSING);
  if (kind === 'count') {
    const unsure = present.find((v) => v instanceof Unseen && !v.present);
    return unsure instanceof Unseen ? unsure : present.length;
  }
  let total = 0;
  let lost: Unseen | null = null;
  for (const v of present) {
    if (v instanceof Unseen) {
      lost ??= v;
      continue;
    }
    const n = toNumber(v);
    if (!Number.isFinite(n) || n < 0) return null;
    total += n;
  }
  if (lost) return lost;
  return Number.isFinite(total) ? total : null;
}

function compareValue(cond: Condition, actual: unknown, regex?: RegExp): boolean {
  const expected = cond.value;
  switch (cond.op) {
    case 'eq':
      return equal(actual, expected);
    case 'neq':
      return !equal(actual, expected);
    case 'in':
      return Array.isArray(expected) && anyIn(actual, expected);
    case 'not_in':
      return Array.isArray(expected) && !anyIn(actual, expected);
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return compare(cond.op, actual, expected);
    case 'regex':
      return typeof actual === 'string' && (regex ?? new RegExp(String(expected))).test(actual);
    case 'contains':
      if (Array.isArray(actual)) return actual.some((a) => equal(a, expected));
      return (
        typeof actual === 'string' && typeof expected === 'string' && actual.includes(expected)
      );
    case 'exists':
      return cond.value === true;
  }
}

/** Whether the value, or for a list (target.tags) any of its items, is one of `expected`. */
function anyIn(actual: unknown, expected: readonly unknown[]): boolean {
  const items = Array.isArray(actual) ? actual : [actual];
  return items.some((a) => expected.some((e) => equal(a, e)));
}

/** Equality that lets a number match its string form (PVE and JSON disagree on ids). */
function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'string') return b.trim() !== '' && Number(b) === a;
  if (typeof a === 'string' && typeof b === 'number') return a.trim() !== '' && Number(a) === b;
  return false;
}

function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
}

function compare(op: 'lt' | 'lte' | 'gt' | 'gte', a: unknown, b: unknown): boolean {
  const x = toNumber(a);
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
