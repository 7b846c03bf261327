// The end of every call, whatever it ended in: its one log line, its one audit record, and what
// goes back to the agent, each scrubbed of configured secrets and of the values the call's
// redaction hid. Failures the seam did not foresee become isError results here, without a stack.

import { StoreTimeout } from '../stores/deadline';
import type { AuditDecision, AuditRecord, ApprovalChannel } from '../audit/record';
import { PveError } from '../proxmox/errors';
import { ELICITED } from './approval-gate';
import type { AskNext } from './conversation';
import type { CallHost, CallMeasures, CallScope } from './host';
import { logToolCall, type ToolCallLog } from './call-log';
import { FAILURES } from './messages';
import { SPAN_ATTRIBUTES as A } from './spans';
import type { CallOutcome, CallResult } from './result';
import { ToolFailure } from './tool-spec';

/** What is known about a call as it goes; becomes the log line and the audit record. */
export interface CallFacts {
  log: ToolCallLog;
  decision: AuditDecision;
  args: Record<string, unknown>;
  argKeys: string[];
  argsHmac: string;
  approvalId: string | null;
  /** The version of the policy that decided; null until the policy is asked. */
  policyVersion: number | null;
  /** The cluster the call is for, once its arguments are read. */
  cluster?: string;
}

/** How a call ends: what goes back, or the question the person is asked (2026-07-28). */
export interface CallEnd {
  result: CallResult;
  suspended?: AskNext;
}

/** Records how the policy (or the seam in its place) decided, in the log line and the record. */
export function decided(
  facts: CallFacts,
  decision: Exclude<AuditDecision, 'allow' | 'none'>,
  outcome: ToolCallLog['outcome'],
  rule?: string,
): void {
  facts.decision = decision;
  facts.log.outcome = outcome;
  facts.log.decision = decision;
  if (rule !== undefined) facts.log.rule = rule;
}

/**
 * Writes the call's log line and audit record and returns what the agent gets. `hidden` are the
 * values the call's redaction hid: whatever echoed one (or a configured secret) leaves without it.
 */
export function settle(
  host: CallHost,
  facts: CallFacts,
  scope: CallScope | undefined,
  end: CallEnd,
  call: CallMeasures & { started: number },
  hidden: readonly string[],
): CallOutcome {
  const { started, spans, approvalWaitMs } = call;
  const calls = scope?.upstream() ?? [];
  facts.log.upstream_status = calls.at(-1)?.status ?? null;
  facts.log.upstream_calls = calls.length;
  const tokens = scope?.tokens() ?? [];
  if (tokens.length) facts.log.pve_token = tokens.join(' ');
  facts.log.latency_ms = host.clock.now() - started;
  const out = host.scrubber(hidden.length ? hidden : undefined);
  logToolCall(out.deep(facts.log));
  const { outcome, rule, error_kind: errorKind } = facts.log;
  spans.end(
    {
      [A.decision]: facts.decision,
      [A.outcome]: outcome,
      ...(rule !== undefined ? { [A.rule]: out.text(rule) } : {}),
    },
    outcome === 'error' || outcome === 'failed' || outcome === 'invalid'
      ? (errorKind ?? 'tool_error')
      : undefined,
  );
  host.audit(out.deep(auditRecord(facts, scope, end.result, started)), { spans, approvalWaitMs });
  if (end.suspended)
    return {
      kind: 'input_required',
      question: out.deep(end.suspended.question),
      binding: end.suspended.binding,
    };
  return { kind: 'result', result: out.deep(end.result) };
}

/** The call's Proxmox requests' times added up; null where it sent none. */
function upstreamMs(scope: CallScope | undefined): number | null {
  const calls = scope?.upstream() ?? [];
  return calls.length ? calls.reduce((sum, c) => sum + c.ms, 0) : null;
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
    upstream_ms: upstreamMs(scope),
    ...(facts.log.trace_id ? { trace_id: facts.log.trace_id } : {}),
    vmid:
      typeof structured.vmid === 'number' && structured.mode === 'created' ? structured.vmid : null,
    upid: typeof structured.upid === 'string' ? structured.upid : null,
    approval_id: facts.approvalId,
    approval_channel: channelOf(facts.approvalId, facts.decision),
    policy_version: facts.policyVersion,
    user_groups: identity ? [...identity.groups] : null,
    user_scopes: identity ? [...identity.scopes] : null,
    cluster: facts.cluster ?? null,
    ...(facts.log.pve_token ? { pve_token: facts.log.pve_token } : {}),
  };
}

interface ErrorShape {
  kind: string;
  message: string;
  fields?: { field: string; message: string }[];
  upstream_status?: number;
}

/** A call that failed: the error the agent gets, with the log line told what it needs. */
export function failureResult(err: unknown, entry: ToolCallLog): CallResult {
  const error = errorShape(err, entry);
  entry.outcome = error.kind === 'invalid_arguments' ? 'invalid' : 'error';
  entry.error_kind = error.kind;
  return {
    content: [{ type: 'text', text: error.message }],
    structuredContent: { error },
    isError: true,
  };
}

function errorShape(err: unknown, entry: ToolCallLog): ErrorShape {
  if (err instanceof ToolFailure) {
    const lines = err.fields.map((f) => `- ${f.field}: ${f.message}`);
    const error: ErrorShape = { kind: err.kind, message: [err.message, ...lines].join('\n') };
    if (err.fields.length) error.fields = [...err.fields];
    return error;
  }
  if (err instanceof PveError) {
    const error: ErrorShape = { kind: `upstream.${err.failure.kind}`, message: err.message };
    if (err.status !== undefined) error.upstream_status = err.status;
    return error;
  }
  if (err instanceof StoreTimeout) {
    // Only the steps before the policy reach here with it (the gate turns its own into denials).
    entry.error = err.message;
    return { kind: 'unavailable', message: FAILURES.storeTimeout };
  }
  // Unexpected: keep the detail in the log only; the agent gets no stack and no internals.
  entry.error =
    err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : 'non-error thrown';
  return { kind: 'internal', message: FAILURES.internal(entry.request_id) };
}
