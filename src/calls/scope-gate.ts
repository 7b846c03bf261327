// The first gate of a call: the scope its tool needs (../scopes.ts) must be one the caller's
// token holds. Outside it nothing else happens: no validation, no read, no policy, no approval.
// A 2026-07-28 request is refused the same way before the MCP server sees it, with HTTP 403 and
// the scope to ask for (../mcp/modern/handler.ts); a 2025 session gets this as a tool error.

import type { Identity } from '../identity';
import { SCOPE_INFO, type Scope } from '../scopes';
import type { CallResult } from './result';
import type { ToolSpec } from './tool-spec';

/** The scope a tool needs that this caller's token lacks, or null. */
export function missingScope(tool: Pick<ToolSpec, 'scope'>, identity: Identity): Scope | null {
  return identity.scopes.includes(tool.scope) ? null : tool.scope;
}

/** Why the call stops, for the agent and the person behind it. */
export function scopeMessage(tool: string, scope: Scope, held: readonly string[]): string {
  const has = held.length ? `it holds ${held.join(', ')}` : 'it holds none of this server';
  return `${tool} needs the scope ${scope}, which this client was not granted (${has}). Nothing was sent to Proxmox. To allow it, the person reconnects the client and ticks "${SCOPE_INFO[scope].label}" (${scope}) on the consent page.`;
}

export function scopeRefusal(tool: string, scope: Scope, held: readonly string[]): CallResult {
  const message = scopeMessage(tool, scope, held);
  return {
    content: [{ type: 'text', text: `[SCOPE MISSING] ${message}` }],
    structuredContent: { error: { kind: 'insufficient_scope', scope, message } },
    isError: true,
  };
}
