// Where in a policy's text each problem of its check is: the line and column of the value a JSON
// pointer names (of its key, for a member), or of the first syntax error. For the console's draft,
// so that a person finds a problem in a long text. Positions come from jsonc-parser's syntax
// tree; a pointer to something absent (a missing member) is placed at the nearest part that is
// there. Pure.

import {
  findNodeAtLocation,
  type Node,
  type ParseError,
  parse,
  parseTree,
  type Segment,
} from 'jsonc-parser';
import type { PolicyError } from './load';

export interface LocatedProblem {
  /** `pointer: message`, as `formatErrors` writes it. */
  text: string;
  /** 1-based; null when the problem is about the whole text (too large, empty). */
  line: number | null;
  column: number | null;
}

export function locateProblems(text: string, errors: readonly PolicyError[]): LocatedProblem[] {
  const root = parseTree(text);
  return errors.map((e) => {
    const label = `${e.pointer || '/'}: ${e.message}`;
    const offset = e.message.startsWith('not valid JSON')
      ? syntaxErrorAt(text)
      : e.pointer
        ? pointerAt(root, e.pointer)
        : null;
    return {
      text: label,
      ...(offset === null ? { line: null, column: null } : lineOf(text, offset)),
    };
  });
}

function syntaxErrorAt(text: string): number | null {
  const errors: ParseError[] = [];
  parse(text, errors, { allowTrailingComma: false, disallowComments: true });
  return errors[0]?.offset ?? null;
}

/** The offset of what an RFC 6901 pointer names, or of its nearest ancestor that exists. */
function pointerAt(root: Node | undefined, pointer: string): number | null {
  if (!root) return null;
  const segments: Segment[] = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (let n = segments.length; n >= 0; n--) {
    const path = segments.slice(0, n).map((s, i) => {
      const parent = findNodeAtLocation(root, segments.slice(0, i));
      return parent?.type === 'array' && /^\d+$/.test(String(s)) ? Number(s) : s;
    });
    const node = findNodeAtLocation(root, path);
    if (!node) continue;
    // A member's value: point at its key, where a reader looks.
    return node.parent?.type === 'property' ? node.parent.offset : node.offset;
  }
  return null;
}

function lineOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}
