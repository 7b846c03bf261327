// The line diff the policy console shows between two versions' texts, bounded in size and in
// work so that no pair of texts makes a page slow (Myers's diff, the `diff` package, costs about
// lines × changes: two entirely different 10,000-line policies took 10 s). Within the bounds: every
// line, kept, removed or added. Past them: `too_large`, with each text's line count and, unless a
// text was too long to look at, how many lines of each have no equal in the other (no diff can
// pair those, so they are changes whatever it would find); the page then says so and shows both
// texts. The bounds, in order: MAX_DIFF_CHARS characters and MAX_DIFF_LINES lines per text (what
// a version may hold); no more lines without an equal than MAX_DIFF_EDITS (answered without
// diffing); then the diff's own `maxEditLength` (MAX_DIFF_EDITS) and a count of its line
// comparisons (MAX_DIFF_COMPARISONS, by its `comparator`). Not its `timeout`: that reads
// the system clock, which on deployed Workers advances only with I/O, so it would never fire there.
// Pure: no clock, no I/O. The figures: bench/policy-console.ts, docs/performance.md.

import { type ChangeObject, diffArrays } from 'diff';
import { html } from 'hono/html';
import { countLines, MAX_POLICY_BYTES, MAX_POLICY_LINES } from '../policy/text';

/** A text longer than this is not diffed: no version the store accepts is (older ones may be). */
export const MAX_DIFF_LINES = MAX_POLICY_LINES;
/** In UTF-16 code units, never more than a text's UTF-8 bytes: every storable text is within. */
export const MAX_DIFF_CHARS = MAX_POLICY_BYTES;
/**
 * Changed lines (removed plus added) past which the diff gives up. Its work grows as their square:
 * at this bound, two 10,000-line versions with the same lines reordered take 85–150 ms here.
 */
export const MAX_DIFF_EDITS = 1_000;
/** Line comparisons past which it gives up: long runs of equal lines on many paths cost these. */
export const MAX_DIFF_COMPARISONS = 2_000_000;

export interface DiffPart {
  change: 'same' | 'removed' | 'added';
  /** Whole lines, each with its line break (the last line of a text may have none). */
  text: string;
}

export type PolicyDiff =
  | { kind: 'diff'; parts: DiffPart[]; removed: number; added: number }
  /** A text is past MAX_DIFF_LINES or MAX_DIFF_CHARS: not read further than its line count. */
  | { kind: 'too_large'; reason: 'size'; beforeLines: number; afterLines: number }
  | {
      kind: 'too_large';
      /** Past MAX_DIFF_EDITS or MAX_DIFF_COMPARISONS. */
      reason: 'work';
      beforeLines: number;
      afterLines: number;
      /** Lower bounds: lines of one text with no equal line left in the other. */
      removedAtLeast: number;
      addedAtLeast: number;
    };

class OverBudget extends Error {}

