// One tools/call, start to end, as a pipeline: scope → depth → parse → resolve → gate → run.
// Each step returns the call's end or what the next step takes; ./settle.ts then writes exactly
// one log line and one audit record whatever happened. Failures become isError results; nothing
// the agent sees, logs or stores carries a stack trace or a configured secret.

import type { z } from 'zod';
import type { Json } from '../approvals/types';
import {
  canonicalJson,
  hiddenValues,
  NOT_STORED_TOO_DEEP,
  redactAll,
  redactArgs,
  redactUpstream,
} from '../audit/canonical';
import { INHERITED_KEY, TARGET_KEY } from '../audit/record';
import type { Identity } from '../core/identity';
import { own } from '../core/own';
import { isPropertyValue } from '../core/property-value';
import { guestKey, Unread } from '../policy/conditions';
import { evaluatePolicy, refusedOutright, targetFactsReached } from '../policy/evaluate';
import type { ActivePolicy } from '../policy/source';
import { UNDECIDED_RULES } from '../policy/undecided';
import { policyView } from '../policy/view';
import type { BlastRadius } from '../proxmox/blast-radius';
import { readTargetFacts } from '../proxmox/target-facts';
import { tooDeep, MAX_ARG_DEPTH } from './arg-depth';
import { type ApprovalPort, approvalPort } from './approval-gate';
import type { Conversation } from './conversation';
import { NoIdentity } from './context';
import type { CallHost, CallScope } from './host';
import { callerKey, describeIssues } from './issues';
import { FAILURES, identityRefusal, REASONS, refusalResult, scopeRefusal } from './messages';
import {
  type FactsInput,
  type GateInput,
  type GateResult,
  passGate,
  shownFact,
  type TargetReader,
  targetFor,
} from './policy-gate';
import type { CallOutcome, CallResult } from './result';
import { missingScope } from './scope-gate';
import { type CallEnd, type CallFacts, decided, failureResult, settle } from './settle';
import { shadowDisagreement } from './shadow-judge';
import { PolicyRefusal, ToolFailure, type ToolContext, type ToolSpec } from './tool-spec';
import { type CallSpans, SPAN_ATTRIBUTES, type Stage } from './spans';
import { callTrace, type TraceInput } from './trace';

/** One call as it goes: where it runs, what is known so far, and how its values are redacted. */
interface Call {
  tool: ToolSpec;
  host: CallHost;
  conversation: Conversation | null;
  requestId: string;
  started: number;
  /** The call's spans, of its trace (W3C Trace Context): continued from the client's, or new. */
  spans: CallSpans;
  /** How long it waited for an approval (ms); null where the policy wanted none. */
  approvalWaitMs: number | null;
  active: ActivePolicy;
  facts: CallFacts;
  /** The policy's `sensitive` list for the tool; null while the policy is invalid (hide all). */
  sensitive: readonly string[] | null;
  /** The values redaction hid: they never come back out (result, log line, audit record). */
  hidden: string[];
  scope?: CallScope;
  /** The cluster the call is for (its `cluster` argument, or the default). */
  cluster?: string;
  /** Reads the facts of the call's guest (see targetReader); absent: it acts on none. */
  readTarget?: TargetReader;
  /** The facts of the call's guest read last (see targetReader). */
  target?: Readonly<Record<string, unknown>>;
  /** The names of the facts read (see targetReader): a fact left out of `target` the guest lacks. */
  factsRead?: ReadonlySet<string>;
  /** The facts its policy read before deciding, as stored (see TARGET_KEY). */
  judged?: Readonly<Record<string, unknown>>;
  /** What targetFor gave as the arguments were recorded (see GateInput.targetFound). */
  targetFound?: GateInput['targetFound'];
  /** What the call takes from its source, as `resolve` read it (see Resolved). */
  inherited?: Readonly<Record<string, unknown>>;
}

/** A step's answer: the call's end, or what the next step takes. */
type Step<T> = { end: CallEnd } | { next: T };

/** Validated arguments, and the approval the caller says it holds. */
interface Parsed {
  given: Record<string, unknown>;
  approvalId: string | undefined;
}

