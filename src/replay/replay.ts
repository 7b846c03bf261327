// Replay: a candidate policy judged against recorded calls (the audit trail: redacted arguments,
// identity, time), limits counted in time order, reporting every call whose decision would change
// and every one the record cannot settle. Pure: no storage, no clock; the records are given.
//
// Each call is decided as policy-gate.ts decides it live: evaluatePolicy at the record's time; a
// preview (the tool's dryRun) needs no approval and takes no slot; an allowed call takes one slot
// per limit, and is limited when one is used up. A call a person approved is judged approved: an
// approval the candidate asks for was given (who gave it is not recorded, so `approvers` are not
// checked again). A decision is its kind: the same kind by another rule is no change.
//
// Unknown, never guessed: a call is unknown when a rule it reaches needs a value its record lost
// (./recorded-call.ts) or groups it never recorded, and the slots it may have taken count as
// maybe taken (./slots.ts). Counters start empty at the first record given: a replay from the
// middle of a window undercounts that window. Outside policy/, which must not import counters/
// (their folder imports it) nor the audit trail's markers.

import type { z } from 'zod';
import type { AuditDecision, StoredAuditRecord } from '../audit/record';
import { UNDECIDED_RULES } from '../policy/undecided';
import type { Identity } from '../core/identity';
import { type CallView, guestKey } from '../policy/conditions';
import { DEFAULT_CLUSTER } from '../core/default-cluster';
import {
  evaluatePolicy,
  callLimits,
  limitsFor,
  type AppliedLimit,
  type Decision,
} from '../policy/evaluate';
import type { CompiledPolicy } from '../policy/load';
import { whetherApplies } from '../policy/principals';
import { UnknownReached, UnknownValue, unknownList } from '../policy/unknown';
import {
  clusterOf,
  keptFacts,
  type MakesOf,
  recordedCall,
  recordedGuest,
  recordedMade,
  recordedTarget,
  type TargetOf,
} from './recorded-call';
import { ReplaySlots, type SlotClaim, type SlotOwner } from './slots';

/** A tool as a replay needs it: its input schema (to read arguments back) and its dryRun. */
export interface ReplayTool {
  input: z.ZodObject;
  dryRun?(args: Record<string, unknown>): boolean;
  /** The guest a call acts on (recordedTarget: what a record tells of it). */
  target?: TargetOf;
  /** The guest a call makes beside it (recordedMade). */
  makes?: MakesOf;
  /** What it takes from its source (ToolSpec.inherits), and what it began to take later. */
  inherits?: Readonly<Record<string, readonly string[] | null>>;
  newlyInherited?: readonly string[];
}

export type ReplayRecord = Pick<
  StoredAuditRecord,
  | 'id'
  | 'ts'
  | 'request_id'
  | 'user_id'
  | 'user_email'
  | 'client_id'
  | 'grant_id'
  | 'session'
  | 'tool'
  | 'args'
  | 'decision'
  | 'rule'
  | 'approval_channel'
  | 'approval_id'
> & {
  /** The caller's groups; undefined or null on records from before groups were recorded. */
  user_groups?: string[] | null;
  /** The token's scopes; undefined or null on records from before scopes were recorded. */
  user_scopes?: string[] | null;
};

export type ReplayDecision = Exclude<AuditDecision, 'none'> | 'unknown';

export interface ReplayAfter {
  decision: ReplayDecision;
  rule: string | null;
  reason?: string;
  /** What an unknown decision depends on: `args.params.site-secret`, `user.groups`... */
  unknown?: string;
}

export interface ReplayChange {
  request_id: string;
  ts: number;
  /** The caller's email, else their user id. */
  user: string;
  tool: string;
  /** The cluster the call was for, where the server reached several. */
  cluster?: string;
  before: { decision: Exclude<AuditDecision, 'none'>; rule: string | null };
  after: ReplayAfter;
  /**
   * The facts of its guest the record keeps (pool, tags...: those its policy read; a fact not
   * read as `unread: <why>`), which `target.` rules are replayed on; absent: none kept.
   */
  guest?: Record<string, unknown>;
}

export interface ReplayTotals {
  /** Records decided again: unchanged + changed + unknown. */
  replayed: number;
  /** Records no policy decided (invalid arguments, a store or the policy unavailable). */
  skipped: number;
  unchanged: number;
  /** Calls whose decision would change (unknown ones not counted). */
  changed: number;
  /** Calls the record cannot settle; listed among the changes for a person to look at. */
  unknown: number;
  /** By `before→after` ("allow→deny", "deny→unknown"), changes and unknowns alike. */
  by_change: Record<string, number>;
}