/** One of the two texts, and what the page calls it (`version 4`). */
export interface NamedText {
  name: string;
  text: string;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The diff as the console shows it: the lines, removed in `<del>` and added in `<ins>`; or, past
 * the bound, a sentence saying how the texts differ and each text folded under its name.
 */
export function policyDiffHtml(before: NamedText, after: NamedText) {
  const d = diffPolicyTexts(before.text, after.text);
  if (d.kind === 'diff')
    return html`<div class="diff" role="region" aria-label="Changes">${d.parts.map((p) =>
      p.change === 'added'
        ? html`<ins>${p.text}</ins>`
        : p.change === 'removed'
          ? html`<del>${p.text}</del>`
          : html`<span>${p.text}</span>`,
    )}</div>`;
  const both = `${before.name} (${count(d.beforeLines)} lines) and ${after.name} (${count(d.afterLines)} lines)`;
  const why =
    d.reason === 'size'
      ? `${both} are too long to compare line by line here (up to ${count(MAX_DIFF_LINES)} lines and ${count(MAX_DIFF_CHARS)} characters each)`
      : `${both} differ in too many places to show line by line here (the diff stops at ${count(MAX_DIFF_EDITS)} changed lines): ${
          d.removedAtLeast + d.addedAtLeast
            ? `${count(d.removedAtLeast)} lines of ${before.name} have no equal in ${after.name}, and ${count(d.addedAtLeast)} of ${after.name} none in ${before.name}`
            : 'they have the same lines, in another order'
        }`;
  const fold = (t: NamedText) =>
    html`<details><summary>The text of ${t.name}</summary><pre class="diff">${t.text}</pre></details>`;
  return html`<div role="region" aria-label="Changes"><p class="diff-too-large">${why[0]!.toUpperCase()}${why.slice(1)}. Both texts:</p>${fold(before)}${fold(after)}</div>`;
}

export function diffPolicyTexts(before: string, after: string): PolicyDiff {
  const beforeLines = countLines(before);
  const afterLines = countLines(after);
  if (
    Math.max(before.length, after.length) > MAX_DIFF_CHARS ||
    Math.max(beforeLines, afterLines) > MAX_DIFF_LINES
  )
    return { kind: 'too_large', reason: 'size', beforeLines, afterLines };
  const a = linesOf(before);
  const b = linesOf(after);
  // Each distinct line becomes a number, so that a comparison costs the same for any line.
  const ids = new Map<string, number>();
  const idOf = (line: string) => {
    const known = ids.get(line);
    if (known !== undefined) return known;
    ids.set(line, ids.size);
    return ids.size - 1;
  };
  const aIds = a.map(idOf);
  const bIds = b.map(idOf);
  const bound = unmatched(aIds, bIds, ids.size);
  const tooMuchWork: PolicyDiff = {
    kind: 'too_large',
    reason: 'work',
    beforeLines,
    afterLines,
    removedAtLeast: bound.removed,
    addedAtLeast: bound.added,
  };
  // The lines only one text has are changes whatever the diff finds: no need to try.
  if (bound.removed + bound.added > MAX_DIFF_EDITS) return tooMuchWork;
  let comparisons = 0;
  let changes: ChangeObject<number[]>[] | undefined;
  try {
    changes = diffArrays(aIds, bIds, {
      maxEditLength: MAX_DIFF_EDITS,
      comparator: (x, y) => {
        if (++comparisons > MAX_DIFF_COMPARISONS) throw new OverBudget();
        return x === y;
      },
    });
  } catch (err) {
    if (err instanceof OverBudget) return tooMuchWork;
    throw err;
  }
  // `undefined`: the package's way of saying it passed maxEditLength.
  if (!changes) return tooMuchWork;
  const parts: DiffPart[] = [];
  let removed = 0;
  let added = 0;
  let ai = 0;
  let bi = 0;
  for (const c of changes) {
    // The changes hold line ids: a removed run's lines come from `before`, the others' from `after`.
    const lines = c.removed ? a.slice(ai, ai + c.count) : b.slice(bi, bi + c.count);
    parts.push({
      change: c.added ? 'added' : c.removed ? 'removed' : 'same',
      text: lines.join(''),
    });
    if (c.added) added += c.count;
    else ai += c.count;
    if (c.removed) removed += c.count;
    else bi += c.count;
  }
  return { kind: 'diff', parts, removed, added };
}

/** The text's lines, each with its line break. */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  const last = lines.pop()!;
  const out = lines.map((line) => `${line}\n`);
  if (last) out.push(last);
  return out;
}

/** Lines of each side with no equal line left on the other (as multisets): no diff pairs them. */
function unmatched(a: number[], b: number[], distinct: number): { removed: number; added: number } {
  const left = new Uint32Array(distinct);
  for (const id of a) left[id] = (left[id] ?? 0) + 1;
  let common = 0;
  for (const id of b) {
    const n = left[id] ?? 0;
    if (n > 0) {
      left[id] = n - 1;
      common++;
    }
  }
  return { removed: a.length - common, added: b.length - common };
}