/** The name of the argument that says which cluster a call is for (see toolSet). */
const CLUSTER_ARG = 'cluster';

/** The arguments after the server filled in what the caller left to it. */
interface Resolved {
  identity: Identity;
  approvalId: string | undefined;
  args: Record<string, unknown>;
  filled: readonly string[];
  inherited: Readonly<Record<string, unknown>>;
}

type Allowed = Extract<GateResult, { ok: true }> & { port: ApprovalPort };

/**
 * Runs one call. `conversation` is how the person can be asked about it (null: they cannot);
 * a 2026-07-28 conversation suspends the call instead, and the outcome then says what to ask.
 * `trace`: what the request says of its trace (./trace.ts).
 */
export async function runCall(
  tool: ToolSpec,
  input: z.ZodType,
  rawArgs: unknown,
  host: CallHost,
  conversation: Conversation | null,
  trace?: TraceInput,
): Promise<CallOutcome> {
  const call = await open(tool, rawArgs, host, conversation, trace);
  let end: CallEnd;
  try {
    end = await pipeline(call, input, rawArgs);
  } catch (err) {
    end = { result: failureResult(err, call.facts.log) };
    // What went wrong with a call to one of several clusters says which (not a refusal: the
    // policy's own words, with the cluster in its arguments).
    end.result = onOneCluster(call, end.result);
  }
  return settle(host, call.facts, call.scope, end, call, call.hidden);
}

/**
 * A tool's result for a call to one of several clusters, its text led by the cluster's name (a
 * vmid or a node is only unique within one): "Cluster prod: ...". A read across every cluster
 * marks each row instead; with one cluster, the result as it is.
 */
function onOneCluster(call: Call, result: CallResult): CallResult {
  const ctx = call.scope?.ctx;
  if (!ctx || ctx.clusters.length < 2 || call.cluster === undefined) return result;
  if (call.tool.acrossClusters && ctx.cluster === null) return result;
  const [first, ...rest] = result.content;
  if (first?.type !== 'text') return result;
  return {
    ...result,
    content: [{ ...first, text: `Cluster ${call.cluster}: ${first.text}` }, ...rest],
  };
}

async function pipeline(call: Call, input: z.ZodType, rawArgs: unknown): Promise<CallEnd> {
  const stage = <T>(name: Stage, work: () => Promise<T> | T): Promise<T> =>
    call.spans.stage(name, work);
  const identity = await stage('admission', () => admit(call));
  if ('end' in identity) return identity.end;
  const parsed = await stage('validation', () => parse(call, input, rawArgs));
  if ('end' in parsed) return parsed.end;
  const resolved = await resolve(call, identity.next, parsed.next);
  const allowed = await gate(call, resolved);
  if ('end' in allowed) return allowed.end;
  return stage('run', () => run(call, resolved, allowed.next));
}

async function open(
  tool: ToolSpec,
  rawArgs: unknown,
  host: CallHost,
  conversation: Conversation | null,
  traceInput: TraceInput | undefined,
): Promise<Call> {
  const requestId = crypto.randomUUID();
  const trace = callTrace(traceInput);
  const hidden: string[] = [];
  const spans = host.spans(trace, {
    tool: tool.name,
    session: host.sessionId(),
    requestId,
    // A value the call's redaction hid never names a span...
    scrub: (text) => host.scrubber(hidden.length ? hidden : undefined).text(text),
    // ...nor a word of a raw request's path, the caller's own text (the pve:raw tools').
    callersPaths: tool.scope === 'pve:raw',
  });
  const started = host.clock.now();
  const rawKeys =
    rawArgs && typeof rawArgs === 'object' && !Array.isArray(rawArgs)
      ? Object.keys(rawArgs).slice(0, 40).map(callerKey)
      : [];
  const active = await host.policy();
  const facts: CallFacts = {
    log: {
      request_id: requestId,
      tool: tool.name,
      session: host.sessionId(),
      user: '(none)',
      outcome: 'ok',
      arg_keys: rawKeys,
      trace_id: trace.traceId,
    },
    decision: 'none',
    args: {},
    argKeys: rawKeys,
    argsHmac: '',
    approvalId: null,
    // The version in force decides the call and redacts its record, whatever becomes of it.
    policyVersion: active.ok || !active.unavailable ? active.version : null,
  };
  // While the policy is invalid its `sensitive` lists are unknown: no argument value is stored.
  const sensitive = active.ok ? (own(active.policy.doc.tools, tool.name)?.sensitive ?? []) : null;
  return {
    tool,
    host,
    conversation,
    requestId,
    started,
    active,
    facts,
    sensitive,
    hidden,
    spans,
    approvalWaitMs: null,
  };
}

