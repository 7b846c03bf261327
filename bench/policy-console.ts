// The policy console's page (/admin/policy) built in-process, as its route builds it once the
// store has answered, from valid 10,000-line versions: the active one against the version it
// replaced, changed in scattered places; entirely different (the worst case before the diff was
// bounded); and the same rules reordered (where the diff's work bound, not its shortcut, stops
// it). Prints each case's median. Run alone with `node --import tsx bench/policy-console.ts`, or
// as the last part of `npm run bench`.

import { formatErrors } from '../src/policy/load.ts';
import { checkPolicyText, countLines } from '../src/policy/text.ts';
import { TOOL_CATALOG } from '../src/tools/index.ts';
import {
  consoleViewOf,
  largePolicy,
  reorderedRules,
  scatteredEdit,
  storedVersion,
} from './large-policy.ts';

/**
 * The page's module, imported untyped: its types reach the Worker's runtime types (through
 * src/web/policy-ops.ts and src/env.ts), which this Node program does not load.
 */
const PAGE_MODULE = '../src/web/policy-console-page.ts';
type ConsoleView = ReturnType<typeof consoleViewOf>;
type PageModule = { consolePage: (v: ConsoleView) => unknown };

const TARGET_LINES = 10_000;
const SAMPLES = Number(process.env.BENCH_CONSOLE_SAMPLES ?? 15);

async function medianMs(
  consolePage: PageModule['consolePage'],
  v: ConsoleView,
): Promise<{ ms: number; bytes: number }> {
  const build = async () => String(await consolePage(v)).length;
  let bytes = await build();
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    bytes = await build();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { ms: samples[Math.floor(samples.length / 2)]!, bytes };
}

export async function reportPolicyConsole(): Promise<void> {
  const { consolePage } = (await import(PAGE_MODULE)) as PageModule;
  const active = largePolicy(TARGET_LINES);
  const cases: [string, string][] = [
    ['previous version: every 400th guest changed', scatteredEdit(active, 400)],
    ['previous version: entirely different rules', largePolicy(TARGET_LINES, 1)],
    ['previous version: the same rules in reverse order', reorderedRules(active)],
  ];
  for (const text of [active, ...cases.map(([, t]) => t)]) {
    const checked = checkPolicyText(text, TOOL_CATALOG);
    if (!checked.ok) throw new Error(`bench policy is invalid: ${formatErrors(checked.errors)}`);
  }
  const kib = (t: string) => (new TextEncoder().encode(t).length / 1024).toFixed(0);
  console.log(
    `
/admin/policy built in-process, median of ${SAMPLES}: an active version of ${countLines(active).toLocaleString('en-US')} lines (${kib(active)} KiB) against`,
  );
  console.log(`${'case'.padEnd(60)} ${'p50 ms'.padStart(9)} ${'page KiB'.padStart(9)}`);
  for (const [name, previous] of cases) {
    const { ms, bytes } = await medianMs(
      consolePage,
      consoleViewOf(storedVersion(1, previous, null), storedVersion(2, active, 1)),
    );
    console.log(
      `${name.padEnd(60)} ${ms.toFixed(1).padStart(9)} ${(bytes / 1024).toFixed(0).padStart(9)}`,
    );
  }
}

if (import.meta.filename === process.argv[1]) {
  reportPolicyConsole().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
