// The one seam between our tools and the MCP protocol: it answers tools/list and tools/call on
// an SDK `Server`, validating arguments itself (so every call, valid or not, is answered by us,
// logged once, and errors name the field), and turning every failure into an `isError` result.
// Nothing else registers tools, so nothing bypasses what this wraps around each call.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { UpstreamCall } from '../proxmox/client';
import { PveError } from '../proxmox/errors';
import type { CounterBackend } from '../counters/reserve';
import { isListed } from '../policy/evaluate';
import type { ActivePolicy } from '../policy/source';
import { describeIssues } from './issues';
import { policyView } from '../policy/view';
import { passGate, refusalResult, type Refusal } from './policy-gate';
import { logToolCall, type ToolCallLog } from './log';
import { ToolFailure, type ToolContext, type ToolSpec } from './tool-spec';

/** One call's context, plus what the seam needs to log it. */
export interface CallScope {
  ctx: ToolContext;
  /** The upstream exchanges made so far during this call. */
  upstream(): readonly UpstreamCall[];
}

export interface ToolHost {
  /** A fresh scope for one call. */
  scope(requestId: string): CallScope;
  /** Session id for logs. */
  sessionId(): string;
  /** The policy in force. */
  policy(): ActivePolicy;
  /** Where rate-limit counters live. */
  counters(): CounterBackend;
}

export function installTools(server: Server, tools: readonly ToolSpec[], host: ToolHost): void {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const described: Tool[] = tools.map(describeTool);

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const active = host.policy();
    // Hidden and default-denied tools are left out; with a broken policy every tool is shown
    // (and every call is denied with the reason), so the agent can tell the user why.
    return { tools: active.ok ? described.filter((t) => isListed(active.policy, t.name)) : described };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      // Per the MCP spec an unknown tool is a protocol error, not a tool result.
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name.slice(0, 100)}`);
    }
    return callTool(tool, request.params.arguments, host);
  });
}

function describeTool(tool: ToolSpec): Tool {
  return {
    name: tool.name,
    title: tool.annotations.title,
    description: tool.description,
    inputSchema: toJsonSchema(tool.input, 'input') as Tool['inputSchema'],
    outputSchema: toJsonSchema(tool.output, 'output') as Tool['outputSchema'],
    annotations: tool.annotations,
  };
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' });
  delete json.$schema;
  return json;
}

async function callTool(tool: ToolSpec, rawArgs: unknown, host: ToolHost): Promise<CallToolResult> {
  const requestId = crypto.randomUUID();
  const started = Date.now();
  const entry: ToolCallLog = {
    request_id: requestId,
    tool: tool.name,
    session: host.sessionId(),
    user: '(none)',
    outcome: 'ok',
    arg_keys: rawArgs && typeof rawArgs === 'object' ? Object.keys(rawArgs).slice(0, 40) : [],
  };
  let result: CallToolResult;
  let scope: CallScope | undefined;
  try {
    scope = host.scope(requestId);
    entry.user = scope.ctx.identity.userId;
    const parsed = tool.input.safeParse(rawArgs ?? {}, { reportInput: true });
    if (!parsed.success) {
      throw new ToolFailure('invalid_arguments', `Invalid arguments for ${tool.name}`, describeIssues(parsed.error));
    }
    const gate = await passGate(host.policy(), host.counters(), {
      tool: tool.name,
      args: policyView(parsed.data),
      identity: scope.ctx.identity,
      dryRun: tool.dryRun?.(parsed.data) ?? false,
      now: Date.now(),
    });
    if (!gate.ok) {
      entry.outcome = 'denied';
      entry.decision = gate.refusal.kind;
      entry.rule = gate.refusal.rule;
      return finish(entry, started, scope, refusalResult(notYetApprovable(gate.refusal)));
    }
    let success;
    try {
      success = await tool.run(parsed.data, scope.ctx);
    } catch (err) {
      // A failed call gives its rate-limit slot back, unless its write may have happened.
      if (gate.release && !(err instanceof ToolFailure && err.kind === 'indeterminate')) await gate.release();
      throw err;
    }
    result = {
      content: [{ type: 'text', text: success.text }],
      structuredContent: success.structured as Record<string, unknown>,
      ...(success.isError ? { isError: true } : {}),
    };
    entry.outcome = success.isError ? 'failed' : 'ok';
  } catch (err) {
    result = failureResult(err, entry);
  }
  return finish(entry, started, scope, result);
}

function finish(entry: ToolCallLog, started: number, scope: CallScope | undefined, result: CallToolResult): CallToolResult {
  const calls = scope?.upstream() ?? [];
  entry.upstream_status = calls.at(-1)?.status ?? null;
  entry.upstream_calls = calls.length;
  entry.latency_ms = Date.now() - started;
  logToolCall(entry);
  return result;
}

/** Until approvals exist, a call that needs one is refused, saying so. */
function notYetApprovable(refusal: Refusal): Refusal {
  if (refusal.kind !== 'approval_required') return refusal;
  return { ...refusal, reason: `${refusal.reason} Approvals are not available on this server, so the call is denied.` };
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
