// The policy console's bounded diff (src/web/policy-diff.ts) and the line limit beside the byte
// limit (src/policy/text.ts): within the bound the pages show the diff, past it they say how the
// texts differ and show both; a 10,000-line policy passes the checks, 25,000 lines do not. What
// these pages cost is measured by `npm run bench` (bench/policy-console.ts), not here.

import { describe, expect, it } from 'vitest';
import {
  consoleViewOf,
  largePolicy,
  reorderedRules,
  scatteredEdit,
  storedVersion,
} from '../../bench/large-policy';
import { checkPolicyText, countLines, MAX_POLICY_LINES } from '../../src/policy/text';
import type { PolicyVersion } from '../../src/policy-store/types';
import { TOOL_CATALOG } from '../../src/tools';
import { consolePage, type ConsoleView, versionPage } from '../../src/web/policy-console-page';
import {
  diffPolicyTexts,
  MAX_DIFF_EDITS,
  MAX_DIFF_LINES,
  type PolicyDiff,
} from '../../src/web/policy-diff';

const ACTIVE = largePolicy(10_000);
/** The version ACTIVE replaced: every 400th guest id differs. */
const SCATTERED = scatteredEdit(ACTIVE, 400);
/** How many lines that is (each changed in place). */
const CHANGED = ((was) => ACTIVE.split('\n').filter((line, i) => line !== was[i]).length)(
  SCATTERED.split('\n'),
);
/** Rules for other teams and guests throughout: only the JSON's structure lines are alike. */
const OTHER = largePolicy(10_000, 1);

const lines = (n: number, line: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => `${line(i)}\n`).join('');

/** Both texts back from a diff: what was there before, and what is there after. */
function sides(d: PolicyDiff): { before: string; after: string } {
  if (d.kind !== 'diff') throw new Error(`no diff: ${d.kind}`);
  const of = (skip: 'added' | 'removed') =>
    d.parts
      .filter((p) => p.change !== skip)
      .map((p) => p.text)
      .join('');
  return { before: of('added'), after: of('removed') };
}

