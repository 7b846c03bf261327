// What a tool is, independent of any MCP server class: name, schemas, hints and a handler that
// gets validated arguments and a context. Tools and policy depend on this file only.

import type { z } from 'zod';
import type { Identity } from '../identity';
import type { PveClient } from '../proxmox/client';

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
}

export interface ToolContext {
  readonly requestId: string;
  readonly identity: Identity;
  /** The Proxmox client for this call; throws a `config` ToolFailure when not configured. */
  pve(): PveClient;
}

export interface ToolSuccess<S> {
  structured: S;
  text: string;
  /** A result that is not a fault of the call but still failed (e.g. a task that ended in error). */
  isError?: boolean;
}

export interface ToolSpec<I extends z.ZodType = z.ZodType, O extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** True when this call only reads or previews: rate limits then take no slot. */
  dryRun?(args: z.output<I>): boolean;
  /** For property-string arguments: the fields policy rules may reach into (args.net0.bridge). */
  policyFields?: Readonly<Record<string, readonly string[]>>;
  /** The exact upstream parameters this call would send, when known before running (shown to approvers). */
  describeCall?(args: z.output<I>): Record<string, string> | null;
  run(args: z.output<I>, ctx: ToolContext): Promise<ToolSuccess<z.input<O>>>;
}

/** Keeps the handler's argument type tied to the input schema. */
export function defineTool<I extends z.ZodType, O extends z.ZodObject>(spec: ToolSpec<I, O>): ToolSpec<I, O> {
  return spec;
}

/**
 * `indeterminate`: a write may or may not have happened (its answer was lost), so the call
 * keeps its rate-limit slot; after any other failure the slot is given back.
 */
export type FailureKind = 'invalid_arguments' | 'config' | 'conflict' | 'upstream' | 'indeterminate' | 'internal';

/** A failure a tool reports on purpose; anything else thrown is reported as `internal`. */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly fields: readonly { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}
