// Loads a policy document: zod for the shape, then the checks zod cannot make (known tools and
// argument names, operator/value types, regexes that compile, duplicate counters). Reports every
// error at once, each with its JSON pointer. Pure.

import { LIST_ITEMS, NEW_FIELDS, TARGET_FIELDS, USER_FIELDS } from './conditions';
import type { z } from 'zod';
import { policySchema, type Condition, type PolicyDocument, type ToolPolicy } from './schema';
import { isScope, SCOPES as TOKEN_SCOPES } from '../core/scopes';

export interface PolicyError {
  pointer: string;
  message: string;
}

/**
 * The arguments of each tool the server offers, and the fields a rule may reach into: of a
 * property string (args.net0.bridge), or dotted inside an object of them (args.config.net0.bridge);
 * `*` for an argument of free keys (args.params.<any key>); null for an argument without fields.
 */
export type ToolCatalog = Readonly<
  Record<string, Readonly<Record<string, readonly string[] | null>>>
>;

/** Argument name → its fields, merged over several tools (for all_tools rules). */
type ArgFields = ReadonlyMap<string, ReadonlySet<string> | null>;

function argFields(
  tools: readonly Readonly<Record<string, readonly string[] | null>>[],
): ArgFields {
  const out = new Map<string, Set<string> | null>();
  for (const args of tools) {
    for (const [arg, fields] of Object.entries(args)) {
      if (!fields) {
        if (!out.has(arg)) out.set(arg, null);
        continue;
      }
      const merged = out.get(arg) ?? new Set<string>();
      for (const f of fields) merged.add(f);
      out.set(arg, merged);
    }
  }
  return out;
}

/** An argument that is a list (`#` in the catalog, e.g. an argv): its items by index, or `*`. */
const LIST_INDEX_RE = /^\d{1,3}$/;

/** A key an argument of free keys (`*`, e.g. pve_api_request's params) may have. */
const FREE_KEY_RE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Whether the segments after `args.<argument>` name a field it has. Fields are dotted paths
 * (`bridge`, or `net0.bridge` inside an object of property strings); `*` in the catalog allows
 * any one key; `*` in a path stands for every key at that level (`config.*.size_gib`), so it
 * must be followed by a field some key has.
 */
function reachable(fields: ReadonlySet<string>, rest: readonly string[]): boolean {
  if (fields.has(LIST_ITEMS))
    return rest.length === 1 && (rest[0] === '*' || LIST_INDEX_RE.test(rest[0] ?? ''));
  if (fields.has('*'))
    return rest.length === 1 && (rest[0] === '*' || FREE_KEY_RE.test(rest[0] ?? ''));
  if (rest[0] !== '*') return fields.has(rest.join('.'));
  if (rest.length === 1) return true;
  const suffix = `.${rest.slice(1).join('.')}`;
  for (const field of fields)
    if (field.endsWith(suffix) && field.indexOf('.') === field.length - suffix.length) return true;
  return false;
}

/** Known fields for an error message; an object of keys may have thousands: then the first 40. */
function sample(fields: ReadonlySet<string>): string {
  const sorted = [...fields].sort();
  return sorted.length > 100
    ? `${sorted.slice(0, 40).join(', ')}, … (${sorted.length} in all)`
    : sorted.join(', ');
}

export interface CompiledPolicy {
  readonly doc: PolicyDocument;
  readonly catalog: ToolCatalog;
  /** Compiled `regex` conditions, by condition object. */
  readonly regexes: ReadonlyMap<Condition, RegExp>;
}

/** Things that load but may not mean what the author thinks (shown by `policy check`). */
export type PolicyWarning = PolicyError;

export type LoadResult =
  | { ok: true; policy: CompiledPolicy; warnings: PolicyWarning[] }
  | { ok: false; errors: PolicyError[] };

const MAX_REGEX = 500;

