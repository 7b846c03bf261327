// The first gate of a call: the scope its tool needs (../core/scopes.ts) must be one the caller's
// token holds. Outside it nothing else happens: no validation, no read, no policy, no approval.
// A 2026-07-28 request is refused the same way before the MCP server sees it, with HTTP 403 and
// the scope to ask for (../mcp/modern/handler.ts); a 2025 session gets a tool error
// (./messages.ts).

import type { Identity } from '../core/identity';
import type { Scope } from '../core/scopes';
import type { ToolSpec } from './tool-spec';

/** The scope a tool needs that this caller's token lacks, or null. */
export function missingScope(tool: Pick<ToolSpec, 'scope'>, identity: Identity): Scope | null {
  return identity.scopes.includes(tool.scope) ? null : tool.scope;
}
