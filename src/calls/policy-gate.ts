// Where the policy meets a call: evaluate (pure), ask for a person's approval where the policy
// wants one, then reserve rate-limit slots in the counter store. Fails closed: a broken policy
// or a store that cannot answer denies the call. What the agent reads for a refusal is written in
// ./messages.ts.

import { errorText, logLine } from '../log';
import { reserveLimits, type CounterBackend } from '../counters/reserve';
import type { Identity } from '../core/identity';
import {
  decidesWithoutTarget,
  evaluatePolicy,
  refusedOutright,
  targetFactsReached,
  type Decision,
} from '../policy/evaluate';
import { type CompiledPolicy, formatErrors } from '../policy/load';
import { type GuestKey, Unread } from '../policy/conditions';
import { UNREAD_PREFIX } from '../audit/record';
import { type ActivePolicy, policyLabel } from '../policy/source';
import { UNDECIDED_RULES } from '../policy/undecided';
import { type ApprovalPort, ELICITED } from './approval-gate';
import type { AskNext } from './conversation';
import { type PendingApproval, REASONS, type Refusal } from './messages';
import { type CallSpans, SPAN_ATTRIBUTES } from './spans';

export type GateResult =
  | {
      ok: true;
      release: (() => Promise<void>) | null;
      approvalId: string | null;
      /** What the approval spent on it covers: the requests a person saw, under which rule. */
      approved: Approved | null;
    }
  | { ok: false; refusal: Refusal; pending?: PendingApproval }
  /** Nothing ran: the person is asked, and answers with the next request (2026-07-28). */
  | { ok: false; suspended: AskNext };

type Refused = Extract<GateResult, { ok: false }>;

export interface GateInput {
  tool: string;
  /** Validated arguments in their policy view (property strings as field objects). */
  args: Record<string, unknown>;
  /**
   * Reads the facts of the guest the call acts on that a policy's rules reach (see
   * CallView.target), before that policy decides; absent: the call acts on no guest.
   */
  target?: TargetReader;
  identity: Identity;
  /** A preview or read that writes nothing: no rate-limit slot is taken. */
  dryRun: boolean;
  now: number;
  /**
   * The policy in force now: asked again once an approval was given (a person may take minutes
   * to answer in the conversation, and a version activated meanwhile decides the call).
   */
  current?: () => Promise<ActivePolicy>;
  /** Told which version decided, when it is not the one the call began with. */
  decidedBy?: (active: ActivePolicy) => void;
  /** The facts of the call's guest as the person asked saw them (read before asking). */
  judgedTarget?: Readonly<Record<string, unknown>>;
  /**
   * What targetFor gave for this very input under `policy` (the facts, or none: the policy
   * decides without them), found as the call's arguments were recorded: the gate, deciding under
   * the same policy, takes it instead of judging again whether to read.
   */
  targetFound?: { policy: CompiledPolicy; facts: Readonly<Record<string, unknown>> | undefined };
  /** The id of the guest the call acts on (or makes), for `guest` limits. */
  guest?: GuestKey;
  /** The guest the call makes beside the one it acts on, for `new.` rules (CallView.made). */
  made?: Readonly<Record<string, unknown>>;
  /** Runs a stage of the call as a span of its own (../calls/spans.ts): the limits' reservation. */
  stage?: CallSpans['stage'];
}

/**
 * The `wanted` facts of the call's guest; `fresh`: read again, whatever was read before (once a
 * person approved, minutes may have passed).
 */
export type TargetReader = (
  wanted: ReadonlySet<string>,
  fresh: boolean,
) => Promise<Readonly<Record<string, unknown>> | undefined>;

/**
 * The facts `policy` reaches of the call's guest (and `also` these), read unless it refuses the
 * tool outright or decides the call without them (`approved`: once a person approved it).
 */
