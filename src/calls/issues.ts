// Turns zod issues into one line per field, saying what is allowed, in words an agent can act on.

import type { z } from 'zod';

export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * What an argument named `__proto__` is called on its way to a tool. JSON keeps such a key, but
 * the MCP SDKs copy `arguments` into a fresh object, where assigning it sets the prototype
 * instead: the argument would vanish and the call go on without it. The entry renames it to
 * this (see ../http/mcp-body.ts), so the tool refuses it as unknown; errors name it back.
 */
export const PROTO_KEY_STAND_IN = '(__proto__)';

export function describeIssues(error: z.ZodError): FieldProblem[] {
  return describeList(error.issues, []);
}

/** A field as the caller wrote it. */
export function callerKey(key: PropertyKey): string {
  const text = String(key);
  return text === PROTO_KEY_STAND_IN ? '__proto__' : text;
}

function describeList(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[]): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    const field = path.length ? path.map(callerKey).join('.') : '(arguments)';
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) {
          const named = [...path.map(callerKey), callerKey(key).slice(0, 64)].join('.');
          out.push({
            field: named,
            message: path.length
              ? 'unknown key (not accepted here)'
              : 'unknown argument (not accepted by this tool)',
          });
        }
        break;
      case 'invalid_key':
        // A record's key that its key schema refused: say why, under the key's own field.
        out.push(...describeList(issue.issues, path));
        break;
      case 'invalid_type':
        out.push({
          field,
          message:
            issue.input === undefined
              ? `required (${issue.expected})`
              : `expected ${issue.expected}, got ${kindOf(issue.input)}`,
        });
        break;
      case 'too_small':
      case 'too_big':
        out.push({ field, message: bound(issue) });
        break;
      case 'invalid_value':
        out.push({ field, message: `must be one of ${issue.values.map(String).join(', ')}` });
        break;
      case 'invalid_union': {
        // Explain the alternative whose type matched the input (e.g. the list form of tags),
        // not every alternative that could never have applied.
        const branch = issue.errors.find(
          (b) => !b.some((i) => i.code === 'invalid_type' && i.path.length === 0),
        );
        if (branch) out.push(...describeList(branch, path));
        else
          out.push({
            field,
            message: `expected ${issue.errors.map((b) => expectedOf(b)).join(' or ')}`,
          });
        break;
      }
      default:
        out.push({ field, message: issue.message });
    }
  }
  return out;
}

function bound(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall): string {
  const small = issue.code === 'too_small';
  const limit = small
    ? (issue as z.core.$ZodIssueTooSmall).minimum
    : (issue as z.core.$ZodIssueTooBig).maximum;
  const inclusive = issue.inclusive !== false;
  const relation = small
    ? inclusive
      ? 'at least'
      : 'more than'
    : inclusive
      ? 'at most'
      : 'less than';
  switch (issue.origin) {
    case 'string':
      return `must be ${relation} ${String(limit)} characters long`;
    case 'array':
    case 'set':
      return `must have ${relation} ${String(limit)} items`;
    default:
      return `must be ${relation} ${String(limit)}`;
  }
}

function expectedOf(branch: readonly z.core.$ZodIssue[]): string {
  const first = branch[0];
  return first?.code === 'invalid_type' ? first.expected : 'another form';
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return 'a non-integer number';
  return typeof value;
}
