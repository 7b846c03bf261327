// What a tool call ends in, in the shape both MCP eras send back (the CallToolResult of MCP's
// schema, written out here so that nothing in calls/ depends on one SDK era's types), or a
// suspended call waiting for the person's answer in the next request (2026-07-28).

import type { ApprovalQuestion, CallBinding } from './conversation';

export interface CallResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

export type CallOutcome =
  | { kind: 'result'; result: CallResult }
  | { kind: 'input_required'; question: ApprovalQuestion; binding: CallBinding };
