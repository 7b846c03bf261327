// The limit a live counter counts for, read back from the policy: a counter is stored under
// `<tool>/<counter>` (or `*/<counter>` for all_tools) in the object of its scope, and a tool's
// (or all_tools') counter name is unique per scope (load.ts refuses duplicates). Pure.

import { own } from '../core/own';
import type { Limit, PolicyDocument, Scope } from './schema';

/**
 * The limit behind counter `key` of `scope` (`...@<cluster>`: one cluster's counter of a limit for
 * some clusters), or undefined when the policy has none (any more).
 */
export function limitOf(doc: PolicyDocument, rawKey: string, scope: Scope): Limit | undefined {
  // A counter's name has no '@' (schema.ts): what follows one is the cluster.
  const [key = '', cluster] = rawKey.split('@');
  const slash = key.lastIndexOf('/');
  if (slash < 1) return undefined;
  const tool = key.slice(0, slash);
  const counter = key.slice(slash + 1);
  const rules = tool === '*' ? doc.all_tools : own(doc.tools, tool);
  return rules?.limits?.find(
    (l) =>
      l.counter === counter &&
      l.scope === scope &&
      (cluster === undefined) === (l.cluster === undefined) &&
      (cluster === undefined || [l.cluster].flat().includes(cluster)),
  );
}
