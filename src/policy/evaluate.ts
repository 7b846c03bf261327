// The decision for one tool call: (policy, call, identity, counter readings, now) → decision.
// No I/O, no clock, no `this`. Order: invalid policy, hide, default, action deny, deny_if,
// require, then a person's approval (require_approval and every approve_if that fires, asked
// together), limits. Rules of the tool come before those of all_tools. How a rule judges a field
// the call leaves out (missing, or absent) is said in conditions.ts. A replayed call that lacks
// what a rule needs (./unknown.ts) throws UnknownReached naming the rule.

import type { Identity } from '../core/identity';
import { own } from '../core/own';
import {
  judgeCondition,
  type CallView,
  type GuestKey,
  isNoSuchGuest,
  type Refusal,
  type ToolArgs,
  unknownTarget,
  unreadWhy,
} from './conditions';
import type { CompiledPolicy } from './load';
import { appliesTo, whetherApplies } from './principals';
import type { Condition, Limit, Scope, ToolPolicy, Window } from './schema';
import { UnknownReached } from './unknown';
import { retryAfterSeconds, windowEnd, windowStart } from './windows';

/** A limit that applies to this call, resolved to the counter it counts in. */
export interface AppliedLimit {
  rule: string;
  scope: Scope;
  /** A `guest` limit's guest: its counters are that guest's, whoever calls. */
  guest?: GuestKey;
  /** The clusters a limit counts calls to (Limit.cluster), each apart; absent: every call. */
  clusters?: readonly string[];
  /** The cluster of the call it counts, when it counts per cluster (its key then ends @<cluster>). */
  cluster?: string;
  /** Counter id within its scope: `<tool>/<counter>` or `*\/<counter>` for all_tools. */
  key: string;
  counter: string;
  window: Window;
  windowStart: number;
  windowEnd: number;
  max: number;
  reason?: string;
}

export type Decision =
  | { kind: 'allow'; limits: AppliedLimit[] }
  | { kind: 'deny'; rule: string; reason: string }
  | { kind: 'limited'; rule: string; reason: string; counter: string; retry_after_s: number }
  | {
      kind: 'approval_required';
      rule: string;
      reason: string;
      approvers?: string[];
      webOnly?: boolean;
      /** Different people who must approve (more than one: on the web page only). */
      approvalsRequired?: number;
      /** The receivers (APPROVAL_WEBHOOKS names) told of it; absent: all. */
      notify?: string[];
    };

/** A refusal by a rate limit. */
export type LimitedDecision = Extract<Decision, { kind: 'limited' }>;

/** Current counts by `${scope}:${key}:${windowStart}`; absent means 0. */
export type CounterReadings = ReadonlyMap<string, number>;

export function readingKey(limit: Pick<AppliedLimit, 'scope' | 'key' | 'windowStart'>): string {
  return `${limit.scope}:${limit.key}:${limit.windowStart}`;
}

/**
 * Decides a call. With `readings`, limits already at their max give `limited`; without them
 * (null) the applicable limits are returned for the counter store to reserve atomically.
 */
export function evaluatePolicy(
  policy: CompiledPolicy,
  call: CallView,
  identity: Identity,
  readings: CounterReadings | null,
  now: number,
): Decision {
  const outright = refusedOutright(policy, call.tool);
  if (outright) return outright;
  for (const { at: base, rules } of ruleSets(policy, call.tool)) {
    const [denied] = matches(policy, rules.deny_if, `${base}/deny_if`, call, identity, 'deny_if');
    if (denied) return refusal(denied);
    const [unmet] = matches(policy, rules.require, `${base}/require`, call, identity, 'require');
    if (unmet) return refusal(unmet);
  }
  if (!call.approved) {
    const asked = approvalAsked(policy, call, identity);
    if (asked) return asked;
  }
  const limits = callLimits(
    limitsFor(policy, call.tool, now, (limit, rule) =>
      atRule(rule, () => appliesTo(limit, identity)),
    ),
    call,
  );
  if (readings) {
    const over = checkLimits(limits, readings, now);
    if (over) return over;
  }
  return { kind: 'allow', limits };
}