/** Arguments as stored and shown: redacted, with what was hidden remembered. */
function redact(call: Call, args: Record<string, unknown>): Record<string, unknown> {
  const out = call.sensitive ? redactArgs(args, call.sensitive) : redactAll(args);
  hiddenValues(args, out, call.hidden);
  return out;
}

/** Who calls; the token must hold the tool's scope, or nothing else happens. */
function admit(call: Call): Step<Identity> {
  call.scope = call.host.scope(call.requestId, call.spans);
  const identity = call.scope.ctx.identity;
  call.facts.log.user = identity.userId;
  const missing = missingScope(call.tool, identity);
  if (!missing) return { next: identity };
  decided(call.facts, 'deny', 'denied', UNDECIDED_RULES.scope);
  return { end: { result: scopeRefusal(call.tool.name, missing, identity.scopes) } };
}

async function parse(call: Call, input: z.ZodType, rawArgs: unknown): Promise<Step<Parsed>> {
  const { tool, facts } = call;
  const deep = tooDeep(rawArgs, MAX_ARG_DEPTH);
  if (deep !== null) {
    // Nothing deeper is walked (canonical JSON, redaction): a hostile depth could overflow it.
    facts.args = Object.fromEntries(facts.argKeys.map((k) => [k, NOT_STORED_TOO_DEEP]));
    const failure = new ToolFailure('invalid_arguments', FAILURES.invalidArguments(tool.name), [
      { field: deep, message: FAILURES.tooDeep(MAX_ARG_DEPTH) },
    ]);
    return { end: { result: failureResult(failure, facts.log) } };
  }
  const parsed = input.safeParse(rawArgs ?? {}, { reportInput: true });
  if (!parsed.success) {
    facts.args = redact(call, plainArgs(rawArgs));
    facts.argsHmac = await call.host.hmacArgs(canonicalJson(rawArgs ?? {}));
    const failure = new ToolFailure(
      'invalid_arguments',
      FAILURES.invalidArguments(tool.name),
      describeIssues(parsed.error),
    );
    return { end: { result: failureResult(failure, facts.log) } };
  }
  const {
    approval_id: approvalId,
    [CLUSTER_ARG]: cluster,
    ...given
  } = parsed.data as Record<string, unknown> & { approval_id?: string; cluster?: string };
  // The tool never sees `cluster`: its client is that cluster's.
  call.cluster = cluster ?? call.host.clusters[0];
  call.facts.cluster = call.cluster;
  // The spans say which cluster where there are several and the call is for one (a list across
  // every cluster is for none: each request's span names its own).
  const acrossAll = call.tool.acrossClusters && cluster === undefined;
  if (call.cluster !== undefined && call.host.clusters.length > 1 && !acrossAll)
    call.spans.onCluster(call.cluster);
  try {
    if (call.cluster !== undefined) call.scope!.onCluster(call.cluster, cluster !== undefined);
  } catch (err) {
    if (!(err instanceof NoIdentity)) throw err;
    // Refused before the policy: recorded with what was asked, as any refusal is.
    const shown = {
      ...shownArgs(given),
      ...(call.host.clusters.length > 1 ? { [CLUSTER_ARG]: call.cluster } : {}),
    };
    call.facts.args = redact(call, shown);
    call.facts.argKeys = Object.keys(shown);
    decided(call.facts, 'deny', 'denied', UNDECIDED_RULES.identity);
    return { end: { result: identityRefusal(err.message) } };
  }
  return { next: { given, approvalId } };
}