export interface ReplayReport {
  /** Records considered. */
  calls: number;
  /** Every call whose decision would change or is unknown, oldest first. */
  changed: ReplayChange[];
  totals: ReplayTotals;
}

const SKIPPED_RULES: ReadonlySet<string> = new Set(Object.values(UNDECIDED_RULES));

const GROUPS_NOT_RECORDED = new UnknownValue('user.groups', 'the record predates group recording');
const SCOPES_NOT_RECORDED = new UnknownValue(
  'user.scopes',
  "the record predates the recording of the token's scopes",
);

/**
 * `records` oldest first (they are put in time order anyway: limits are counted in it);
 * `defaultCluster`: the cluster a record that names none was for (the server's default).
 */
export function replayPolicy(
  candidate: CompiledPolicy,
  records: readonly ReplayRecord[],
  tools: ReadonlyMap<string, ReplayTool>,
  defaultCluster: string = DEFAULT_CLUSTER,
): ReplayReport {
  const slots = new ReplaySlots();
  const changed: ReplayChange[] = [];
  const totals: ReplayTotals = {
    replayed: 0,
    skipped: 0,
    unchanged: 0,
    changed: 0,
    unknown: 0,
    by_change: {},
  };
  const ordered = [...records].sort((a, b) => a.ts - b.ts || a.id - b.id);
  for (const record of ordered) {
    const { decision, rule } = record;
    if (decision === 'none' || (rule !== null && SKIPPED_RULES.has(rule))) {
      totals.skipped++;
      continue;
    }
    totals.replayed++;
    const after = replayCall(
      candidate,
      record,
      tools.get(record.tool) ?? null,
      slots,
      defaultCluster,
    );
    if (after.decision === decision || personSaidNo(record, after)) {
      totals.unchanged++;
      continue;
    }
    if (after.decision === 'unknown') totals.unknown++;
    else totals.changed++;
    const kind = `${decision}→${after.decision}`;
    totals.by_change[kind] = (totals.by_change[kind] ?? 0) + 1;
    changed.push({
      request_id: record.request_id,
      ts: record.ts,
      user: record.user_email ?? record.user_id,
      tool: record.tool,
      before: { decision, rule },
      after,
      ...clusterOf(record.args),
      ...withFacts(record),
    });
  }
  return { calls: records.length, changed, totals };
}

/** What the candidate decides for one recorded call, taking its slots. */
function replayCall(
  candidate: CompiledPolicy,
  record: ReplayRecord,
  tool: ReplayTool | null,
  slots: ReplaySlots,
  defaultCluster: string,
): ReplayAfter {
  const identity = identityOf(record);
  const owner: SlotOwner = { identity, session: record.session };
  const recorded = recordedCall(
    record.args,
    tool?.input ?? null,
    tool?.inherits,
    tool?.newlyInherited,
  );
  // A record keeps its cluster where the server reached several (its guests then counted per
  // cluster, see guestKey); a record without one was a call to the default, as args.cluster says.
  const cluster = typeof recorded.view.cluster === 'string' ? recorded.view.cluster : undefined;
  recorded.view.cluster ??= defaultCluster;
  let preview: boolean | UnknownReached | undefined;
  const isPreview = (): boolean | UnknownReached => (preview ??= previewOf(tool, recorded.args));
  const counted = (limits: Limits, whom: UnknownValue | null): ReplayAfter => {
    if (!limits.sure.length && !limits.maybe.length) return allowed();
    const dry = isPreview();
    // A preview takes no slot (policy-gate.ts).
    if (dry === true) return allowed();
    const claim: SlotClaim = {
      ...limits,
      whom,
      preview: dry instanceof UnknownReached ? dry.unknown : false,
    };
    const answer = slots.take(claim, owner, record.ts);
    switch (answer.kind) {
      case 'allow':
        return allowed();
      case 'limited':
        return { decision: 'limited', rule: answer.rule, reason: answer.reason };
      case 'unknown':
        return {
          decision: 'unknown',
          rule: answer.rule,
          reason: answer.reason,
          unknown: answer.unknown,
        };
    }
  };

  // A person's approval was spent on the call (it then ran, or a limit stopped it).
  const approved =
    record.approval_id !== null && (record.decision === 'allow' || record.decision === 'limited');
  const call: CallView = {
    tool: record.tool,
    args: recorded.view,
    target: recordedTarget(
      tool?.target,
      recorded.args,
      recorded.facts,
      typeof recorded.view.cluster === 'string' ? recorded.view.cluster : undefined,
    ),
    guest: guestKey(recordedGuest(tool?.target, recorded.args), cluster),
    made: recordedMade(tool?.makes, recorded.args, recorded.inherited),
    ...(approved ? { approved: true } : {}),
  };
  const decide = (view: CallView): Decision =>
    evaluatePolicy(candidate, view, identity, null, record.ts);
  let decision: Decision;
  try {
    decision = decide(call);
    if (decision.kind === 'approval_required') {
      const dry = isPreview();
      // Allowed as a preview only, and a preview takes no slot: nothing more is unknown.
      if (dry instanceof UnknownReached) return unknownAfter(dry.at(decision.rule));
      // A preview sends nothing to Proxmox: it needs no approval (the confirmed call will).
      if (dry) decision = decide({ ...call, approved: true });
    }
  } catch (err) {
    if (!(err instanceof UnknownReached)) throw err;
    const limits = limitsOf(candidate, record, identity, call);
    // Limits come last: every rule before them let the call through, so it is allowed unless a
    // limit whose principals cannot be judged is used up.
    if (limits.maybe.some((limit) => limit.rule === err.rule)) return counted(limits, err.unknown);
    // It may have been allowed, taking the slots of every limit that may apply to it.
    if (isPreview() !== true) slots.mayTake([...limits.sure, ...limits.maybe], owner);
    return unknownAfter(err);
  }
  if (decision.kind !== 'allow')
    return { decision: decision.kind, rule: decision.rule, reason: decision.reason };
  return counted({ sure: decision.limits, maybe: [] }, null);
}