export async function targetFor(
  policy: CompiledPolicy,
  input: FactsInput,
  fresh = false,
  also: readonly string[] = [],
  approved = false,
): Promise<Readonly<Record<string, unknown>> | undefined> {
  if (!input.target || refusedOutright(policy, input.tool)) return undefined;
  const reached = targetFactsReached(policy, input.tool, input.identity, input.args);
  const wanted = new Set([...reached, ...also]);
  const { tool, args, guest, made, identity, now, dryRun } = input;
  const call = { tool, args, guest, made, approved };
  if (!wanted.size || (!also.length && decidesWithoutTarget(policy, call, identity, now, dryRun)))
    return undefined;
  return input.target(wanted, fresh);
}

/** What deciding whether to read the guest's facts takes of a call. */
export type FactsInput = Pick<
  GateInput,
  'tool' | 'target' | 'identity' | 'args' | 'dryRun' | 'now' | 'guest' | 'made'
>;

/** A fact as shown and stored: null when the guest has none, why when it could not be read. */
export function shownFact(value: unknown): unknown {
  if (value instanceof Unread) return `${UNREAD_PREFIX}${value.why}`;
  return value === undefined ? null : value;
}

/** The facts a person approved the call on that its guest no longer has as they were. */
function factsChanged(
  approved: Readonly<Record<string, unknown>>,
  now: Readonly<Record<string, unknown>>,
): string[] {
  return Object.keys(approved).filter(
    (fact) => JSON.stringify(approved[fact]) !== JSON.stringify(shownFact(now[fact])),
  );
}

/** A person's approval of a call: the requests they were shown (null: none could be read). */
export interface Approved {
  rule: string;
  upstream: Record<string, string> | null;
}

/** The policy's decision once any approval it wanted is spent, and that approval's id. */
interface Decided {
  decision: Decision;
  approvalId: string | null;
  approved: Approved | null;
}

const deny = (rule: string, reason: string): Refused => ({
  ok: false,
  refusal: { kind: 'deny', rule, reason },
});

export async function passGate(
  active: ActivePolicy,
  counters: CounterBackend,
  input: GateInput,
  approvals: ApprovalPort | null = null,
): Promise<GateResult> {
  if (!active.ok && active.unavailable)
    return deny(UNDECIDED_RULES.policyStore, REASONS.policyStore);
  if (!active.ok) {
    logLine('error', 'policy_invalid', {
      origin: policyLabel(active),
      errors: formatErrors(active.errors).slice(0, 2000),
    });
    return deny(UNDECIDED_RULES.invalidPolicy, REASONS.invalidPolicy(policyLabel(active)));
  }
  const decided = await decide(active, input, approvals);
  if ('ok' in decided) return decided;
  const { decision, approvalId, approved } = decided;
  // A spent approval is given back when the call is refused after all (limits, store errors).
  const giveBack = async (): Promise<void> => {
    if (approvalId && approvals) await approvals.restore(approvalId).catch(() => undefined);
  };
  if (decision.kind !== 'allow') {
    await giveBack();
    return { ok: false, refusal: decision };
  }
  if (input.dryRun || decision.limits.length === 0)
    return { ok: true, release: null, approvalId, approved };
  try {
    const reserve = () => reserveLimits(decision.limits, input.identity, counters, input.now);
    const reservation = await (input.stage
      ? input.stage('limits', async (span) => {
          const reserved = await reserve();
          if (!reserved.ok) {
            const { kind, rule } = reserved.decision as Refusal;
            span.set({ [SPAN_ATTRIBUTES.decision]: kind, [SPAN_ATTRIBUTES.rule]: rule });
          }
          return reserved;
        })
      : reserve());
    if (!reservation.ok) await giveBack();
    return reservation.ok
      ? { ok: true, release: reservation.release, approvalId, approved }
      : { ok: false, refusal: reservation.decision as Refusal };
  } catch (err) {
    await giveBack();
    logLine('error', 'counter_store_error', { error: errorText(err) });
    return deny(UNDECIDED_RULES.counterStore, REASONS.counterStore);
  }
}

