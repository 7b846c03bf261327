import { logLine } from '../log';
// One structured JSON line per tool call. Carries ids, outcome, upstream status and latency;
// never argument values, access tokens or secrets (Workers Logs indexes the JSON fields). A
// Proxmox token's id (not its secret) names who acted in Proxmox, as the audit record does.

export interface ToolCallLog {
  request_id: string;
  tool: string;
  session: string;
  user: string;
  outcome: 'ok' | 'failed' | 'invalid' | 'denied' | 'approval_pending' | 'error';
  /** Policy refusals: the decision and the rule that fired. */
  decision?: string;
  rule?: string;
  arg_keys: string[];
  error_kind?: string;
  /** Internal errors only: name and message, for the operator. */
  error?: string;
  upstream_status?: number | null;
  upstream_calls?: number;
  /** The call's trace id (W3C Trace Context, 32 hex digits), as its audit record keeps it. */
  trace_id?: string;
  /** The Proxmox token ids that sent the requests, where PVE_IDENTITIES gives each person one. */
  pve_token?: string;
  latency_ms?: number;
}

export function logToolCall(entry: ToolCallLog): void {
  logLine('log', 'tool_call', { ...entry });
}
