// A policy's rules that no call of their tool can reach: a tool's own rule on `target.` where the
// tool acts on no guest (a list, the version), on `new.` where it makes none, and on a create's
// `target.` (the guest it makes) a fact no guest has before it exists (its status, lock, HA
// state...). A deny_if on one never fires, a require is never met and an approve_if never asks.
// (An all_tools rule is for the tools that have such a guest, and is not one of these.) The CLI's
// `check` and `push` refuse them; the console's and the policy API's checks warn of them, and the
// store takes them, so that a version another release of this server accepted still loads.

import { NEW_FIELDS } from '../policy/conditions';
import type { CompiledPolicy, PolicyWarning } from '../policy/load';
import { type CheckedPolicy, checkPolicyText } from '../policy/text';
import { TOOL_CATALOG, TOOLS } from './index';

/** The facts a guest has before it exists, as a create's `target.` (and any `new.`) has them. */
const MADE_FACTS: ReadonlySet<string> = new Set([...NEW_FIELDS, 'cluster']);

/** Each such rule (or its `when`): where it is, and why no call reaches it. */
export function rulesNoCallReaches(policy: CompiledPolicy): PolicyWarning[] {
  return Object.entries(policy.doc.tools).flatMap(([name, rules]) => {
    const tool = TOOLS.find((t) => t.name === name);
    const why = (path: string): string | null => {
      const [root, fact] = path.split('.');
      if (root === 'target' && !tool?.target)
        return 'acts on no guest, so no target fact reaches it';
      if (root === 'new' && !tool?.makes) return 'makes no guest, so no new fact reaches it';
      if (root === 'target' && tool?.targetsWhatItMakes && !MADE_FACTS.has(fact ?? ''))
        return `acts on the guest it makes, which has no ${fact} before it exists (only ${[...MADE_FACTS].join(', ')})`;
      return null;
    };
    return (['deny_if', 'require', 'approve_if'] as const).flatMap((kind) =>
      (rules[kind] ?? []).flatMap((cond, i) =>
        [cond.path, cond.when?.path].flatMap((path) => {
          const wrong = path === undefined ? null : why(path);
          return wrong
            ? [{ pointer: `/tools/${name}/${kind}/${i}`, message: `${path}: ${name} ${wrong}` }]
            : [];
        }),
      ),
    );
  });
}

/**
 * A draft as the console and the policy API check it: as the store would take it, with a warning
 * for each rule no call of its tool can reach (and for each cluster named that the server does
 * not reach).
 */
export function checkDraft(text: string, clusters: readonly string[]): CheckedPolicy {
  const checked = checkPolicyText(text, TOOL_CATALOG, clusters);
  return checked.ok
    ? { ...checked, warnings: [...checked.warnings, ...rulesNoCallReaches(checked.policy)] }
    : checked;
}
