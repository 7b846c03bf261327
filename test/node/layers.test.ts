// The layers of src/ import one way: no folder (or top-level module) imports, through any chain
// of value imports, one that imports it back. Type-only imports are erased at build time and do
// not count (env.ts names every Durable Object class's type, for instance).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** A module's unit: its top-level folder under src/, or the file itself when it sits in src/. */
function unit(file: string): string {
  const rel = path.relative(SRC, file);
  const [first] = rel.split(path.sep);
  return rel.includes(path.sep) ? `${first}/` : rel.replace(/\.ts$/, '');
}

/** Value imports of a file, as absolute paths (package imports left out). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(
    /^\s*(import|export)\s+(type\s+)?([^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]/gm,
  )) {
    if (m[2]) continue; // import type ... / export type ...
    const target = path.resolve(path.dirname(file), m[4]!);
    out.push(/\.(ts|json)$/.test(target) ? target : `${target}.ts`);
  }
  return out;
}

function unitGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files(SRC)) {
    const from = unit(file);
    for (const target of valueImports(file)) {
      if (!target.startsWith(SRC)) continue;
      const to = unit(target);
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Every cycle's units, found by a depth-first search (one path per cycle found). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe('the layers of src/', () => {
  it('have no import cycles between folders', () => {
    expect(cycles(unitGraph()).map((c) => c.join(' → '))).toEqual([]);
  });

  it('keep the pure core pure: policy/ imports only identity (the person matcher), own (own-entry lookups) and property-value (parsed values), no I/O', () => {
    expect([...(unitGraph().get('policy/') ?? [])].sort()).toEqual([
      'identity',
      'own',
      'property-value',
    ]);
  });

  it('keep calls/ free of any MCP era', () => {
    for (const file of files(path.join(SRC, 'calls'))) {
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/@modelcontextprotocol\/|agents\/mcp/);
    }
  });
});