/** The policy's decision for a valid policy, with a person asked where it wants one. */
async function decide(
  active: Extract<ActivePolicy, { ok: true }>,
  input: GateInput,
  approvals: ApprovalPort | null,
): Promise<Decided | Refused> {
  const found = input.targetFound;
  const target =
    found?.policy === active.policy ? found.facts : await targetFor(active.policy, input);
  const call = { tool: input.tool, args: input.args, target, guest: input.guest, made: input.made };
  let decision = evaluatePolicy(active.policy, call, input.identity, null, input.now);
  if (decision.kind === 'approval_required' && input.dryRun) {
    // A preview sends nothing to Proxmox: it needs no approval (the confirmed call will).
    decision = evaluatePolicy(
      active.policy,
      { ...call, approved: true },
      input.identity,
      null,
      input.now,
    );
  }
  if (decision.kind !== 'approval_required') return { decision, approvalId: null, approved: null };
  if (!approvals) {
    return { ok: false, refusal: { ...decision, reason: REASONS.noApprovals(decision.reason) } };
  }
  let outcome;
  try {
    outcome = await approvals.resolve(decision);
  } catch (err) {
    logLine('error', 'approval_store_error', { error: errorText(err) });
    return deny(UNDECIDED_RULES.approvalStore, REASONS.approvalStore);
  }
  if (outcome.kind === 'ask_next_request') return { ok: false, suspended: outcome };
  if (outcome.kind === 'refused') return deny(decision.rule, outcome.reason);
  if (outcome.kind === 'pending') {
    const { kind: _pending, ...pending } = outcome;
    return { ok: false, refusal: decision, pending };
  }
  const after = await afterApproval(active, input, approvals, outcome.approvalId, decision.rule);
  if ('ok' in after) return after;
  return { ...after, approved: { rule: decision.rule, upstream: outcome.upstream } };
}

/** Approved: the rest of the policy (limits) still applies, as the policy in force now says. */
async function afterApproval(
  active: Extract<ActivePolicy, { ok: true }>,
  input: GateInput,
  approvals: ApprovalPort,
  approvalId: string,
  rule: string,
): Promise<Omit<Decided, 'approved'> | Refused> {
  let deciding: ActivePolicy = active;
  if (input.current) {
    deciding = await input.current();
    if (deciding.version !== active.version) input.decidedBy?.(deciding);
    if (!deciding.ok) {
      await approvals.restore(approvalId).catch(() => undefined);
      return deny(
        deciding.unavailable ? UNDECIDED_RULES.policyStore : UNDECIDED_RULES.invalidPolicy,
        REASONS.policyAfterApproval,
      );
    }
  }
  // The guest as it is now, not as it was when the person was asked: an approval is for the
  // guest as it was judged, and a change to a fact it was judged on needs a new one. An approval
  // spent with approval_id was given on facts bound to the call (its argsHmac keeps those read
  // for this request), so only an answer given in this request, perhaps minutes after the read,
  // needs them read again.
  const judged = input.judgedTarget;
  const target = await targetFor(
    deciding.policy,
    input,
    approvalId === ELICITED,
    judged ? Object.keys(judged) : [],
    true,
  );
  // (No facts at all: the policy in force refuses the tool outright, which decides it below.)
  const changed = judged && target ? factsChanged(judged, target) : [];
  if (changed.length) {
    await approvals.restore(approvalId).catch(() => undefined);
    return deny(rule, REASONS.targetChangedSinceApproval(changed));
  }
  const decision = evaluatePolicy(
    deciding.policy,
    {
      tool: input.tool,
      args: input.args,
      target,
      guest: input.guest,
      made: input.made,
      approved: true,
    },
    input.identity,
    null,
    input.now,
  );
  return { decision, approvalId };
}
