// One tools/call, start to end: identity, argument validation, policy (with approvals and rate
// limits), the tool, and exactly one log line and one audit record whatever happened. Failures
// become isError results here; nothing the agent sees carries a stack trace or a secret.

import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Json } from '../approvals/types';
import { BUILT_IN_SENSITIVE, canonicalJson, redactArgs, sha256Hex } from '../audit/canonical';
import type { AuditDecision, AuditRecord } from '../audit/record';
import { PveError } from '../proxmox/errors';
import { policyView } from '../policy/view';
import { approvalPort } from './approval-gate';
import { describeIssues } from './issues';
import { logToolCall, type ToolCallLog } from './log';
import { passGate, refusalResult } from './policy-gate';
import type { CallScope, ToolHost } from './tool-registry';
import { ToolFailure, type ToolSpec } from './tool-spec';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What is known about a call as it goes; becomes the log line and the audit record. */
interface CallFacts {
  log: ToolCallLog;
  decision: AuditDecision;
  args: Record<string, unknown>;
  argKeys: string[];
  argsSha256: string;
  approvalId: string | null;
}

export async function runCall(tool: ToolSpec, input: z.ZodType, rawArgs: unknown, host: ToolHost, extra: Extra | null): Promise<CallToolResult> {
  const requestId = crypto.randomUUID();
  const started = Date.now();
  const rawKeys = rawArgs && typeof rawArgs === 'object' && !Array.isArray(rawArgs) ? Object.keys(rawArgs).slice(0, 40) : [];
  const facts: CallFacts = {
    log: { request_id: requestId, tool: tool.name, session: host.sessionId(), user: '(none)', outcome: 'ok', arg_keys: rawKeys },
    decision: 'none',
    args: {},
    argKeys: rawKeys,
    argsSha256: '',
    approvalId: null,
  };
  const active = host.policy();
  const sensitive = [...BUILT_IN_SENSITIVE, ...(active.ok ? (active.policy.doc.tools[tool.name]?.sensitive ?? []) : [])];
  let scope: CallScope | undefined;
  let result: CallToolResult;
  try {
    scope = host.scope(requestId);
    facts.log.user = scope.ctx.identity.userId;
    const parsed = input.safeParse(rawArgs ?? {}, { reportInput: true });
    if (!parsed.success) {
      facts.args = redactArgs(plainArgs(rawArgs), sensitive);
      facts.argsSha256 = await sha256Hex(canonicalJson(rawArgs ?? {}));
      throw new ToolFailure('invalid_arguments', `Invalid arguments for ${tool.name}`, describeIssues(parsed.error));
    }
    const { approval_id: approvalId, ...args } = parsed.data as Record<string, unknown> & { approval_id?: string };
    const shown = shownArgs(args);
    facts.args = redactArgs(shown, sensitive);
    facts.argKeys = Object.keys(shown);
    facts.argsSha256 = await sha256Hex(canonicalJson(shown));
    const approvals = host.approvals();
    const port = approvalPort(
      {
        tool: tool.name,
        approvalId,
        shownArgs: facts.args as Record<string, Json>,
        upstream: upstreamShown(tool, args, sensitive),
        argsSha256: facts.argsSha256,
        identity: scope.ctx.identity,
      },
      { store: approvals.store, approvalUrl: approvals.url, ttlMs: approvals.ttlMs, elicit: extra, now: Date.now },
    );
    const gate = await passGate(
      active,
      host.counters(),
      { tool: tool.name, args: policyView(args), identity: scope.ctx.identity, dryRun: tool.dryRun?.(args) ?? false, now: Date.now() },
      port,
    );
    if (!gate.ok) {
      facts.decision = gate.refusal.kind;
      facts.log.outcome = gate.pending ? 'approval_pending' : 'denied';
      facts.log.decision = gate.refusal.kind;
      facts.log.rule = gate.refusal.rule;
      facts.approvalId = gate.pending?.approval_id ?? approvalId ?? null;
      result = refusalResult(gate.refusal, tool.name, gate.pending);
    } else {
      facts.decision = 'allow';
      facts.approvalId = gate.approvalId;
      let success;
      try {
        success = await tool.run(args, scope.ctx);
      } catch (err) {
        // A failed call gives back its rate-limit slot and its approval, unless its write may
        // have happened.
        if (!(err instanceof ToolFailure && err.kind === 'indeterminate')) {
          if (gate.release) await gate.release();
          if (gate.approvalId) await port.restore(gate.approvalId).catch(() => undefined);
        }
        throw err;
      }
      result = {
        content: [{ type: 'text', text: success.text }],
        structuredContent: success.structured as Record<string, unknown>,
        ...(success.isError ? { isError: true } : {}),
      };
      facts.log.outcome = success.isError ? 'failed' : 'ok';
    }
  } catch (err) {
    result = failureResult(err, facts.log);
  }
  const calls = scope?.upstream() ?? [];
  facts.log.upstream_status = calls.at(-1)?.status ?? null;
  facts.log.upstream_calls = calls.length;
  facts.log.latency_ms = Date.now() - started;
  logToolCall(facts.log);
  host.audit(auditRecord(facts, scope, result, started));
  return result;
}

/** Arguments as shown and hashed: property strings by their canonical text. */
function shownArgs(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined) continue;
    out[key] = value && typeof value === 'object' && 'text' in value && 'fields' in value ? (value as { text: string }).text : value;
  }
  return out;
}

/** The exact upstream parameters for approvers, with sensitive values redacted like the rest. */
function upstreamShown(tool: ToolSpec, args: Record<string, unknown>, sensitive: readonly string[]): Record<string, string> | null {
  const params = tool.describeCall?.(args);
  return params ? (redactArgs(params, sensitive) as Record<string, string>) : null;
}

function plainArgs(raw: unknown): Record<string, unknown> {
  return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : { '(arguments)': raw ?? null };
}

function auditRecord(facts: CallFacts, scope: CallScope | undefined, result: CallToolResult, started: number): AuditRecord {
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
    args_sha256: facts.argsSha256,
    args: facts.args,
    decision: facts.decision,
    rule: facts.log.rule ?? null,
    outcome: facts.log.outcome,
    error_kind: facts.log.error_kind ?? null,
    upstream_status: facts.log.upstream_status ?? null,
    latency_ms: facts.log.latency_ms ?? 0,
    vmid: typeof structured.vmid === 'number' && structured.mode === 'created' ? structured.vmid : null,
    upid: typeof structured.upid === 'string' ? structured.upid : null,
    approval_id: facts.approvalId,
  };
}

function failureResult(err: unknown, entry: ToolCallLog): CallToolResult {
  let error: { kind: string; message: string; fields?: { field: string; message: string }[]; upstream_status?: number };
  if (err instanceof ToolFailure) {
    const lines = err.fields.map((f) => `- ${f.field}: ${f.message}`);
    error = { kind: err.kind, message: [err.message, ...lines].join('\n') };
    if (err.fields.length) error.fields = [...err.fields];
  } else if (err instanceof PveError) {
    error = { kind: `upstream.${err.failure.kind}`, message: err.message };
    if (err.status !== undefined) error.upstream_status = err.status;
  } else {
    // Unexpected: keep the detail in the log only; the agent gets no stack and no internals.
    entry.error = err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : 'non-error thrown';
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