export function loadPolicy(document: unknown, catalog: ToolCatalog): LoadResult {
  const parsed = policySchema.safeParse(document);
  const errors: PolicyError[] = parsed.success ? [] : parsed.error.issues.map(fromZod);
  // The checks below walk the raw document defensively, so that a shape error elsewhere does
  // not hide an unknown tool or argument name: every error is reported at once.
  const regexes = new Map<unknown, RegExp>();
  checkSemantics(document, catalog, { errors, regexes });
  if (!parsed.success || errors.length) return { ok: false, errors: dedupe(errors) };
  // Re-key compiled regexes by the parsed condition objects the evaluator sees.
  const byCondition = new Map<Condition, RegExp>();
  const doc = parsed.data;
  const rawTools = record(record(document)?.tools);
  for (const [name, tool] of Object.entries(doc.tools)) {
    pairRegexes(tool, record(rawTools?.[name]), regexes, byCondition);
  }
  if (doc.all_tools)
    pairRegexes(doc.all_tools, record(record(document)?.all_tools), regexes, byCondition);
  return {
    ok: true,
    policy: { doc, catalog, regexes: byCondition },
    warnings: [...warningsFor(record(document) ?? {}), ...approversApart(doc)],
  };
}

function warningsFor(raw: Record<string, unknown>): PolicyWarning[] {
  if ('default' in raw) return [];
  return [
    {
      pointer: '/default',
      message:
        'no "default": every tool not listed under "tools" is denied. Say "default": "deny" (or "allow") to make that explicit.',
    },
  ];
}

/**
 * Rules that may ask for approval of the same call naming no approver in common: a call both
 * ask about is refused (an approver must be one each of them names), which may not be meant.
 */
function approversApart(doc: PolicyDocument): PolicyWarning[] {
  const out = new Map<string, PolicyWarning>();
  const tools: [string | null, ToolPolicy | undefined][] = [
    ...Object.entries(doc.tools),
    [null, undefined],
  ];
  for (const [name, tool] of tools) {
    const at = name === null ? '' : `/tools/${escapePointer(name)}`;
    const asking = [
      ...(tool?.action === 'require_approval' && tool.approvers
        ? [{ at: `${at}/approvers`, approvers: tool.approvers }]
        : []),
      ...[
        ...(tool?.approve_if ?? []).map((rule, i) => ({ rule, ruleAt: `${at}/approve_if/${i}` })),
        ...(doc.all_tools?.approve_if ?? []).map((rule, i) => ({
          rule,
          ruleAt: `/all_tools/approve_if/${i}`,
        })),
      ].flatMap(({ rule, ruleAt }) => {
        if (rule.approvers) return [{ at: `${ruleAt}/approvers`, approvers: rule.approvers }];
        return tool?.approvers ? [{ at: `${at}/approvers`, approvers: tool.approvers }] : [];
      }),
    ];
    asking.forEach((later, j) => {
      const apart = asking
        .slice(0, j)
        .find((a) => !a.approvers.some((p) => later.approvers.includes(p)));
      if (!apart) return;
      // Two of all_tools' own: the same for every tool, said once.
      const shared = apart.at.startsWith('/all_tools') && later.at.startsWith('/all_tools');
      const of = name === null || shared ? '' : ` (for ${name})`;
      const message = `no approver in common with ${apart.at}${of}: a call both rules ask about is refused, as an approver must be one each of them names`;
      out.set(`${later.at} ${message}`, { pointer: later.at, message });
    });
  }
  return [...out.values()];
}

/** What the checks gather: the errors, and each regex condition's compiled regex. */
interface Found {
  errors: PolicyError[];
  regexes: Map<unknown, RegExp>;
}

/** An object of the document, as read. */
type JsonObject = Record<string, unknown>;