/**
 * Whether the policy decides the call before any rule that applies to it needs a fact of the
 * guest it acts on (an argument refused first; a preview, which no rule for confirmed calls is
 * for): then none need be read from Proxmox, and the decision is the same with them, the rules
 * being judged in order. A `dryRun` (a preview) asked for approval is judged again as approved,
 * as the gate judges it.
 */
export function decidesWithoutTarget(
  policy: CompiledPolicy,
  call: Omit<CallView, 'target'>,
  identity: Identity,
  now: number,
  dryRun: boolean,
): boolean {
  const view = { ...call, target: NOT_READ_YET };
  try {
    const decision = evaluatePolicy(policy, view, identity, null, now);
    if (decision.kind === 'approval_required' && dryRun)
      evaluatePolicy(policy, { ...view, approved: true }, identity, null, now);
    return true;
  } catch (err) {
    if (err instanceof UnknownReached) return false;
    throw err;
  }
}

const NOT_READ_YET = unknownTarget('not read yet');

/**
 * The limits as they count this call: a `guest` limit counts on the guest the call acts on, and
 * does not count a call that acts on none (a list, a task's status); a limit for some clusters
 * counts only a call to one of them, on that cluster's own counter.
 */
export function callLimits(limits: AppliedLimit[], call: CallView): AppliedLimit[] {
  return limits.flatMap((limit) => {
    const cluster = call.args.cluster;
    if (limit.clusters && (typeof cluster !== 'string' || !limit.clusters.includes(cluster)))
      return [];
    const counted = limit.clusters
      ? { ...limit, key: `${limit.key}@${cluster}`, cluster: cluster as string }
      : limit;
    if (counted.scope !== 'guest') return [counted];
    return call.guest === undefined ? [] : [{ ...counted, guest: call.guest }];
  });
}

/** A rule that asks for a person's approval of a call, and whom it names (absent: anyone may). */
interface Asking {
  rule: string;
  reason: string;
  approvers?: string[];
}

/**
 * The approval a call needs, or null: every rule that asks for one — the tool's action and each
 * approve_if that fires — together, so that no rule's approvers are passed over for another's
 * (an approver must be one that each rule naming approvers names; none such: refused). An
 * approve_if that cannot be judged refuses the call: nobody is asked about a guest whose facts
 * are unknown.
 */
function approvalAsked(
  policy: CompiledPolicy,
  call: CallView,
  identity: Identity,
): Decision | null {
  const tool = own(policy.doc.tools, call.tool);
  const asked: Asking[] = [];
  if (tool?.action === 'require_approval')
    asked.push({
      rule: `/tools/${call.tool}/action`,
      reason: tool.reason ?? `Calls to "${call.tool}" need a person's approval.`,
      approvers: tool.approvers,
    });
  for (const { at, rules } of ruleSets(policy, call.tool)) {
    for (const f of matches(
      policy,
      rules.approve_if,
      `${at}/approve_if`,
      call,
      identity,
      'approve_if',
    )) {
      if (f.refusal !== 'matched' && f.refusal !== 'missing') return refusal(f);
      asked.push({
        rule: f.rule,
        reason: f.reason,
        approvers: f.cond.approvers ?? tool?.approvers,
      });
    }
  }
  const [first] = asked;
  if (!first) return null;
  const named = asked.filter((a) => a.approvers);
  const approvers = named.length
    ? named.reduce<string[]>(
        (both, a) => both.filter((p) => a.approvers!.includes(p)),
        named[0]!.approvers!,
      )
    : undefined;
  if (approvers?.length === 0)
    return {
      kind: 'deny',
      rule: named[named.length - 1]!.rule,
      reason: `Denied by policy: the rules that ask for a person's approval of this call (${named.map((a) => `${a.rule}: ${a.approvers!.join(', ')}`).join('; ')}) name no approver in common, so nobody could approve it.`,
    };
  const reason = [...new Set(asked.map((a) => a.reason))].join(' ');
  return askFor(tool, first.rule, reason, approvers);
}

