// One tools/call, start to end: identity, argument validation, the reads that fill in what the
// caller left to the server, policy (with approvals and rate limits), the tool, and exactly one
// log line and one audit record whatever happened. Failures become isError results here;
// nothing the agent sees, logs or stores carries a stack trace or a configured secret.

import type { z } from 'zod';
import type { Json } from '../approvals/types';
import {
  canonicalJson,
  hiddenValues,
  NOT_STORED_TOO_DEEP,
  REDACTED,
  redactAll,
  redactArgs,
  redactUpstream,
} from '../audit/canonical';
import {
  INHERITED_KEY,
  type ApprovalChannel,
  type AuditDecision,
  type AuditRecord,
} from '../audit/record';
import type { Identity } from '../identity';
import { own } from '../own';
import { isPropertyValue } from '../property-value';
import { evaluatePolicy, refusedOutright } from '../policy/evaluate';
import type { ActivePolicy } from '../policy/source';
import { policyView } from '../policy/view';
import { PveError } from '../proxmox/errors';
import { StoreTimeout } from '../stores/deadline';
import { tooDeep, MAX_ARG_DEPTH } from './arg-depth';
import { approvalPort, ELICITED } from './approval-gate';
import { callerKey, describeIssues } from './issues';
import { logToolCall, type ToolCallLog } from './log';
import { passGate, refusalResult, UNDECIDED_RULES } from './policy-gate';
import type { AskNext, Conversation } from './conversation';
import type { CallHost, CallScope } from './host';
import type { CallOutcome, CallResult } from './result';
import { missingScope, scopeRefusal } from './scope-gate';
import { shadowDisagreement } from './shadow-judge';
import type { Scope } from '../scopes';
import { PolicyRefusal, ToolFailure, type ToolContext, type ToolSpec } from './tool-spec';

/** The token lacks the tool's scope: the call stops before anything else (./scope-gate.ts). */
class ScopeMissing extends Error {
  constructor(
    readonly scope: Scope,
    readonly held: readonly string[],
  ) {
    super(`scope ${scope} not granted`);
  }
}

/** What is known about a call as it goes; becomes the log line and the audit record. */
interface CallFacts {
  log: ToolCallLog;
  decision: AuditDecision;
  args: Record<string, unknown>;
  argKeys: string[];
  argsHmac: string;
  approvalId: string | null;
  /** The version of the policy that decided; null until the policy is asked. */
  policyVersion: number | null;
}

/**
 * Runs one call. `conversation` is how the person can be asked about it (null: they cannot);
 * a 2026-07-28 conversation suspends the call instead, and the outcome then says what to ask.
 */