function checkSemantics(document: unknown, catalog: ToolCatalog, found: Found): void {
  const { errors } = found;
  const doc = record(document);
  if (!doc) return;
  const known = new Set(Object.keys(catalog));
  const allArgs = argFields(Object.values(catalog));
  array(doc.hide)?.forEach((name, i) => {
    if (typeof name === 'string' && name !== '*' && !known.has(name))
      errors.push(unknownTool(`/hide/${i}`, name, known));
  });
  const allTools = record(doc.all_tools);
  if (allTools) checkRules(allTools, '/all_tools', allArgs, found);
  const askedByAll = array(allTools?.approve_if) ?? [];
  askedByAll.forEach((rule, i) => {
    checkApprovers(record(rule)?.approvers, `/all_tools/approve_if/${i}`, errors);
  });
  for (const [name, raw] of Object.entries(record(doc.tools) ?? {})) {
    const at = `/tools/${escapePointer(name)}`;
    if (!known.has(name)) {
      errors.push(unknownTool(at, name, known));
      continue;
    }
    const tool = record(raw);
    if (!tool) continue;
    const args = argFields([catalog[name]!]);
    checkRules(tool, at, args, found);
    const wanted = tool.approvals_required;
    checkApprovers(tool.approvers, at, errors);
    checkQuorum(tool.approvers, { wanted, at: `${at}/approvals_required` }, errors);
    array(tool.approve_if)?.forEach((rule, i) => {
      const ruleAt = `${at}/approve_if/${i}`;
      checkApprovers(record(rule)?.approvers, ruleAt, errors);
      checkQuorum(record(rule)?.approvers, { wanted, at: `${ruleAt}/approvers` }, errors);
    });
    askedByAll.forEach((rule, i) => {
      const ruleAt = `/all_tools/approve_if/${i}/approvers`;
      checkQuorum(record(rule)?.approvers, { wanted, at: ruleAt, of: name }, errors);
    });
    // Asked about by its action, its own approve_if, or one of all_tools.
    const asks =
      tool.action === 'require_approval' ||
      Boolean(array(tool.approve_if)?.length || askedByAll.length);
    for (const key of ['approvers', 'approval', 'approvals_required', 'notify'] as const) {
      if (tool[key] !== undefined && !asks) {
        errors.push({
          pointer: `${at}/${key}`,
          message: `${key} only applies when action is "require_approval" or an approve_if rule asks for approval`,
        });
      }
    }
    array(tool.sensitive)?.forEach((entry, i) => {
      if (typeof entry !== 'string') return;
      // An argument, or one key of an object argument (params.<name>, config.<key>).
      const [arg = '', ...rest] = entry.split('.');
      const fields = args.get(arg);
      if (fields === undefined) {
        errors.push({
          pointer: `${at}/sensitive/${i}`,
          message: `${name} has no argument "${arg}"`,
        });
      } else if (rest.length && (!fields || rest.includes('*') || !reachable(fields, rest))) {
        errors.push({
          pointer: `${at}/sensitive/${i}`,
          message: `"${arg}" has no key "${rest.join('.')}" to redact`,
        });
      }
    });
  }
}

/** The lists of conditions a rule set may have. */
const CONDITION_LISTS = ['deny_if', 'require', 'approve_if'] as const;

function checkRules(rules: JsonObject, at: string, args: ArgFields, found: Found): void {
  const { errors } = found;
  for (const kind of CONDITION_LISTS) {
    array(rules[kind])?.forEach((cond, i) => {
      const c = record(cond);
      if (c) checkCondition(c, `${at}/${kind}/${i}`, args, found);
      const when = record(c?.when);
      if (when) checkCondition(when, `${at}/${kind}/${i}/when`, args, found);
      if (c) checkScopePrincipals(c, `${at}/${kind}/${i}`, errors);
    });
  }
  const seen = new Map<string, string>();
  array(rules.limits)?.forEach((raw, i) => {
    const limit = record(raw);
    if (limit) checkScopePrincipals(limit, `${at}/limits/${i}`, errors);
    if (!limit || typeof limit.counter !== 'string') return;
    const key = `${String(limit.scope)}/${limit.counter}`;
    const first = seen.get(key);
    if (first)
      errors.push({
        pointer: `${at}/limits/${i}/counter`,
        message: `counter "${limit.counter}" (scope ${String(limit.scope)}) is already defined at ${first}`,
      });
    else seen.set(key, `${at}/limits/${i}`);
  });
}

/** Approvers (of the rule at `at`) are people and groups. */
function checkApprovers(approvers: unknown, at: string, errors: PolicyError[]): void {
  array(approvers)?.forEach((entry, i) => {
    if (typeof entry === 'string' && entry.startsWith('scope:'))
      errors.push({
        pointer: `${at}/approvers/${i}`,
        message:
          'approvers are people or groups: a scope belongs to a token, not to whoever approves on a web page',
      });
  });
}

/**
 * Enough approvers for the approvals a tool wants (its `approvals_required`; `of`: the tool, when
 * the rule is all_tools'), a shortfall reported at `at`.
 */
