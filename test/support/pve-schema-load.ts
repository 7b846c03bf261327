// Node side of the PVE schema check (runs in the vitest globalSetup): finds Proxmox's own API
// schema and cuts out the definitions of the endpoints we call, small enough to hand to the
// workerd tests through vitest's provide. The schema is AGPL reference data: it is read here at
// test time and never copied into the project.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import type { EndpointDef } from './pve-endpoint.ts';

export type { EndpointDef };

const SCHEMA_FILE_NAME = 'pve-api-schema-9.1.3.json';
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
const ENDPOINT_KEY_RE = /^(GET|POST|PUT|DELETE) (\/\S*)$/;

/**
 * Finds the schema file: $PVE_API_SCHEMA, else ../shared/pve-api/… relative to the repo root;
 * null when neither exists. Tests that need it call `requireInCi`. (`.ci/run` sets
 * PVE_API_SCHEMA when the checkout is not beside the shared folder.)
 */
export function findSchemaFile(repoRoot: string): string | null {
  const fromEnv = process.env.PVE_API_SCHEMA;
  if (fromEnv) {
    // An explicit setting that points nowhere is a mistake to surface, not to fall back from.
    if (!existsSync(fromEnv)) {
      throw new Error(`PVE_API_SCHEMA is set to ${fromEnv}, which does not exist`);
    }
    return path.resolve(fromEnv);
  }
  const beside = path.resolve(repoRoot, '..', 'shared', 'pve-api', SCHEMA_FILE_NAME);
  return existsSync(beside) ? beside : null;
}

/** A reference file beside the schema (e.g. endpoints-9.1.3.json), found the same way, or null. */
export function findReferenceFile(repoRoot: string, name: string): string | null {
  const schema = findSchemaFile(repoRoot);
  const file = schema ? path.join(path.dirname(schema), name) : null;
  return file && existsSync(file) ? file : null;
}

/**
 * Tests that check against the real schema must not vanish quietly. Under CI (CI=true) a
 * missing file fails the run; elsewhere the tests are skipped and this says so, loudly.
 */
export function requireInCi(file: string | null, what: string): void {
  if (file) return;
  const message = `${what} was not found (set PVE_API_SCHEMA, or keep the shared pve-api folder beside the checkout)`;
  if (/^(1|true)$/i.test(process.env.CI ?? '')) throw new Error(`${message}: CI needs it`);
  console.warn(`WARNING: ${message}; the tests that check against it are SKIPPED.`);
}

/**
 * Walks the apiSchema tree and returns the definitions for the given "METHOD /path/template" keys
 * (throws if one is missing). `withReturns` adds each method's returns schema (for checking
 * responses; left out by default to keep what the workerd tests receive small).
 */
export function loadEndpoints(
  schemaFile: string,
  wanted: string[],
  options: { withReturns?: boolean } = {},
): EndpointDef[] {
  const bad = wanted.filter((key) => !ENDPOINT_KEY_RE.test(key));
  if (bad.length > 0) throw new Error(`not "METHOD /path" keys: ${bad.join(', ')}`);

  const found = new Map<string, EndpointDef>();
  const visit = (node: unknown): void => {
    if (!isRecord(node)) return;
    const { path: template, info, children } = node;
    if (typeof template === 'string' && isRecord(info)) {
      for (const method of METHODS) {
        const def = info[method];
        if (!isRecord(def)) continue;
        const parameters = def.parameters ?? null;
        const returns = options.withReturns ? { returns: def.returns ?? null } : {};
        found.set(`${method} ${template}`, { method, path: template, parameters, ...returns });
      }
    }
    if (Array.isArray(children)) children.forEach(visit);
  };
  parseSchemaTree(readFileSync(schemaFile, 'utf8'), schemaFile).forEach(visit);

  const unique = [...new Set(wanted)];
  const missing = unique.filter((key) => !found.has(key));
  if (missing.length > 0) throw new Error(`${schemaFile} defines no ${missing.join(', ')}`);
  return unique.map((key) => found.get(key) as EndpointDef);
}

/** Accepts the JSON array, or pve-docs' apidata.js (`const apiSchema = [...];`) it was cut from. */
function parseSchemaTree(text: string, file: string): unknown[] {
  const isArray = text.trimStart().startsWith('[');
  const start = isArray ? text.indexOf('[') : text.search(/apiSchema\s*=\s*\[/);
  const open = start < 0 ? -1 : text.indexOf('[', start);
  const close = text.lastIndexOf(']');
  if (open < 0 || close < open) throw new Error(`${file} holds no apiSchema array`);
  const tree: unknown = JSON.parse(text.slice(open, close + 1));
  if (!Array.isArray(tree)) throw new Error(`${file} holds no apiSchema array`);
  return tree;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