/** A person's approval by `approvers`, asked as the tool's policy says (where, how many, whom to tell). */
function askFor(
  tool: ToolPolicy | undefined,
  rule: string,
  reason: string,
  approvers: string[] | undefined,
): Decision {
  return {
    kind: 'approval_required',
    rule,
    reason,
    ...(approvers ? { approvers } : {}),
    ...(tool?.approval === 'web' ? { webOnly: true } : {}),
    ...((tool?.approvals_required ?? 1) > 1
      ? { approvalsRequired: tool?.approvals_required, webOnly: true }
      : {}),
    ...(tool?.notify ? { notify: tool.notify } : {}),
  };
}

function refusal(fired: Fired<Condition>): Decision {
  return { kind: 'deny', rule: fired.rule, reason: fired.reason };
}

/** The rules for a tool: its own, then all_tools; `namespace` keeps their counters apart. */
function ruleSets(policy: CompiledPolicy, toolName: string) {
  const { doc } = policy;
  const tool = own(doc.tools, toolName);
  return [
    ...(tool ? [{ at: `/tools/${toolName}`, rules: tool, namespace: toolName }] : []),
    ...(doc.all_tools ? [{ at: '/all_tools', rules: doc.all_tools, namespace: '*' }] : []),
  ];
}

/** A tool's rules that reach target facts, each with the facts it reaches. */
type FactRules = readonly { cond: Condition; facts: readonly string[] }[];

const reachedFacts = new WeakMap<CompiledPolicy, Map<string, FactRules>>();

function factRules(policy: CompiledPolicy, toolName: string): FactRules {
  let byTool = reachedFacts.get(policy);
  if (!byTool) {
    byTool = new Map();
    reachedFacts.set(policy, byTool);
  }
  let rules = byTool.get(toolName);
  if (!rules) {
    rules = ruleSets(policy, toolName)
      .flatMap(({ rules: r }) => [
        ...(r.deny_if ?? []),
        ...(r.require ?? []),
        ...(r.approve_if ?? []),
      ])
      .map((cond) => ({
        cond,
        facts: [cond.path, ...(cond.when ? [cond.when.path] : [])].flatMap((path) => {
          const [root, field] = path.split('.');
          return root === 'target' && field ? [field] : [];
        }),
      }))
      .filter((rule) => rule.facts.length > 0);
    byTool.set(toolName, rules);
  }
  return rules;
}

/**
 * The target facts (TARGET_FIELDS) a tool's rules reach, in a condition or its `when`: what must
 * be read from Proxmox before the policy decides a call (nothing when empty). With `identity`,
 * only the rules for that caller: a rule whose principals leave them out reads nothing for them.
 * With the call's `args` too, only the rules for that call: a rule whose `when` on the arguments
 * or the caller does not fire (a rule for confirmed writes, on a read) reads nothing for it.
 */
export function targetFactsReached(
  policy: CompiledPolicy,
  toolName: string,
  identity?: Identity,
  args?: Readonly<Record<string, unknown>>,
): ReadonlySet<string> {
  return new Set(
    factRules(policy, toolName)
      .filter(({ cond }) => !identity || whetherApplies(cond, identity) !== false)
      .filter(
        ({ cond }) => !identity || !args || !whenRulesOut(policy, cond, toolName, args, identity),
      )
      .flatMap(({ facts }) => facts),
  );
}

/** Whether a rule's `when`, on the arguments or the caller alone, does not fire for this call. */
function whenRulesOut(
  policy: CompiledPolicy,
  cond: Condition,
  tool: string,
  args: Readonly<Record<string, unknown>>,
  identity: Identity,
): boolean {
  const { when } = cond;
  if (!when || !(when.path.startsWith('args.') || when.path.startsWith('user.'))) return false;
  const toolArgs: ToolArgs = own(policy.catalog, tool) ?? {};
  try {
    const regex = policy.regexes.get(when);
    return judgeCondition(when, 'deny_if', { tool, args }, identity, toolArgs, regex) === null;
  } catch {
    return false; // not known (a replay's lost value): the facts are read
  }
}

/**
 * The limits of a tool's rules that `applies` keeps (given each limit and its pointer), resolved
 * to their counters at `now`: evaluatePolicy keeps those for the caller; a replay, those that may
 * be.
 */