/**
 * Fills in what the caller left to the server (a read, never a write) before the policy decides,
 * unless the policy refuses the tool outright anyway; records the arguments as they are judged.
 */
async function resolve(call: Call, identity: Identity, parsed: Parsed): Promise<Resolved> {
  const { tool, active, facts } = call;
  let resolved: Resolved = { identity, ...parsed, args: parsed.given, filled: [], inherited: {} };
  if (tool.resolve && active.ok && !refusedOutright(active.policy, tool.name)) {
    const filled = await call.spans.stage('resolve', () =>
      tool.resolve!(parsed.given, call.scope!.ctx),
    );
    resolved = {
      ...resolved,
      args: filled.args as Record<string, unknown>,
      filled: filled.filled,
      inherited: filled.inherited ?? {},
    };
  }
  // Where more than one cluster is reached, which one is shown, stored and bound with the rest:
  // an approval to stop VM 104 on lab is not one to stop VM 104 on prod.
  const shown = {
    ...shownArgs(resolved.args),
    ...(call.host.clusters.length > 1 ? { [CLUSTER_ARG]: call.cluster } : {}),
  };
  // What the call takes from its source is shown, stored and bound beside the arguments: an
  // approval covers a clone of the source as it was read, not of whatever it has become.
  const withInherited = Object.keys(resolved.inherited).length
    ? { ...shown, [INHERITED_KEY]: shownArgs(resolved.inherited) }
    : shown;
  // Recorded before anything more is read: a read that fails leaves the arguments in the record.
  facts.args = redact(call, withInherited);
  facts.argKeys = Object.keys(shown);
  call.inherited = resolved.inherited;
  call.readTarget = targetReader(call, resolved.args);
  let judged: Record<string, unknown> | undefined;
  try {
    judged = await judgedFacts(call, factsInput(call, resolved));
  } finally {
    // So are the facts of its guest the policy reads: an approval covers the guest as it was
    // judged. Proxmox's own facts, not the caller's: no `sensitive` name redacts them.
    const bound = judged ? { ...withInherited, [TARGET_KEY]: judged } : withInherited;
    facts.argsHmac = await call.host.hmacArgs(canonicalJson(bound));
  }
  if (judged) {
    facts.args = { ...facts.args, [TARGET_KEY]: judged };
    call.judged = judged;
  }
  return resolved;
}

/** The facts of its guest the policy in force reads, as shown and stored (see TARGET_KEY). */
async function judgedFacts(
  call: Call,
  input: FactsInput,
): Promise<Record<string, unknown> | undefined> {
  const { active } = call;
  if (!active.ok) return undefined;
  const read = await targetFor(active.policy, input);
  call.targetFound = { policy: active.policy, facts: read };
  if (!read) return undefined;
  const { tool, identity, args } = input;
  const wanted = [...targetFactsReached(active.policy, tool, identity, args)].sort();
  return Object.fromEntries(wanted.map((fact) => [fact, shownFact(read[fact])]));
}

/** The call as the policy judges it, and how to read its guest's facts. */
function factsInput(call: Call, { args, inherited, identity }: Resolved): FactsInput {
  const { tool, host } = call;
  return {
    tool: tool.name,
    args: policyArgs(call, seenBy(args, inherited)),
    identity,
    dryRun: tool.dryRun?.(args) ?? false,
    now: host.clock.now(),
    target: call.readTarget,
    guest: guestKey(tool.target?.(args)?.vmid, host.clusters.length > 1 ? call.cluster : undefined),
    made: tool.makes?.(args, inherited) ?? undefined,
  };
}

