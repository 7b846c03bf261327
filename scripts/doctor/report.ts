// The doctor's results: one line per check — PASS, FAIL (with what to do), SKIP (could not be
// checked without more access) or N/A (does not apply to this server) — and the exit code:
// 0 only when every check holds, 1 when one fails, 2 when none fails but some were skipped.

export type Outcome = 'PASS' | 'FAIL' | 'SKIP' | 'N/A';

export interface CheckResult {
  name: string;
  outcome: Outcome;
  detail: string;
  fix?: string;
  /** Facts shown under the result, one a line (what each Proxmox token holds). */
  lines?: string[];
}

export const pass = (name: string, detail: string): CheckResult => ({
  name,
  outcome: 'PASS',
  detail,
});
export const fail = (name: string, detail: string, fix: string): CheckResult => ({
  name,
  outcome: 'FAIL',
  detail,
  fix,
});
export const skip = (name: string, detail: string, fix: string): CheckResult => ({
  name,
  outcome: 'SKIP',
  detail,
  fix,
});
export const notApplicable = (name: string, detail: string): CheckResult => ({
  name,
  outcome: 'N/A',
  detail,
});

const NAME_WIDTH = 22;

/**
 * One line, whatever the texts hold (a policy error list has newlines), then its `lines`, each on
 * a line of its own under the detail.
 */
export function formatResult(r: CheckResult): string {
  const flat = (text: string): string =>
    text.replace(/:\s*\n\s*/g, ': ').replace(/\s*\n\s*/g, '; ');
  const fix = r.fix && r.outcome !== 'PASS' ? ` Fix: ${flat(r.fix)}` : '';
  const under = ' '.repeat(6 + NAME_WIDTH + 1);
  const more = (r.lines ?? []).map((line) => `\n${under}${flat(line)}`).join('');
  return `${r.outcome.padEnd(4)}  ${r.name.padEnd(NAME_WIDTH)} ${flat(r.detail)}${fix}${more}`;
}

export function summary(results: readonly CheckResult[]): { line: string; exitCode: number } {
  const count = (o: Outcome): number => results.filter((r) => r.outcome === o).length;
  const [passed, failed, skipped] = [count('PASS'), count('FAIL'), count('SKIP')];
  const line = `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
  return { line, exitCode: failed ? 1 : skipped ? 2 : 0 };
}
