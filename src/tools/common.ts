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

export const policyOutput = z.object({
  decision: z.enum(['deny', 'limited', 'approval_required']),
  rule: z.string().describe('The policy rule that decided, e.g. /tools/pve_create_qemu_vm/limits/0 or (default deny).'),
  reason: z.string(),
  retry_after_s: z.number().int().optional().describe('When limited: seconds until the window resets.'),
});

/** Members every output schema carries, so an error or a policy denial still matches it. */
export const outputExtras = {
  error: errorOutput.optional().describe('Present only when the call failed.'),
  policy: policyOutput.optional().describe('Present only when the policy refused the call.'),
  approval_id: z.string().optional().describe('When a person must approve: call again with this approval_id once they have.'),
  approval_url: z.string().optional().describe('When a person must approve: the page where they do.'),
  expires_at: z.string().optional().describe('When a person must approve: until when the approval can be given and used.'),
};