function checkQuorum(
  approvers: unknown,
  quorum: { wanted: unknown; at: string; of?: string },
  errors: PolicyError[],
): void {
  const list = array(approvers);
  const { wanted } = quorum;
  if (!list || typeof wanted !== 'number') return;
  // A quorum the named people cannot reach: fewer people than approvals wanted.
  const people = list.filter((p) => typeof p === 'string' && !p.startsWith('group:'));
  if (people.length === list.length && people.length < wanted)
    errors.push({
      pointer: quorum.at,
      message: `${wanted} approvals wanted${quorum.of ? ` by ${quorum.of}` : ''}, but only ${people.length} ${people.length === 1 ? 'person' : 'people'} may approve (name a group, or more people)`,
    });
}

/** A `scope:` principal must name a scope tokens can hold: a typo would never match anyone. */
function checkScopePrincipals(
  rule: Record<string, unknown>,
  at: string,
  errors: PolicyError[],
): void {
  for (const key of ['principals', 'except'] as const) {
    array(rule[key])?.forEach((entry, i) => {
      if (typeof entry !== 'string' || !entry.startsWith('scope:')) return;
      if (!isScope(entry.slice(6)))
        errors.push({
          pointer: `${at}/${key}/${i}`,
          message: `unknown scope "${entry.slice(6)}": one of ${TOKEN_SCOPES.join(', ')}`,
        });
    });
  }
}

/**
 * A guest's tags are a list of lower-case names: a rule compares them item by item (contains, in,
 * not_in) or asks whether there are any; a name with a capital would never match.
 */
function checkTagRule(cond: JsonObject, at: string, errors: PolicyError[]): void {
  if (!['contains', 'in', 'not_in', 'exists'].includes(String(cond.op)))
    errors.push({
      pointer: `${at}/op`,
      message: `${String(cond.path)} is a list of tags: compare it with contains, in or not_in (or exists)`,
    });
  const values = Array.isArray(cond.value) ? cond.value : [cond.value];
  if (values.some((v) => typeof v === 'string' && v !== v.toLowerCase()))
    errors.push({
      pointer: `${at}/value`,
      message: 'Proxmox keeps tags in lower case: write the tag in lower case',
    });
}

/** The values target.status takes (../proxmox/guest-state.ts processStatus). */
const GUEST_STATUSES = ['running', 'stopped', 'unknown'];

/**
 * A rule comparing target.status with a value it never takes would never fire: QEMU's own state
 * (paused...) is target.qmpstatus; a paused VM's status is running.
 */
function checkStatusRule(cond: JsonObject, at: string, errors: PolicyError[]): void {
  if (!['eq', 'neq', 'in', 'not_in'].includes(String(cond.op))) return;
  const values = Array.isArray(cond.value) ? cond.value : [cond.value];
  const never = values.filter((v) => typeof v === 'string' && !GUEST_STATUSES.includes(v));
  if (never.length)
    errors.push({
      pointer: `${at}/value`,
      message: `target.status is running, stopped or unknown (a paused VM is running), never ${never.map((v) => JSON.stringify(v)).join(', ')}: QEMU's own state (paused, prelaunch, suspended) is target.qmpstatus`,
    });
}