/** What hono/html makes of a text. */
const escaped = (text: string) =>
  text.replace(
    /[&<>'"]/g,
    (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', "'": '#39', '"': 'quot' }[c]};`,
  );

const version = storedVersion;
const consoleView = (previous: PolicyVersion, active: PolicyVersion): ConsoleView =>
  consoleViewOf(previous, active);

const render = async (page: ReturnType<typeof consolePage>) => (await page).toString();

describe('diffPolicyTexts', () => {
  it('gives the lines kept, removed and added, in order', () => {
    expect(diffPolicyTexts('a\nb\nc\n', 'a\nB\nc\nd')).toEqual({
      kind: 'diff',
      parts: [
        { change: 'same', text: 'a\n' },
        { change: 'removed', text: 'b\n' },
        { change: 'added', text: 'B\n' },
        { change: 'same', text: 'c\n' },
        { change: 'added', text: 'd' },
      ],
      removed: 1,
      added: 2,
    });
  });

  it('diffs a 10,000-line policy against its previous version changed in scattered places', () => {
    const d = diffPolicyTexts(SCATTERED, ACTIVE);
    expect(CHANGED).toBeGreaterThan(10);
    expect(d).toMatchObject({ kind: 'diff', removed: CHANGED, added: CHANGED });
    expect(sides(d)).toEqual({ before: SCATTERED, after: ACTIVE });
  });

  it('diffs up to MAX_DIFF_EDITS changed lines and gives up past them', () => {
    const base = lines(5_000, (i) => `line ${i}`);
    const changed = (n: number) =>
      lines(n, (i) => `new ${i}`) + base.split('\n').slice(n).join('\n');
    const within = diffPolicyTexts(base, changed(MAX_DIFF_EDITS / 2));
    expect(within).toMatchObject({ kind: 'diff', removed: 500, added: 500 });
    expect(sides(within)).toEqual({ before: base, after: changed(MAX_DIFF_EDITS / 2) });
    expect(diffPolicyTexts(base, changed(MAX_DIFF_EDITS / 2 + 1))).toEqual({
      kind: 'too_large',
      reason: 'work',
      beforeLines: 5_000,
      afterLines: 5_000,
      removedAtLeast: 501,
      addedAtLeast: 501,
    });
  });

  it('gives up on two entirely different 10,000-line policies, counting the lines only one has', () => {
    const d = diffPolicyTexts(OTHER, ACTIVE);
    expect(d).toMatchObject({
      kind: 'too_large',
      reason: 'work',
      beforeLines: 10_000,
      afterLines: 10_000,
    });
    if (d.kind !== 'too_large' || d.reason !== 'work') throw new Error('unreachable');
    expect(d.removedAtLeast + d.addedAtLeast).toBeGreaterThan(MAX_DIFF_EDITS);
  });

  it('gives up within MAX_DIFF_EDITS of work when the same lines are only reordered', () => {
    expect(diffPolicyTexts(reorderedRules(ACTIVE), ACTIVE)).toEqual({
      kind: 'too_large',
      reason: 'work',
      beforeLines: 10_000,
      afterLines: 10_000,
      removedAtLeast: 0,
      addedAtLeast: 0,
    });
  });

  it('does not diff a text of more than MAX_DIFF_LINES lines', () => {
    expect(diffPolicyTexts('\n'.repeat(MAX_DIFF_LINES + 1), '{}')).toEqual({
      kind: 'too_large',
      reason: 'size',
      beforeLines: MAX_DIFF_LINES + 1,
      afterLines: 1,
    });
  });
});

describe('countLines', () => {
  it.each([
    ['', 0],
    ['{}', 1],
    ['{}\n', 1],
    ['{\n}', 2],
    ['\n', 1],
    ['\n\n', 2],
  ])('counts %j as %i lines', (text, n) => {
    expect(countLines(text)).toBe(n);
  });
});

describe('checkPolicyText, in lines', () => {
  it('passes a realistic 10,000-line policy', () => {
    expect(countLines(ACTIVE)).toBe(10_000);
    expect(checkPolicyText(ACTIVE, TOOL_CATALOG)).toMatchObject({ ok: true });
  });

  it('passes MAX_POLICY_LINES lines and refuses more, naming the limit', () => {
    const padded = (n: number) => `{"version": "1"${'\n'.repeat(n - 1)}}`;
    expect(checkPolicyText(padded(MAX_POLICY_LINES), TOOL_CATALOG)).toMatchObject({ ok: true });
    expect(checkPolicyText(padded(25_000), TOOL_CATALOG)).toEqual({
      ok: false,
      errors: [{ pointer: '', message: 'the policy has 25,000 lines; at most 20,000' }],
    });
  });
});

describe('the console pages', () => {
  it('show the diff of a 10,000-line version against one that differs in a few places', async () => {
    const page = await render(
      consolePage(consoleView(version(1, SCATTERED, null), version(2, ACTIVE, 1))),
    );
    expect(page).toContain('<summary>Changes from version 1</summary><div class="diff"');
    expect(page.match(/<del>/g)).toHaveLength(CHANGED);
    expect(page.match(/<ins>/g)).toHaveLength(CHANGED);
    expect(page).not.toContain('diff-too-large');
  });

  it('say that two different versions differ and show both texts', async () => {
    const page = await render(
      consolePage(consoleView(version(1, OTHER, null), version(2, ACTIVE, 1))),
    );
    expect(page).toMatch(
      /<p class="diff-too-large">Version 1 \(10,000 lines\) and version 2 \(10,000 lines\) differ in too many places to show line by line here \(the diff stops at 1,000 changed lines\): [\d,]+ lines of version 1 have no equal in version 2, and [\d,]+ of version 2 none in version 1\. Both texts:<\/p>/,
    );
    expect(page).toContain(
      `<summary>The text of version 1</summary><pre class="diff">${escaped(OTHER)}</pre>`,
    );
    expect(page).toContain(
      `<summary>The text of version 2</summary><pre class="diff">${escaped(ACTIVE)}</pre>`,
    );
    expect(page).not.toMatch(/<(ins|del)>/);
  });

  it('say when two versions have the same lines in another order', async () => {
    const page = await render(
      consolePage(consoleView(version(1, reorderedRules(ACTIVE), null), version(2, ACTIVE, 1))),
    );
    expect(page).toContain(
      '(the diff stops at 1,000 changed lines): they have the same lines, in another order. Both texts:',
    );
  });

  it('on a version page, bound each diff on its own', async () => {
    const page = await render(
      versionPage({
        viewer: 'a@ex.org',
        csrf: 'x',
        editor: true,
        version: version(3, ACTIVE, 2),
        replaced: version(2, SCATTERED, 1),
        active: false,
        shadow: false,
        activeVersion: 1,
        activeText: OTHER,
      }),
    );
    expect(page).toContain(
      'The active version 1 (10,000 lines) and version 3 (10,000 lines) differ',
    );
    expect(page).toContain(
      `<summary>The text of the active version 1</summary><pre class="diff">${escaped(OTHER)}</pre>`,
    );
    expect(page).toContain('which it replaced</h2><div class="diff"');
    expect(page.match(/<del>/g)).toHaveLength(CHANGED);
  });
});