/** Where approvals for this call are asked and spent, showing exactly what would be sent. */
function approvalsFor(call: Call, resolved: Resolved): ApprovalPort {
  const { tool, host, facts } = call;
  const { args } = resolved;
  const approvals = host.approvals();
  const ctx = { ...call.scope!.ctx, filled: resolved.filled };
  const upstream = async () => shownRequests(call, args, await tool.describeCall?.(args, ctx));
  const port = approvalPort(
    {
      tool: tool.name,
      approvalId: resolved.approvalId,
      shownArgs: facts.args as Record<string, Json>,
      upstream,
      argsHmac: facts.argsHmac,
      identity: resolved.identity,
      blastRadius: tool.blastRadius
        ? async () => onCluster(await tool.blastRadius!(args, ctx), ctx.clusters, call.cluster)
        : null,
      judgedBy: tool.judgedBy ?? [],
    },
    {
      store: approvals.store,
      approvalUrl: approvals.url,
      origin: approvals.origin,
      ttlMs: approvals.ttlMs,
      conversation: call.conversation,
      now: () => host.clock.now(),
    },
  );
  return {
    ...port,
    // The wait for a person (or for the store, for an approval given already), timed for the
    // call's data point.
    resolve: (required) =>
      call.spans.stage('approval wait', async (span) => {
        const asked = host.clock.now();
        span.set({ [SPAN_ATTRIBUTES.rule]: required.rule });
        try {
          const outcome = await port.resolve(required);
          // approved, pending, refused, or ask_next_request (a 2026-07-28 client asked).
          span.set({ [SPAN_ATTRIBUTES.approval]: outcome.kind });
          return outcome;
        } finally {
          call.approvalWaitMs = (call.approvalWaitMs ?? 0) + host.clock.now() - asked;
        }
      }),
  };
}

/** Requests as an approver is shown them: redacted as the call's arguments are. */
function shownRequests(
  call: Call,
  args: Record<string, unknown>,
  rows: Record<string, string> | null | undefined,
): Record<string, string> | null {
  if (!rows) return null;
  return call.sensitive
    ? redactUpstream(rows, call.sensitive, args)
    : (redactAll(rows) as Record<string, string>);
}

/** The policy (with approvals and rate limits), and the shadow version beside it. */
async function gate(call: Call, resolved: Resolved): Promise<Step<Allowed>> {
  const { tool, host, active, facts } = call;
  const { args, filled } = resolved;
  const port = approvalsFor(call, resolved);
  const gateInput: GateInput = {
    ...factsInput(call, resolved),
    judgedTarget: call.judged,
    targetFound: call.targetFound,
    current: () => host.policy(),
    decidedBy: (deciding: ActivePolicy) => {
      facts.policyVersion = deciding.version;
    },
    stage: call.spans.stage.bind(call.spans),
  };
  const result = await call.spans.stage('policy', async (span) => {
    const gated = await passGate(active, host.counters(), gateInput, port);
    span.set(
      gated.ok
        ? { [SPAN_ATTRIBUTES.decision]: 'allow' }
        : 'suspended' in gated
          ? { [SPAN_ATTRIBUTES.decision]: 'approval_required' }
          : {
              [SPAN_ATTRIBUTES.decision]: gated.refusal.kind,
              [SPAN_ATTRIBUTES.rule]: gated.refusal.rule,
            },
    );
    return gated;
  });
  judgeInShadow(call, gateInput);
  if (result.ok) {
    facts.decision = 'allow';
    facts.approvalId = result.approvalId;
    return { next: { ...result, port } };
  }
  if ('suspended' in result) {
    // Nothing ran: the person is asked, and answers with the next request (2026-07-28).
    decided(facts, 'approval_required', 'approval_pending');
    const waiting = { content: [{ type: 'text' as const, text: FAILURES.waitingForPerson }] };
    return { end: { result: waiting, suspended: result.suspended } };
  }
  decided(
    facts,
    result.refusal.kind,
    result.pending ? 'approval_pending' : 'denied',
    result.refusal.rule,
  );
  facts.approvalId = result.pending?.approval_id ?? resolved.approvalId ?? null;
  return {
    end: { result: refusalResult(result.refusal, tool.name, result.pending, pick(args, filled)) },
  };
}

/**
 * Reads the facts of the guest the call acts on (tool.target) that a policy reaches, before it
 * decides: a new guest's are the call's own; an existing guest's are read from Proxmox, again
 * when asked for facts not read yet or for fresh ones (after a person's approval).
 */
