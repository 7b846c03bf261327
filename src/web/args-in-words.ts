// A call's arguments as an approver reads them: each with what it means (the tool's own
// description of it) and its value in words (yes/no, lists joined), leaving out how the call is
// carried out (confirm, wait, timeout_s), which changes nothing for the guest. Pure.

import type { z } from 'zod';
import { TOOLS } from '../tools';

export interface ArgInWords {
  name: string;
  value: string;
  /** What the argument does, from the tool's input schema. */
  about: string | null;
}

/** Arguments about carrying the call out, not about what it does. */
const MECHANICS = new Set(['confirm', 'wait', 'timeout_s', 'approval_id']);

/** The description of an argument, through optional/default/nullable wrappers. */
function descriptionOf(schema: z.ZodType | undefined): string | null {
  let s: unknown = schema;
  for (let depth = 0; s && depth < 5; depth++) {
    const described = (s as { description?: unknown }).description;
    if (typeof described === 'string' && described) return described;
    const unwrap = (s as { unwrap?: () => unknown }).unwrap;
    s = typeof unwrap === 'function' ? unwrap.call(s) : undefined;
  }
  return null;
}

function inWords(v: unknown): string {
  if (v === true) return 'yes';
  if (v === false) return 'no';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v) && v.every((x) => ['string', 'number'].includes(typeof x)))
    return v.join(', ');
  return JSON.stringify(v);
}

export function argsInWords(tool: string, args: Record<string, unknown>): ArgInWords[] {
  const shape = TOOLS.find((t) => t.name === tool)?.input.shape as
    | Record<string, z.ZodType>
    | undefined;
  return Object.entries(args)
    .filter(([name]) => !MECHANICS.has(name))
    .map(([name, value]) => ({
      name,
      value: inWords(value),
      about: shape && Object.hasOwn(shape, name) ? descriptionOf(shape[name]) : null,
    }));
}
