// `npm run deploy:check [-- file.toml ...]`: `wrangler deploy --dry-run` on every deploy
// configuration (deploy/*.toml by default, or the files given) and on the repository's
// wrangler.toml, without a Cloudflare account. Fails (exit 1) on any wrangler warning or error, on
// a binding written in a file that wrangler does not bind, on a binding or migration that
// wrangler.toml has and a file lacks, on build settings (minify, [alias]) that differ from
// wrangler.toml's (scripts/deploy-check/rules.ts), and on a `<...>` placeholder or an example host
// left in a configuration to deploy; a shipped template under deploy/ holds them only where the
// deploy guide says to fill in, and its "ok" says how many are left
// (scripts/deploy-check/placeholders.ts).

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { experimental_readRawConfig } from 'wrangler';
import { OFFLINE_WRANGLER_ENV } from './dev-stack.ts';
import { packageCommand } from './processes.ts';
import {
  checkConfig,
  referenceOf,
  type CheckedConfig,
  type Finding,
} from './deploy-check/rules.ts';
import {
  placeholderFindings,
  placeholdersIn,
  SHIPPED_TEMPLATES,
} from './deploy-check/placeholders.ts';
import { parseDryRun } from './deploy-check/wrangler-output.ts';

const root = path.resolve(import.meta.dirname, '..');
const REFERENCE = path.join(root, 'wrangler.toml');
const CONCURRENCY = 2;

function dryRun(file: string): Promise<{ exitCode: number | null; output: string }> {
  const outdir = mkdtempSync(path.join(os.tmpdir(), 'deploy-check-'));
  const args = ['deploy', '--dry-run', '--outdir', outdir, '--config', file];
  const [node, command] = packageCommand('wrangler', args);
  const child = spawn(node, command, {
    cwd: root,
    env: { ...process.env, ...OFFLINE_WRANGLER_ENV, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => {
    child.on('close', (exitCode) => {
      rmSync(outdir, { recursive: true, force: true });
      resolve({ exitCode, output });
    });
  });
}

async function inspect(file: string): Promise<CheckedConfig | Finding> {
  let raw: Record<string, unknown>;
  try {
    raw = experimental_readRawConfig({ config: file }).rawConfig as Record<string, unknown>;
  } catch (err) {
    return {
      problem: `cannot be read: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      fix: 'Fix the TOML syntax.',
    };
  }
  const { exitCode, output } = await dryRun(file);
  return { raw, dir: path.dirname(file), exitCode, report: parseDryRun(output) };
}

async function mapLimited<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const given = process.argv.slice(2).map((f) => path.resolve(f));
const deployDir = path.join(root, 'deploy');
const files = given.length
  ? given
  : readdirSync(deployDir)
      .filter((f) => f.endsWith('.toml'))
      .sort()
      .map((f) => path.join(deployDir, f));

const [reference, ...checked] = await mapLimited([REFERENCE, ...files], CONCURRENCY, inspect);
const referenceConfig = reference && 'raw' in reference ? reference : null;
let failed = 0;
const report = (file: string, result: CheckedConfig | Finding, isReference: boolean): void => {
  // A shipped template is checked as one; any other file (a copy of one) as ready to deploy.
  const template = path.dirname(file) === deployDir && SHIPPED_TEMPLATES.has(path.basename(file));
  const text = 'raw' in result ? readFileSync(file, 'utf8') : '';
  const findings =
    'raw' in result
      ? [
          ...checkConfig(
            result,
            isReference || !referenceConfig ? null : referenceOf(referenceConfig),
          ),
          ...placeholderFindings(text, template),
        ]
      : [result];
  const name = path.relative(process.cwd(), file) || file;
  if (findings.length === 0) {
    const bound =
      'raw' in result
        ? [...result.report.bindings]
            .filter(([, t]) => t !== 'Environment Variable')
            .map(([n]) => n)
        : [];
    const left = template ? placeholdersIn(text).length : 0;
    const note = template ? `; a template: a copy needs ${left} values filled in to deploy` : '';
    console.log(`ok    ${name} (bindings: ${bound.join(', ')}${note})`);
    return;
  }
  failed++;
  console.log(`FAIL  ${name}`);
  for (const f of findings) console.log(`  - ${f.problem}\n    fix: ${f.fix}`);
};
report(REFERENCE, reference!, true);
for (const [i, result] of checked.entries()) report(files[i]!, result, false);
console.log(
  failed
    ? `deploy:check: ${failed} of ${checked.length + 1} configurations have problems.`
    : `deploy:check: ${checked.length + 1} configurations ok.`,
);
process.exit(failed ? 1 : 0);