export async function runCall(
  tool: ToolSpec,
  input: z.ZodType,
  rawArgs: unknown,
  host: CallHost,
  conversation: Conversation | null,
): Promise<CallOutcome> {
  const requestId = crypto.randomUUID();
  const started = host.clock.now();
  const rawKeys =
    rawArgs && typeof rawArgs === 'object' && !Array.isArray(rawArgs)
      ? Object.keys(rawArgs).slice(0, 40).map(callerKey)
      : [];
  const facts: CallFacts = {
    log: {
      request_id: requestId,
      tool: tool.name,
      session: host.sessionId(),
      user: '(none)',
      outcome: 'ok',
      arg_keys: rawKeys,
    },
    decision: 'none',
    args: {},
    argKeys: rawKeys,
    argsHmac: '',
    approvalId: null,
    policyVersion: null,
  };
  const active = await host.policy();
  // The version in force decides the call and redacts its record, whatever becomes of it.
  facts.policyVersion = active.ok || !active.unavailable ? active.version : null;
  const scrub = host.scrubber();
  // While the policy is invalid its `sensitive` lists are unknown: no argument value is stored.
  const sensitive = active.ok ? (own(active.policy.doc.tools, tool.name)?.sensitive ?? []) : null;
  // What redaction hid never comes back out either: not in the result (a preview's exact
  // request, an error echoing it), the log line or the audit record's texts.
  const hidden: string[] = [];
  const redact = (args: Record<string, unknown>): Record<string, unknown> => {
    const out = sensitive ? redactArgs(args, sensitive) : redactAll(args);
    hiddenValues(args, out, hidden);
    return out;
  };
  const redactSent = (
    params: Record<string, string>,
    args: Record<string, unknown>,
  ): Record<string, string> =>
    sensitive
      ? redactUpstream(params, sensitive, args)
      : (redactAll(params) as Record<string, string>);
  let scope: CallScope | undefined;
  let result: CallResult;
  let suspended: AskNext | null = null;
  try {
    scope = host.scope(requestId);
    const identity = scope.ctx.identity;
    facts.log.user = identity.userId;
    const missing = missingScope(tool, identity);
    if (missing) throw new ScopeMissing(missing, identity.scopes);
    const deep = tooDeep(rawArgs, MAX_ARG_DEPTH);
    if (deep !== null) {
      // Nothing deeper is walked (canonical JSON, redaction): a hostile depth could overflow it.
      facts.args = Object.fromEntries(rawKeys.map((k) => [k, NOT_STORED_TOO_DEEP]));
      throw new ToolFailure('invalid_arguments', `Invalid arguments for ${tool.name}`, [
        { field: deep, message: `nested more than ${MAX_ARG_DEPTH} levels deep` },
      ]);
    }
    const parsed = input.safeParse(rawArgs ?? {}, { reportInput: true });
    if (!parsed.success) {
      facts.args = redact(plainArgs(rawArgs));
      facts.argsHmac = await host.hmacArgs(canonicalJson(rawArgs ?? {}));
      throw new ToolFailure(
        'invalid_arguments',
        `Invalid arguments for ${tool.name}`,
        describeIssues(parsed.error),
      );
    }
    const { approval_id: approvalId, ...given } = parsed.data as Record<string, unknown> & {
      approval_id?: string;
    };
    // Fill in what the caller left to the server (a read, never a write) before the policy
    // decides, unless the policy refuses the tool outright anyway.
    let args = given;
    let filled: readonly string[] = [];
    let inherited: Readonly<Record<string, unknown>> = {};
    if (tool.resolve && active.ok && !refusedOutright(active.policy, tool.name)) {
      const resolved = await tool.resolve(args, scope.ctx);
      args = resolved.args as Record<string, unknown>;
      filled = resolved.filled;
      inherited = resolved.inherited ?? {};
    }
    const shown = shownArgs(args);
    // What the call takes from its source is shown, stored and bound beside the arguments: an
    // approval covers a clone of the source as it was read, not of whatever it has become.
    const withInherited = Object.keys(inherited).length
      ? { ...shown, [INHERITED_KEY]: shownArgs(inherited) }
      : shown;
    facts.args = redact(withInherited);
    facts.argKeys = Object.keys(shown);
    facts.argsHmac = await host.hmacArgs(canonicalJson(withInherited));
    const approvals = host.approvals();
    const port = approvalPort(
      {
        tool: tool.name,
        approvalId,
        shownArgs: facts.args as Record<string, Json>,
        upstream: upstreamShown(tool, args, redactSent),
        argsHmac: facts.argsHmac,
        identity,
        blastRadius: tool.blastRadius ? () => tool.blastRadius!(args, scope!.ctx) : null,
        hiddenContent: (tool.judgedBy ?? []).filter((key) => own(facts.args, key) === REDACTED),
      },
      {
        store: approvals.store,
        approvalUrl: approvals.url,
        origin: approvals.origin,
        ttlMs: approvals.ttlMs,
        conversation,
        now: () => host.clock.now(),
      },
    );
    const gateInput = {
      tool: tool.name,
      args: policyView(seenBy(args, inherited)),
      identity,
      dryRun: tool.dryRun?.(args) ?? false,
      now: host.clock.now(),
      current: () => host.policy(),
      decidedBy: (decided: ActivePolicy) => {
        facts.policyVersion = decided.version;
      },
    };
    const gate = await passGate(active, host.counters(), gateInput, port);
    if (active.ok && active.shadow) {
      // As the audit record will keep them, hidden values removed from every field.
      const stored = (hidden.length ? host.scrubber(hidden) : scrub).deep(facts.args);
      const disagreement = shadowDisagreement(active, {
        ...gateInput,
        stored,
        input: tool.input,
        requestId,
      });
      if (disagreement) host.shadowDisagreement(disagreement);
    }
    if (!gate.ok && 'suspended' in gate) {
      // Nothing ran: the person is asked, and answers with the next request (2026-07-28).
      suspended = gate.suspended;
      facts.decision = 'approval_required';
      facts.log.outcome = 'approval_pending';
      facts.log.decision = 'approval_required';
      result = {
        content: [{ type: 'text', text: 'Waiting for the person to approve this call.' }],
      };
    } else if (!gate.ok) {
      facts.decision = gate.refusal.kind;
      facts.log.outcome = gate.pending ? 'approval_pending' : 'denied';
      facts.log.decision = gate.refusal.kind;
      facts.log.rule = gate.refusal.rule;
      facts.approvalId = gate.pending?.approval_id ?? approvalId ?? null;
      result = refusalResult(gate.refusal, tool.name, gate.pending, pick(args, filled));
    } else {
      facts.decision = 'allow';
      facts.approvalId = gate.approvalId;
      const ctx: ToolContext = {
        ...scope.ctx,
        filled,
        recheck: (next) =>
          recheckPolicy(
            active,
            tool.name,
            seenBy(next, inherited),
            identity,
            gate.approvalId !== null,
            host.clock.now(),
          ),
      };
      let success;
      try {
        success = await tool.run(args, ctx);
      } catch (err) {
        // A call that failed before any write went out gives back its rate-limit slot and its
        // approval. Once a write was sent, whatever Proxmox answered (an error, nothing), both
        // stay spent: some Proxmox handlers do part of the work before they fail, and a returned
        // approval would let one person's yes send a second write.
        if (!scope.upstream().some((c) => c.method !== 'GET')) {
          if (gate.release) await gate.release().catch(() => undefined);
          if (gate.approvalId) await port.restore(gate.approvalId).catch(() => undefined);
        }
        if (!(err instanceof PolicyRefusal)) throw err;
        facts.decision = 'deny';
        facts.log.outcome = 'denied';
        facts.log.decision = 'deny';
        facts.log.rule = err.rule;
        success = null;
        result = refusalResult({ kind: 'deny', rule: err.rule, reason: err.reason }, tool.name);
      }
      if (success) {
        result = {
          content: [{ type: 'text', text: success.text }],
          structuredContent: success.structured as Record<string, unknown>,
          ...(success.isError ? { isError: true } : {}),
        };
        facts.log.outcome = success.isError ? 'failed' : 'ok';
      }
    }
  } catch (err) {
    if (err instanceof ScopeMissing) {
      facts.decision = 'deny';
      facts.log.outcome = 'denied';
      facts.log.decision = 'deny';
      facts.log.rule = UNDECIDED_RULES.scope;
      result = scopeRefusal(tool.name, err.scope, err.held);
    } else result = failureResult(err, facts.log);
  }
  const calls = scope?.upstream() ?? [];
  facts.log.upstream_status = calls.at(-1)?.status ?? null;
  facts.log.upstream_calls = calls.length;
  facts.log.latency_ms = host.clock.now() - started;
  // Last line of defence: whatever echoed a configured secret or a hidden value, it leaves here
  // without it.
  const out = hidden.length ? host.scrubber(hidden) : scrub;
  logToolCall(out.deep(facts.log));
  host.audit(out.deep(auditRecord(facts, scope, result!, started)));
  if (suspended)
    return {
      kind: 'input_required',
      question: out.deep(suspended.question),
      binding: suspended.binding,
    };
  return { kind: 'result', result: out.deep(result!) };
}

