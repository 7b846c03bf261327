// The one seam between our tools and the MCP protocol: it answers tools/list and tools/call on
// an SDK `Server`; every call goes through runCall (validation, policy, approvals, limits, one log
// line, one audit record). Nothing else registers tools, so nothing bypasses what it wraps.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AuditRecord } from '../audit/record';
import type { CounterBackend } from '../counters/reserve';
import { isListed } from '../policy/evaluate';
import type { ActivePolicy } from '../policy/source';
import type { UpstreamCall } from '../proxmox/client';
import type { Scrubber } from '../secrets/scrub';
import type { ApprovalStore } from './approval-gate';
import { runCall } from './call-pipeline';
import type { BaseToolContext, ToolSpec } from './tool-spec';

/** One call's context, plus what the seam needs to log it. */
export interface CallScope {
  ctx: BaseToolContext;
  /** The upstream exchanges made so far during this call. */
  upstream(): readonly UpstreamCall[];
}

export interface ToolHost {
  /** A fresh scope for one call; throws a ToolFailure when the caller has no identity. */
  scope(requestId: string): CallScope;
  /** Session id for logs. */
  sessionId(): string;
  /** The policy in force. */
  policy(): ActivePolicy;
  /** Where rate-limit counters live. */
  counters(): CounterBackend;
  /** Human approvals: the store, the page for an id, how long an approval lasts. */
  approvals(): { store: () => ApprovalStore; url: (id: string) => string; ttlMs: number };
  /** Records the call in the audit trail, without waiting for it or failing the call. */
  audit(record: AuditRecord): void;
  /** Removes configured secrets from results, log lines and audit records. */
  scrubber(): Scrubber;
  /** The keyed hash of canonical arguments (audit records, approvals). */
  hashArgs(canonical: string): Promise<string>;
}

/** Every tool also takes approval_id: the id of a person's approval, to spend on this call. */
const APPROVAL_ID = z
  .string()
  .regex(/^[A-Za-z0-9_-]{16,64}$/, { error: 'must be an approval_id exactly as returned' })
  .optional()
  .describe('After [APPROVAL REQUIRED]: its approval_id, once approved.');

/** Each tool's input as the seam validates it: the tool's own, plus approval_id. */
function withApprovalId(tool: ToolSpec): z.ZodObject {
  return (tool.input as unknown as z.ZodObject).extend({ approval_id: APPROVAL_ID });
}

/** The tools/list entries of these tools (also what the benchmark weighs). */
export function describeTools(tools: readonly ToolSpec[]): Tool[] {
  return tools.map((t) => describeTool(t, withApprovalId(t)));
}

export function installTools(server: Server, tools: readonly ToolSpec[], host: ToolHost): void {
  const inputs = new Map(tools.map((t) => [t.name, withApprovalId(t)]));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const described: Tool[] = describeTools(tools);
  const canElicit = (): boolean => {
    const elicitation = server.getClientCapabilities()?.elicitation as { form?: object; url?: object } | undefined;
    // An empty object (2025-06-18) means form mode; newer clients list the modes they support.
    return !!elicitation && (elicitation.form !== undefined || elicitation.url === undefined);
  };

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const active = host.policy();
    // Hidden and default-denied tools are left out; with a broken policy every tool is shown
    // (and every call is denied with the reason), so the agent can tell the user why.
    return { tools: active.ok ? described.filter((t) => isListed(active.policy, t.name)) : described };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      // Per the MCP spec an unknown tool is a protocol error, not a tool result.
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name.slice(0, 100)}`);
    }
    return runCall(tool, inputs.get(tool.name)!, request.params.arguments, host, canElicit() ? extra : null);
  });
}

function describeTool(tool: ToolSpec, input: z.ZodType): Tool {
  return {
    name: tool.name,
    title: tool.annotations.title,
    description: tool.description,
    inputSchema: toJsonSchema(input, 'input') as Tool['inputSchema'],
    outputSchema: toJsonSchema(tool.output, 'output') as Tool['outputSchema'],
    annotations: tool.annotations,
  };
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' });
  delete json.$schema;
  // Every tool definition is paid for in each conversation's context. An output schema need not
  // forbid extra members (what we return is ours), so that noise goes; inputs keep it (strict).
  if (io === 'output') dropClosedObjects(json);
  return json;
}

/** Removes what does not change what an output schema accepts (JSON keys are always strings). */
function dropClosedObjects(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  const empty = (v: unknown): boolean => !!v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
  if (record.additionalProperties === false || empty(record.additionalProperties)) delete record.additionalProperties;
  if (empty(record.properties)) delete record.properties;
  const names = record.propertyNames as Record<string, unknown> | undefined;
  if (names && Object.keys(names).length === 1 && names.type === 'string') delete record.propertyNames;
  for (const value of Object.values(record)) dropClosedObjects(value);
}
