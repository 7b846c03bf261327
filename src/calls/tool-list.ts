// The tools as MCP lists them, whichever era asks: each tool's definition (JSON Schemas of its
// input, with approval_id added where the policy may ask for an approval, and of its output),
// and the ones a policy lets a caller see. Built once per set of tools; every tool definition
// costs each conversation context (tools/list has a budget: test/app/app.worker.test.ts), so:
// - an output schema names each member of the result and its type, one level deep: what is
//   inside a member is told by the result's text, and a client checks the result all the same;
//   the members every result may carry (a failure's `error`, a refusal's `policy`, an approval's
//   `approval_id`...) are told once, in the server's instructions;
// - annotations leave out a hint that says what MCP assumes anyway (readOnlyHint false,
//   idempotentHint false).

import { z } from 'zod';
import { own } from '../core/own';
import { isListed } from '../policy/evaluate';
import type { ActivePolicy } from '../policy/source';
import { outputExtras } from './result';
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
  .optional();

/** The tool set as the seam serves it: lookups, validating inputs, and definitions. */
export interface ToolSet {
  get(name: string): { tool: ToolSpec; input: z.ZodType } | undefined;
  /**
   * The definitions a caller whose token holds `scopes` sees under this policy: the tools in
   * those scopes the policy lets through (a broken policy shows all of them: every call is then
   * denied with the reason).
   */
  listed(active: ActivePolicy, scopes: readonly string[]): ToolDefinition[];
  all(): ToolDefinition[];
}

/**
 * Every tool also takes `cluster` where the server reaches more than one (`clusters`, the first
 * the default): which one the call is for. With one cluster the argument is not there at all, so
 * a one-cluster tools/list is as it always was, and `cluster` is refused as any unknown argument.
 */
export function toolSet(tools: readonly ToolSpec[], clusters: readonly string[] = []): ToolSet {
  const [first, ...more] = clusters;
  const cluster =
    first !== undefined && more.length
      ? {
          cluster: z
            .enum([first, ...more])
            .optional()
            .describe(`Cluster: ${clusters.join(', ')} (default ${first}).`),
        }
      : {};
  const inputs = new Map(
    tools.map((t) => [t.name, t.input.extend({ ...cluster, approval_id: APPROVAL_ID })]),
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  // Each tool with approval_id in its input schema, and without (for a policy that never asks).
  const asking = tools.map((t) => describeTool(t, inputs.get(t.name)!));
  const plain = tools.map((t) => describeTool(t, t.input.extend(cluster)));
  return {
    get: (name) => {
      const tool = byName.get(name);
      return tool ? { tool, input: inputs.get(name)! } : undefined;
    },
    listed: (active, scopes) => {
      const inScope = (i: number): boolean => scopes.includes(tools[i]!.scope);
      if (!active.ok) return asking.filter((_, i) => inScope(i));
      const { policy } = active;
      return asking.flatMap((def, i) => {
        if (!inScope(i) || !isListed(policy, def.name)) return [];
        const asks = own(policy.doc.tools, def.name)?.action === 'require_approval';
        return [asks ? def : plain[i]!];
      });
    },
    all: () => asking,
  };
}

function describeTool(tool: ToolSpec, input: z.ZodType): ToolDefinition {
  const { readOnlyHint, idempotentHint, title: _title, ...hints } = tool.annotations;
  return {
    name: tool.name,
    title: tool.annotations.title,
    description: tool.description,
    inputSchema: leanInput(toJsonSchema(input, 'input')) as ToolDefinition['inputSchema'],
    outputSchema: oneLevel(toJsonSchema(tool.output, 'output')) as ToolDefinition['outputSchema'],
    // false is what MCP assumes for these two; destructiveHint and openWorldHint default to true.
    // The title is the tool's own (top-level) title, not repeated here.
    annotations: {
      ...hints,
      ...(readOnlyHint ? { readOnlyHint } : {}),
      ...(idempotentHint ? { idempotentHint } : {}),
    } as ToolSpec['annotations'],
  };
}

/**
 * An input schema without string lengths and patterns, far-off maxima and minima of 0 or 1, a
 * `false` default (what an absent flag means anyway) and `additionalProperties: false`: they are
 * checked on every call all the same, with an error naming the field (an unknown argument too)
 * and what is allowed, and a model goes by the descriptions (which give the formats by example).
 */
function leanInput(node: Record<string, unknown>): Record<string, unknown> {
  const walk = (n: unknown): void => {
    if (!n || typeof n !== 'object') return;
    const r = n as Record<string, unknown>;
    if (r.type === 'string' || (Array.isArray(r.type) && r.type.includes('string'))) {
      delete r.maxLength;
      delete r.minLength;
      delete r.pattern;
    }
    // Only a bound a model could miss says something (a vmid's 999999999, a count's 1 do not).
    if (typeof r.maximum === 'number' && r.maximum >= 1_000_000) delete r.maximum;
    if (typeof r.minimum === 'number' && r.minimum <= 1 && r.minimum >= 0) delete r.minimum;
    if (r.type === 'boolean' && r.default === false) delete r.default;
    if (r.additionalProperties === false) delete r.additionalProperties;
    for (const v of Object.values(r)) walk(v);
  };
  walk(node);
  return node;
}

/**
 * Members every result may carry, described once in the server's instructions, and those that
 * repeat the result's text (the next step, a note): a model reads them there.
 */
const COMMON_MEMBERS = new Set([...Object.keys(outputExtras), 'next_step', 'note']);

/**
 * An output schema as listed: each member with its type, nothing inside objects or arrays of
 * objects, no `required`, no enums. It still accepts every result.
 */
function oneLevel(json: Record<string, unknown>): Record<string, unknown> {
  const properties = (json.properties ?? {}) as Record<string, Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    if (COMMON_MEMBERS.has(name)) continue;
    const member = shallow(schema);
    // A member of no one type is left out (the schema still accepts it): `{}` says nothing.
    if (member) out[name] = member;
  }
  return { type: 'object', properties: out };
}

function shallow(schema: Record<string, unknown>): Record<string, unknown> | null {
  const any = schema.anyOf as Record<string, unknown>[] | undefined;
  const types = any
    ? any.flatMap((s) => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []))
    : Array.isArray(schema.type)
      ? schema.type
      : schema.type
        ? [schema.type]
        : [];
  const items = schema.items as Record<string, unknown> | undefined;
  const scalarItems =
    items && typeof items.type === 'string' && items.type !== 'object'
      ? { items: { type: items.type } }
      : {};
  const distinct = [...new Set(types)];
  if (!distinct.length) return null;
  // One type per schema: a `type` array (["string", "null"]) is legal JSON Schema, but clients
  // that map tool schemas onto a one-type dialect (Gemini's OpenAPI subset) reject it, and the
  // Inspector warns of it; `anyOf` branches say the same to every client.
  if (distinct.length === 1) return { type: distinct[0], ...scalarItems };
  return {
    anyOf: distinct.map((type) => (type === 'array' ? { type, ...scalarItems } : { type })),
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