/**
 * The policy's answer for changed arguments in the middle of a call (no new limit slot: it is
 * the same call). An approval covered the arguments as approved, so a change needs a new one.
 */
function recheckPolicy(
  active: ActivePolicy,
  tool: string,
  next: Record<string, unknown>,
  identity: Identity,
  approved: boolean,
  now: number,
): void {
  if (!active.ok)
    throw new PolicyRefusal(
      UNDECIDED_RULES.invalidPolicy,
      "The server's policy is invalid, so the call stops here.",
    );
  const decision = evaluatePolicy(
    active.policy,
    { tool, args: policyView(next) },
    identity,
    null,
    now,
  );
  if (decision.kind === 'allow') return;
  if (decision.kind === 'approval_required' && approved) {
    throw new PolicyRefusal(
      decision.rule,
      'The approval covers the call exactly as approved; with the arguments the server had to change it needs a new approval. Call again without approval_id to ask for one.',
    );
  }
  throw new PolicyRefusal(decision.rule, decision.reason);
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

/** Arguments as shown and hashed: property strings by their canonical text. */
function shownArgs(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) continue;
    out[key] = isPropertyValue(value) ? value.text : value;
  }
  return out;
}

function pick(args: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
}

/** The exact upstream parameters for approvers, with sensitive values redacted like the rest. */
function upstreamShown(
  tool: ToolSpec,
  args: Record<string, unknown>,
  redact: (params: Record<string, string>, args: Record<string, unknown>) => Record<string, string>,
): Record<string, string> | null {
  const params = tool.describeCall?.(args);
  return params ? redact(params, args) : null;
}

