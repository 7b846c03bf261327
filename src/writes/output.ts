// What a write's result shows of what it sent: the request and, when the call waited for it, the
// task's end. Every write tool's output schema repeats these: keep them lean.

import { z } from 'zod';

/** The request a write sent (or would send), as results show it: method, path, its parameters. */
export const requestOutput = z
  .object({ method: z.string(), path: z.string(), params: z.record(z.string(), z.string()) })
  .partial();

/**
 * A task's state, when the call waited for it: {status, exitstatus, succeeded}. Said in words
 * rather than typed member by member: this schema is repeated in every write tool's definition.
 */
export const taskOutput = z.looseObject({}).describe('{status, exitstatus, succeeded}');