const allowed = (): ReplayAfter => ({ decision: 'allow', rule: null });

function withFacts(record: ReplayRecord): { guest?: Record<string, unknown> } {
  const guest = keptFacts(record.args);
  return guest ? { guest } : {};
}

/**
 * A person refused the approval the call asked for (its approval recorded beside a denial by the
 * rule that asks for one): a candidate that asks for the same approval changes nothing.
 */
function personSaidNo(record: ReplayRecord, after: ReplayAfter): boolean {
  return (
    record.decision === 'deny' &&
    record.approval_id !== null &&
    after.decision === 'approval_required' &&
    after.rule === record.rule
  );
}

/** The candidate's limits for the caller: those that apply, and those that may (groups unknown). */
interface Limits {
  sure: readonly AppliedLimit[];
  maybe: readonly AppliedLimit[];
}

function limitsOf(
  candidate: CompiledPolicy,
  record: ReplayRecord,
  identity: Identity,
  call: CallView,
): Limits {
  const where = (applies: (answer: boolean | UnknownReached) => boolean) =>
    callLimits(
      limitsFor(candidate, record.tool, record.ts, (limit) =>
        applies(whetherApplies(limit, identity)),
      ),
      call,
    );
  return {
    sure: where((answer) => answer === true),
    maybe: where((answer) => answer instanceof UnknownReached),
  };
}

/** Who called, as the record says; groups or scopes nobody recorded are unknown, never taken as none. */
function identityOf(record: ReplayRecord): Identity {
  return {
    userId: record.user_id,
    email: record.user_email ?? undefined,
    groups: record.user_groups ?? unknownList(GROUPS_NOT_RECORDED),
    clientId: record.client_id,
    grantId: record.grant_id,
    scopes: record.user_scopes ?? unknownList(SCOPES_NOT_RECORDED),
  };
}

/** Whether the call was a preview (policy-gate.ts: no approval, no slot), or what that needs. */
function previewOf(
  tool: ReplayTool | null,
  args: Record<string, unknown>,
): boolean | UnknownReached {
  if (!tool)
    return new UnknownReached(
      '(preview)',
      new UnknownValue('(tool)', 'the server offers this tool no more'),
    );
  try {
    return tool.dryRun?.(args) ?? false;
  } catch (err) {
    if (err instanceof UnknownReached) return err;
    throw err;
  }
}

function unknownAfter(err: UnknownReached): ReplayAfter {
  return {
    decision: 'unknown',
    rule: err.rule,
    reason: `${err.message}.`,
    unknown: err.unknown.field,
  };
}