function targetReader(call: Call, args: Record<string, unknown>): TargetReader | undefined {
  const target = call.tool.target?.(args);
  if (!target) return undefined;
  const read = new Set<string>();
  call.factsRead = read;
  return async (wanted, fresh) => {
    // The cluster is the call's own: known without asking Proxmox.
    const cluster = wanted.has('cluster') ? { cluster: call.cluster } : {};
    if ('made' in target) {
      call.target = { ...target.made, ...cluster };
      return call.target;
    }
    const toRead = [...wanted].filter((fact) => fact !== 'cluster');
    if (!call.target || fresh || !toRead.every((fact) => read.has(fact))) {
      for (const fact of toRead) read.add(fact);
      call.target = read.size
        ? await call.spans.stage('target reads', () =>
            readTargetFacts(call.scope!.ctx.pve(), target, read, fresh),
          )
        : {};
    }
    call.target = { ...call.target, ...cluster };
    return call.target;
  };
}

/** The blast radius with its guest's cluster, where the server reaches several. */
function onCluster(
  radius: BlastRadius | null,
  clusters: readonly string[],
  cluster: string | undefined,
): BlastRadius | null {
  return radius && cluster !== undefined && clusters.length > 1
    ? { ...radius, guest: { ...radius.guest, cluster } }
    : radius;
}

/** Counts a call the shadow version would have decided otherwise. */
function judgeInShadow(call: Call, gateInput: GateInput): void {
  const { active, host, facts } = call;
  if (!active.ok || !active.shadow) return;
  // As the audit record will keep them, hidden values removed from every field.
  const stored = host.scrubber(call.hidden.length ? call.hidden : undefined).deep(facts.args);
  const disagreement = shadowDisagreement(active, {
    ...gateInput,
    targetFacts: call.target,
    targetOf: call.tool.target,
    makesOf: call.tool.makes,
    inherits: call.tool.inherits,
    newlyInherited: call.tool.newlyInherited,
    stored,
    input: call.tool.input,
    requestId: call.requestId,
  });
  if (disagreement) host.shadowDisagreement(disagreement);
}

async function run(call: Call, resolved: Resolved, allowed: Allowed): Promise<CallEnd> {
  const { tool, facts } = call;
  const scope = call.scope!;
  const { args, inherited, identity } = resolved;
  const ctx: ToolContext = {
    ...scope.ctx,
    filled: resolved.filled,
    recheck: (next, cluster) =>
      recheckPolicy(
        call,
        next,
        seenBy(next, inherited),
        identity,
        allowed.approvalId !== null,
        cluster,
      ),
    checkApproved: (requests) => {
      const { approved } = allowed;
      if (approved && !sameRows(approved.upstream, shownRequests(call, args, requests)))
        throw new PolicyRefusal(approved.rule, REASONS.requestsChangedSinceApproval);
    },
  };
  try {
    const success = await tool.run(args, ctx);
    facts.log.outcome = success.isError ? 'failed' : 'ok';
    return {
      result: onOneCluster(call, {
        content: [{ type: 'text', text: success.text }],
        structuredContent: success.structured as Record<string, unknown>,
        ...(success.isError ? { isError: true } : {}),
      }),
    };
  } catch (err) {
    // A call that failed before any write went out gives back its rate-limit slot and its
    // approval. Once a write was sent, whatever Proxmox answered (an error, nothing), both stay
    // spent: some Proxmox handlers do part of the work before they fail, and a returned approval
    // would let one person's yes send a second write.
    if (!scope.upstream().some((c) => c.method !== 'GET')) {
      if (allowed.release) await allowed.release().catch(() => undefined);
      if (allowed.approvalId) await allowed.port.restore(allowed.approvalId).catch(() => undefined);
    }
    if (!(err instanceof PolicyRefusal)) throw err;
    decided(facts, 'deny', 'denied', err.rule);
    return {
      result: refusalResult({ kind: 'deny', rule: err.rule, reason: err.reason }, tool.name),
    };
  }
}