export function limitsFor(
  policy: CompiledPolicy,
  toolName: string,
  now: number,
  applies: (limit: Limit, rule: string) => boolean,
): AppliedLimit[] {
  return ruleSets(policy, toolName).flatMap(({ at, rules, namespace }) =>
    (rules.limits ?? []).flatMap((limit, i) => {
      const rule = `${at}/limits/${i}`;
      return applies(limit, rule) ? [applyLimit(limit, rule, namespace, now)] : [];
    }),
  );
}

/** A rule's check, naming the rule in the UnknownReached it may throw (never on a live call). */
function atRule<T>(rule: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw err instanceof UnknownReached ? err.at(rule) : err;
  }
}

/** The first limit whose counter has reached its max, as a `limited` decision; else null. */
export function checkLimits(
  limits: readonly AppliedLimit[],
  readings: CounterReadings,
  now: number,
): LimitedDecision | null {
  for (const limit of limits) {
    const count = readings.get(readingKey(limit)) ?? 0;
    if (count >= limit.max) {
      const retry = retryAfterSeconds(limit.window, now);
      return {
        kind: 'limited',
        rule: limit.rule,
        counter: limit.counter,
        retry_after_s: retry,
        reason:
          limit.reason ??
          `Rate limit reached: ${limit.counter} allows ${limit.max} call${limit.max === 1 ? '' : 's'} per ${limit.window} per ${limit.scope}${limit.cluster ? ` on cluster ${limit.cluster}` : ''}. Try again in ${retry} s.`,
      };
    }
  }
  return null;
}

function applyLimit(limit: Limit, rule: string, namespace: string, now: number): AppliedLimit {
  return {
    rule,
    scope: limit.scope,
    key: `${namespace}/${limit.counter}`,
    counter: limit.counter,
    window: limit.window,
    windowStart: windowStart(limit.window, now),
    windowEnd: windowEnd(limit.window, now),
    max: limit.max,
    ...(limit.cluster !== undefined
      ? { clusters: typeof limit.cluster === 'string' ? [limit.cluster] : limit.cluster }
      : {}),
    ...(limit.reason ? { reason: limit.reason } : {}),
  };
}

/** The first rule of a list that fires on the call: where, how (see Refusal), and why. */
interface Fired<C extends Condition> {
  cond: C;
  rule: string;
  refusal: Refusal;
  reason: string;
}

/** A list of rules, and what firing means: a refusal (deny_if, require) or an approval asked. */
type RuleKind = 'deny_if' | 'require' | 'approve_if';

/** Each rule of a list that fires on the call, in order. */
function* matches<C extends Condition>(
  policy: CompiledPolicy,
  conditions: C[] | undefined,
  at: string,
  call: CallView,
  identity: Identity,
  kind: RuleKind,
): Generator<Fired<C>> {
  if (!conditions) return;
  const judgedAs = kind === 'require' ? 'require' : 'deny_if';
  const toolArgs: ToolArgs = own(policy.catalog, call.tool) ?? {};
  for (const [i, cond] of conditions.entries()) {
    const rule = `${at}/${i}`;
    const refusal = atRule(rule, () => {
      const applies = whetherApplies(cond, identity);
      if (applies === false) return null;
      // A rule with `when` is for the calls it fires on as a deny_if ("when the program is ps").
      const { when } = cond;
      if (
        when &&
        judgeCondition(when, 'deny_if', call, identity, toolArgs, policy.regexes.get(when)) === null
      )
        return null;
      const judged = judgeCondition(
        cond,
        judgedAs,
        call,
        identity,
        toolArgs,
        policy.regexes.get(cond),
      );
      // Whom the rule is for matters only when it would refuse.
      if (judged !== null && applies instanceof UnknownReached) throw applies;
      return judged;
    });
    if (refusal === null) continue;
    const unread = unreadOf(cond, call);
    yield {
      cond,
      rule,
      refusal: unread ? 'unread' : refusal,
      reason: unread ?? cond.reason ?? describe(cond, kind, refusal, call),
    };
  }
}

/**
 * A refusal for want of a target fact, worded as such whatever the rule's own reason: a rule for
 * guests tagged prod must not tell a person their guest is tagged prod when that was not read.
 */
