// Pieces shared by every tool: the argument formats PVE defines, and the output members any
// result may carry besides its own (a failure's `error`), so failures fit each outputSchema.

import { z } from 'zod';
import { NODE_RE, NODE_RULE, TAG_MAX, TAG_RE } from '../proxmox/formats';

export const nodeName = z
  .string()
  .max(63)
  .regex(NODE_RE, { error: `must be ${NODE_RULE}` });

export const tagName = z
  .string()
  .max(TAG_MAX)
  .regex(TAG_RE, { error: 'must be a tag: letters, digits, "_" first, then also "-", "+", "."' });

export const errorOutput = z.object({
  kind: z.string(),
  message: z.string(),
  fields: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  upstream_status: z.number().int().optional(),
});

/** Members every output schema carries, so an error result still matches it. */
export const outputExtras = {
  error: errorOutput.optional().describe('Present only when the call failed.'),
};
