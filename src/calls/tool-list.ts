// The tools as MCP lists them, whichever era asks: each tool's definition (JSON Schemas of its
// input, with approval_id added, and of its output), and the ones a policy lets a caller see.
// Built once per set of tools; every tool definition costs each conversation context, so the
// output schemas drop what does not change what they accept.

import { z } from 'zod';
import { isListed } from '../policy/evaluate';
import type { ActivePolicy } from '../policy/source';
import type { ToolSpec } from './tool-spec';

/** A tool's entry in tools/list (MCP's Tool, written out so no SDK era's type is needed here). */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema: { type: 'object'; [key: string]: unknown };
  annotations: ToolSpec['annotations'];
}

/**
 * Every tool also takes approval_id: the id of a person's approval, to spend on this call. Its
 * format is checked here, not published: on every tool it would cost each conversation ~2 KB.
 */
const APPROVAL_ID = z
  .string()
  .refine((v) => /^[A-Za-z0-9_-]{16,64}$/.test(v), {
    error: 'must be an approval_id exactly as returned',
  })
  .optional()
  .describe('After [APPROVAL REQUIRED]: its approval_id, once approved.');

/** The tool set as the seam serves it: lookups, validating inputs, and definitions. */
export interface ToolSet {
  get(name: string): { tool: ToolSpec; input: z.ZodType } | undefined;
  /** The definitions a caller sees under this policy (a broken policy shows all: every call is then denied with the reason). */
  listed(active: ActivePolicy): ToolDefinition[];
  all(): ToolDefinition[];
}

export function toolSet(tools: readonly ToolSpec[]): ToolSet {
  const inputs = new Map(tools.map((t) => [t.name, t.input.extend({ approval_id: APPROVAL_ID })]));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const described = tools.map((t) => describeTool(t, inputs.get(t.name)!));
  return {
    get: (name) => {
      const tool = byName.get(name);
      return tool ? { tool, input: inputs.get(name)! } : undefined;
    },
    listed: (active) =>
      active.ok ? described.filter((t) => isListed(active.policy, t.name)) : described,
    all: () => described,
  };
}

function describeTool(tool: ToolSpec, input: z.ZodType): ToolDefinition {
  return {
    name: tool.name,
    title: tool.annotations.title,
    description: tool.description,
    inputSchema: toJsonSchema(input, 'input') as ToolDefinition['inputSchema'],
    outputSchema: toJsonSchema(tool.output, 'output') as ToolDefinition['outputSchema'],
    annotations: tool.annotations,
  };
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' });
  delete json.$schema;
  // An output schema need not forbid extra members (what we return is ours), so that noise goes;
  // inputs keep it (strict).
  if (io === 'output') dropClosedObjects(json);
  return json;
}

/** Removes what does not change what an output schema accepts (JSON keys are always strings). */
function dropClosedObjects(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  const empty = (v: unknown): boolean =>
    !!v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
  if (record.additionalProperties === false || empty(record.additionalProperties))
    delete record.additionalProperties;
  if (empty(record.properties)) delete record.properties;
  const names = record.propertyNames as Record<string, unknown> | undefined;
  if (names && Object.keys(names).length === 1 && names.type === 'string')
    delete record.propertyNames;
  for (const value of Object.values(record)) dropClosedObjects(value);
}
