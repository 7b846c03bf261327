// What a tool call ends in, in the shape both MCP eras send back (the CallToolResult of MCP's
// schema, written out here so that nothing in calls/ depends on one SDK era's types), or a
// suspended call waiting for the person's answer in the next request (2026-07-28).

import { z } from 'zod';
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

/**
 * Members every output schema carries, so an error or a policy refusal still matches it. Their
 * shapes ({kind, message, fields?, upstream_status?} and {decision, rule, reason,
 * retry_after_s?}) are told once, in the server's instructions.
 */
export const outputExtras = {
  error: z.looseObject({}).optional(),
  policy: z.looseObject({}).optional(),
  approval_id: z.string().optional(),
  approval_url: z.string().optional(),
  expires_at: z.string().optional(),
};

/** Makers of a row's columns that are null where Proxmox did not say (for core/fields.ts). */
export const orNull = {
  text: () => z.string().nullable(),
  number: () => z.number().nullable(),
  flag: () => z.boolean().nullable(),
};