function unreadOf(cond: Condition, call: CallView): string | null {
  const why = [cond, ...(cond.when ? [cond.when] : [])]
    .map((c) => ({ path: c.path, why: unreadWhy(c, call) }))
    .find((u) => u.why !== null);
  return why
    ? `Denied by policy: ${why.path} of the guest could not be read from Proxmox (${why.why}), so this rule cannot let the call through.`
    : null;
}

function describe(cond: Condition, kind: RuleKind, refusal: Refusal, call: CallView): string {
  const text = plainDescription(cond, kind, refusal, whoLacks(cond.path, call));
  const { when } = cond;
  return when
    ? `${text.slice(0, -1)} (the rule is for calls where ${when.path} ${when.op} ${JSON.stringify(when.value)}).`
    : text;
}

/** What has no value at a path: the call's arguments, or the guest it acts on (or none). */
function whoLacks(path: string, call: CallView): string {
  if (!path.startsWith('target.')) return 'this call leaves it out';
  if (!call.target) return 'this call acts on no guest';
  return isNoSuchGuest(call.target) ? 'the guest does not exist' : 'the guest has none';
}

/** How an approve_if's reason begins (the call is asked about, not refused). */
const ASKS = "Needs a person's approval by policy";

function plainDescription(
  cond: Condition,
  kind: RuleKind,
  refusal: Refusal,
  lacks: string,
): string {
  const value = JSON.stringify(cond.value);
  const what = cond.aggregate ? `the ${cond.aggregate} of ${cond.path}` : cond.path;
  switch (refusal) {
    case 'not_a_number':
      return cond.aggregate
        ? `Denied by policy: ${what} cannot be computed (a value is not a finite number of at least 0), so the rule ${cond.op} ${value} cannot be checked.`
        : `Denied by policy: ${cond.path} is not a number, so the rule ${cond.op} ${value} cannot be checked.`;
    case 'missing':
      return `${kind === 'approve_if' ? ASKS : 'Denied by policy'}: ${cond.path} ${cond.op} ${value}, and ${lacks} (a value that is not there equals nothing).`;
    case 'unread':
      return `Denied by policy: ${cond.path} could not be read from Proxmox.`;
    case 'absent': {
      const none = cond.path.startsWith('target.') ? lacks : 'this call has none';
      return `Denied by policy: ${cond.path} is required (it must satisfy ${cond.op} ${value}) and ${none}.`;
    }
    case 'matched':
      if (kind === 'approve_if') return `${ASKS}: ${what} ${cond.op} ${value}.`;
      return kind === 'deny_if'
        ? `Denied by policy: ${what} ${cond.op} ${value}.`
        : `Denied by policy: ${what} must satisfy ${cond.op} ${value}.`;
  }
}

/**
 * The refusal that needs no look at the arguments (hidden, not allowed by default, action deny),
 * or null. Checked first, and before a tool reads anything to fill in arguments.
 */
export function refusedOutright(policy: CompiledPolicy, toolName: string): Decision | null {
  const { doc } = policy;
  const tool = own(doc.tools, toolName);
  if (doc.hide?.includes('*') || doc.hide?.includes(toolName)) {
    return { kind: 'deny', rule: '(hidden)', reason: `Tool "${toolName}" is hidden by policy.` };
  }
  if (!tool && doc.default === 'deny') {
    return {
      kind: 'deny',
      rule: '(default deny)',
      reason: `Tool "${toolName}" is not allowed by policy.`,
    };
  }
  if (tool?.action === 'deny') {
    return {
      kind: 'deny',
      rule: `/tools/${toolName}/action`,
      reason: tool.reason ?? `Tool "${toolName}" is denied by policy.`,
    };
  }
  return null;
}

/**
 * Whether tools/list should show the tool: hidden and default-denied tools are left out. A tool
 * listed with `action: deny` stays, so that an agent asked for it learns the policy's reason.
 */
export function isListed(policy: CompiledPolicy, tool: string): boolean {
  const { doc } = policy;
  if (doc.hide?.includes('*') || doc.hide?.includes(tool)) return false;
  return own(doc.tools, tool) !== undefined || doc.default === 'allow';
}
