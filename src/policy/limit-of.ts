// The limit a live counter counts for, read back from the policy: a counter is stored under
// `<tool>/<counter>` (or `*/<counter>` for all_tools) in the object of its scope, and a tool's
// (or all_tools') counter name is unique per scope (load.ts refuses duplicates). Pure.

import { own } from '../core/own';
import type { Limit, PolicyDocument, Scope } from './schema';

/** The limit behind counter `key` of `scope`, or undefined when the policy has none (any more). */
export function limitOf(doc: PolicyDocument, key: string, scope: Scope): Limit | undefined {
  const slash = key.lastIndexOf('/');
  if (slash < 1) return undefined;
  const tool = key.slice(0, slash);
  const counter = key.slice(slash + 1);
  const rules = tool === '*' ? doc.all_tools : own(doc.tools, tool);
  return rules?.limits?.find((l) => l.counter === counter && l.scope === scope);
}