function checkCondition(cond: JsonObject, at: string, args: ArgFields, found: Found): void {
  const { errors, regexes } = found;
  if (typeof cond.path === 'string') {
    const [root, first, ...rest] = cond.path.split('.');
    if (root === 'args') {
      // A typo in a path would make its rule never apply: every segment must exist.
      const fields = first ? args.get(first) : undefined;
      if (!first || fields === undefined) {
        errors.push({
          pointer: `${at}/path`,
          message: `unknown argument "${first ?? ''}"; known: ${[...args.keys()].sort().join(', ')}`,
        });
      } else if (rest.length > 0 && !fields) {
        errors.push({
          pointer: `${at}/path`,
          message: `argument "${first}" has no fields to reach into`,
        });
      } else if (rest.length > 0 && !reachable(fields!, rest)) {
        errors.push({
          pointer: `${at}/path`,
          message: `"${first}" has no field "${rest.join('.')}"; known: ${sample(fields!)}`,
        });
      }
    } else if (root === 'user' || root === 'target' || root === 'new') {
      const known = root === 'user' ? USER_FIELDS : root === 'target' ? TARGET_FIELDS : NEW_FIELDS;
      if (!first || !known.includes(first) || rest.length) {
        errors.push({
          pointer: `${at}/path`,
          message: `${root} paths are ${known.map((f) => `${root}.${f}`).join(', ')}`,
        });
      } else if (cond.path === 'target.tags' || cond.path === 'new.tags')
        checkTagRule(cond, at, errors);
      else if (cond.path === 'target.status') checkStatusRule(cond, at, errors);
    } else {
      errors.push({
        pointer: `${at}/path`,
        message: 'path must start with "args.", "user.", "target." or "new."',
      });
    }
  }
  const value = cond.value;
  if (cond.aggregate !== undefined) {
    const path = typeof cond.path === 'string' ? cond.path.split('.') : [];
    if (path[0] !== 'args' || !path.includes('*')) {
      errors.push({
        pointer: `${at}/aggregate`,
        message: `aggregate needs a path with "*" (e.g. args.config.*.size_gib)`,
      });
    }
    if (
      !['eq', 'neq', 'lt', 'lte', 'gt', 'gte'].includes(String(cond.op)) ||
      typeof value !== 'number'
    ) {
      errors.push({
        pointer: `${at}/op`,
        message:
          'an aggregate is a number: compare it with eq, neq, lt, lte, gt or gte and a number',
      });
    }
    return;
  }
  const problem = ((): string | null => {
    switch (cond.op) {
      case 'in':
      case 'not_in':
        return Array.isArray(value) ? null : `operator "${cond.op}" needs a list value`;
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte':
        return typeof value === 'number' ? null : `operator "${cond.op}" needs a number`;
      case 'exists':
        return typeof value === 'boolean' ? null : 'operator "exists" needs true or false';
      case 'regex': {
        if (typeof value !== 'string') return 'operator "regex" needs a string';
        if (value.length > MAX_REGEX) return `regex longer than ${MAX_REGEX} characters`;
        try {
          regexes.set(cond, new RegExp(value));
          return null;
        } catch (err) {
          return `invalid regex: ${err instanceof Error ? err.message : 'does not compile'}`;
        }
      }
      case 'eq':
      case 'neq':
      case 'contains':
        return Array.isArray(value)
          ? `operator "${cond.op}" needs a single value, not a list`
          : null;
      default:
        return null; // an unknown operator is reported by the schema
    }
  })();
  if (problem) errors.push({ pointer: `${at}/value`, message: problem });
}

function pairRegexes(
  parsed: Partial<Record<(typeof CONDITION_LISTS)[number], Condition[]>>,
  raw: Record<string, unknown> | undefined,
  regexes: Map<unknown, RegExp>,
  out: Map<Condition, RegExp>,
): void {
  for (const kind of CONDITION_LISTS) {
    parsed[kind]?.forEach((cond, i) => {
      const rawCond = array(raw?.[kind])?.[i];
      const re = regexes.get(rawCond);
      if (re) out.set(cond, re);
      const whenRe = regexes.get(record(rawCond)?.when);
      if (whenRe && cond.when) out.set(cond.when, whenRe);
    });
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function array(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

function dedupe(errors: PolicyError[]): PolicyError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.pointer} ${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function unknownTool(pointer: string, name: string, known: ReadonlySet<string>): PolicyError {
  return {
    pointer,
    message: `unknown tool "${name}"; this server offers ${[...known].join(', ')}`,
  };
}

function fromZod(issue: z.core.$ZodIssue): PolicyError {
  const path = issue.path.map((p) => escapePointer(String(p)));
  if (issue.code === 'unrecognized_keys') {
    return { pointer: `/${path.join('/')}`, message: `unknown key(s): ${issue.keys.join(', ')}` };
  }
  return { pointer: `/${path.join('/')}`, message: issue.message };
}

/** RFC 6901 escaping of one pointer segment. */
function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function formatErrors(errors: readonly PolicyError[]): string {
  return errors.map((e) => `${e.pointer || '/'}: ${e.message}`).join('\n');
}