function plainArgs(raw: unknown): Record<string, unknown> {
  return raw && typeof raw === 'object' && !Array.isArray(raw)
    ? (raw as Record<string, unknown>)
    : { '(arguments)': raw ?? null };
}

/** How a person approved the call; null unless an approval was actually spent on it. */
function channelOf(approvalId: string | null, decision: AuditDecision): ApprovalChannel | null {
  if (!approvalId || decision !== 'allow') return null;
  return approvalId === ELICITED ? 'conversation' : 'web';
}

function auditRecord(
  facts: CallFacts,
  scope: CallScope | undefined,
  result: CallResult,
  started: number,
): AuditRecord {
  const identity = scope?.ctx.identity;
  const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
  return {
    ts: started,
    request_id: facts.log.request_id,
    user_id: identity?.userId ?? '(none)',
    user_email: identity?.email ?? null,
    client_id: identity?.clientId ?? '',
    grant_id: identity?.grantId ?? '',
    session: facts.log.session,
    tool: facts.log.tool,
    arg_keys: facts.argKeys,
    args_hmac: facts.argsHmac,
    args: facts.args,
    decision: facts.decision,
    rule: facts.log.rule ?? null,
    outcome: facts.log.outcome,
    error_kind: facts.log.error_kind ?? null,
    upstream_status: facts.log.upstream_status ?? null,
    latency_ms: facts.log.latency_ms ?? 0,
    vmid:
      typeof structured.vmid === 'number' && structured.mode === 'created' ? structured.vmid : null,
    upid: typeof structured.upid === 'string' ? structured.upid : null,
    approval_id: facts.approvalId,
    approval_channel: channelOf(facts.approvalId, facts.decision),
    policy_version: facts.policyVersion,
    user_groups: identity ? [...identity.groups] : null,
    user_scopes: identity ? [...identity.scopes] : null,
  };
}

function failureResult(err: unknown, entry: ToolCallLog): CallResult {
  let error: {
    kind: string;
    message: string;
    fields?: { field: string; message: string }[];
    upstream_status?: number;
  };
  if (err instanceof ToolFailure) {
    const lines = err.fields.map((f) => `- ${f.field}: ${f.message}`);
    error = { kind: err.kind, message: [err.message, ...lines].join('\n') };
    if (err.fields.length) error.fields = [...err.fields];
  } else if (err instanceof PveError) {
    error = { kind: `upstream.${err.failure.kind}`, message: err.message };
    if (err.status !== undefined) error.upstream_status = err.status;
  } else if (err instanceof StoreTimeout) {
    // Only the steps before the policy reach here with it (the gate turns its own into denials).
    entry.error = err.message;
    error = {
      kind: 'unavailable',
      message:
        'A store of this server did not answer in time, so the call was refused before the policy ran. Try again shortly.',
    };
  } else {
    // Unexpected: keep the detail in the log only; the agent gets no stack and no internals.
    entry.error =
      err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : 'non-error thrown';
    error = { kind: 'internal', message: `Internal error (request ${entry.request_id}).` };
  }
  entry.outcome = error.kind === 'invalid_arguments' ? 'invalid' : 'error';
  entry.error_kind = error.kind;
  return {
    content: [{ type: 'text', text: error.message }],
    structuredContent: { error },
    isError: true,
  };
}