/**
 * The policy's answer for changed arguments in the middle of a call (no new limit slot: it is
 * the same call). An approval covered the arguments as approved, so a change needs a new one.
 * `cluster`: the same arguments as a call to that cluster (a list over every cluster): one that
 * needs an approval of its own, or whose calls a limit counts apart, is refused (the person
 * approved, and the limits counted, the call to its own cluster; naming the other asks anew).
 */
function recheckPolicy(
  call: Call,
  next: Record<string, unknown>,
  seen: Record<string, unknown>,
  identity: Identity,
  approved: boolean,
  cluster?: string,
): void {
  const { active, tool, host } = call;
  if (!active.ok)
    throw new PolicyRefusal(UNDECIDED_RULES.invalidPolicy, REASONS.invalidPolicyMidCall);
  // A new guest is as the changed call would make it; an existing one, as it was read (a fact
  // its rules reach only now, never read, refuses).
  const changed = tool.target?.(next);
  const args = policyArgs(call, seen, cluster);
  // The cluster is known whatever was read: the one the changed call is for.
  const own = { cluster: cluster ?? call.cluster };
  let target = call.target;
  if (changed && 'made' in changed) target = { ...changed.made, ...own };
  else if (changed) {
    const reached = targetFactsReached(active.policy, tool.name, identity, args);
    const unread = [...reached].filter((fact) => fact !== 'cluster' && !call.factsRead?.has(fact));
    const why = new Unread('it was not read for the call as first asked');
    if (unread.length)
      target = { ...Object.fromEntries(unread.map((fact) => [fact, why])), ...call.target };
    target = { ...target, ...own };
  }
  const made = tool.makes?.(next, call.inherited ?? {}) ?? undefined;
  const view = { tool: tool.name, args, target, made };
  const judge = (approved: boolean) =>
    evaluatePolicy(active.policy, { ...view, approved }, identity, null, host.clock.now());
  const elsewhere = cluster !== undefined && cluster !== call.cluster;
  let decision = judge(false);
  if (decision.kind === 'approval_required') {
    // Another cluster of a list needs an approval of its own: the person approved this one.
    if (elsewhere)
      throw new PolicyRefusal(decision.rule, REASONS.approvedApart(decision.reason, cluster));
    if (!approved) throw new PolicyRefusal(decision.rule, decision.reason);
    if (cluster === undefined) throw new PolicyRefusal(decision.rule, REASONS.changedSinceApproval);
    // The list's own cluster, as approved.
    decision = judge(true);
  }
  if (decision.kind !== 'allow') throw new PolicyRefusal(decision.rule, decision.reason);
  const counted = elsewhere && decision.limits.find((limit) => limit.cluster !== undefined);
  if (counted)
    throw new PolicyRefusal(counted.rule, REASONS.countedApart(counted.counter, cluster!));
}

/** What the policy judges: the arguments, and for each one the call leaves out, what it inherits. */
function seenBy(
  args: Record<string, unknown>,
  inherited: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const seen: Record<string, unknown> = { ...inherited };
  for (const [key, value] of Object.entries(args)) if (value !== undefined) seen[key] = value;
  return seen;
}

/**
 * The arguments as the policy sees them: typed fields of property strings, and `args.cluster`,
 * the cluster the call is for, the default filled in (as vm_type is), never anything else's.
 */
function policyArgs(
  call: Call,
  seen: Record<string, unknown>,
  cluster = call.cluster,
): Record<string, unknown> {
  return { ...policyView(seen), [CLUSTER_ARG]: cluster };
}

/** Arguments as shown and hashed: property strings by their canonical text. */
function shownArgs(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) continue;
    out[key] = isPropertyValue(value) ? value.text : value;
  }
  return out;
}

/** Whether two sets of request rows are the same, row for row. */
function sameRows(
  a: Readonly<Record<string, string>> | null,
  b: Readonly<Record<string, string>> | null,
): boolean {
  if (a === null || b === null) return a === b;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && b[k] === a[k])
  );
}

function pick(args: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
}

function plainArgs(raw: unknown): Record<string, unknown> {
  return raw && typeof raw === 'object' && !Array.isArray(raw)
    ? (raw as Record<string, unknown>)
    : { '(arguments)': raw ?? null };
}
