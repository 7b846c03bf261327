// `npm run deploy:check`: every example under deploy/ passes wrangler's dry run cleanly, and the
// mistake the README once invited — a top-level key appended after the last [table] — fails,
// naming the key, the table it fell into and the fix; so does a configuration that bundles the
// Worker otherwise than wrangler.toml (minify, [alias]). The parsing of wrangler's output is
// checked on its own with wrangler's real wording (4.86's, which 4.164 keeps).

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnNpmSync } from '../../scripts/processes.ts';
import { checkConfig, referenceOf, type CheckedConfig } from '../../scripts/deploy-check/rules.ts';
import { parseDryRun } from '../../scripts/deploy-check/wrangler-output.ts';

const root = path.resolve(import.meta.dirname, '../..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'deploy-check-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ESC = '\u001b';
const MISPLACED_OUTPUT = [
  `${ESC}[33m▲ ${ESC}[43;33m[${ESC}[43;30mWARNING${ESC}[43;33m]${ESC}[0m ${ESC}[1mProcessing bad.toml configuration:${ESC}[0m`,
  '',
  '    - Unexpected fields found in observability field: "vpc_services"',
  '',
  'Total Upload: 3685.83 KiB / gzip: 723.46 KiB',
  'Your Worker has access to the following bindings:',
  'Binding                                          Resource          ',
  'env.MCP_OBJECT (ProxmoxMcp)                      Durable Object    ',
  'env.OAUTH_KV (<id from wrangler kv namespace>)   KV Namespace      ',
  'env.AUTH_MODE ("oauth")                          Environment Variable',
  '',
  '--dry-run: exiting now.',
].join('\n');

function deployCheck(...files: string[]): { status: number | null; output: string } {
  const run = spawnNpmSync(['run', '-s', 'deploy:check', '--', ...files], {
    cwd: root,
    env: { ...process.env, XDG_CONFIG_HOME: tmp },
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('wrangler dry-run output', () => {
  it('yields the warnings (without colours) and the bindings with their types', () => {
    const report = parseDryRun(MISPLACED_OUTPUT);
    expect(report.warnings).toEqual([
      'Processing bad.toml configuration:\n- Unexpected fields found in observability field: "vpc_services"',
    ]);
    expect(report.errors).toEqual([]);
    expect([...report.bindings]).toEqual([
      ['MCP_OBJECT', 'Durable Object'],
      ['OAUTH_KV', 'KV Namespace'],
      ['AUTH_MODE', 'Environment Variable'],
    ]);
  });

  it('turns a key that fell into a table, and the binding it hides, into findings with a fix', () => {
    const config: CheckedConfig = {
      raw: {
        observability: { enabled: true, vpc_services: [{ binding: 'PVE', service_id: 'x' }] },
      },
      dir: root,
      exitCode: 0,
      report: parseDryRun(MISPLACED_OUTPUT),
    };
    const findings = checkConfig(config, null);
    expect(findings.map((f) => f.problem)).toEqual([
      'wrangler reads "vpc_services" as part of [observability] and ignores it there',
      'binding PVE is written at observability.vpc_services[0] but wrangler does not bind it, so env.PVE would be missing',
    ]);
    expect(findings[0]!.fix).toMatch(/move "vpc_services" above the first \[table\] header/);
  });

  it('reports a binding or migration the repository needs and a file lacks', () => {
    const reference = {
      bindings: new Map([['AUDIT', 'Durable Object']]),
      migrations: [{ tag: 'v1', body: 'new_sqlite_classes=["AuditLog"]' }],
      build: { minify: false, alias: new Map<string, string>() },
    };
    const findings = checkConfig(
      {
        raw: { vars: { IDP: 'dev', PVE_TOKEN_SECRET: 'x' } },
        dir: root,
        exitCode: 0,
        report: parseDryRun(''),
      },
      reference,
    );
    expect(findings.map((f) => f.problem)).toEqual([
      'binding AUDIT (Durable Object) is missing; the Worker needs it',
      'migration v1 (new_sqlite_classes=["AuditLog"]) is missing',
      'IDP = "dev" serves loopback requests only',
      'PVE_TOKEN_SECRET is in [vars], in plain text',
    ]);
  });

  it('reports a configuration that bundles the Worker otherwise than wrangler.toml: minify, [alias] entries missing, elsewhere or extra', () => {
    const reference = referenceOf({
      raw: {
        minify: true,
        alias: { ajv: './src/bundle-stubs/ajv.ts', mimetext: './src/bundle-stubs/mimetext.ts' },
      },
      dir: root,
      exitCode: 0,
      report: parseDryRun(''),
    });
    const config = (raw: Record<string, unknown>): CheckedConfig => ({
      raw,
      dir: path.join(root, 'deploy'),
      exitCode: 0,
      report: parseDryRun(''),
    });
    // The same files, written relative to deploy/: nothing to report.
    const same = config({
      minify: true,
      alias: { ajv: '../src/bundle-stubs/ajv.ts', mimetext: '../src/bundle-stubs/mimetext.ts' },
    });
    expect(checkConfig(same, reference)).toEqual([]);
    const findings = checkConfig(
      config({
        alias: { ajv: './src/bundle-stubs/ajv.ts', 'cron-schedule': '../stubs/cron.ts' },
      }),
      reference,
    );
    expect(findings.map((f) => f.problem)).toEqual([
      'minify is false; wrangler.toml has minify = true',
      'alias "ajv" points to ./src/bundle-stubs/ajv.ts; wrangler.toml points it to ../src/bundle-stubs/ajv.ts',
      'alias "mimetext" is missing, so the Worker would bundle mimetext, which it never runs',
      'alias "cron-schedule" (to ../stubs/cron.ts) is not in wrangler.toml, so the Worker deployed would not be the one tested',
    ]);
    expect(findings[2]!.fix).toContain('"mimetext" = "../src/bundle-stubs/mimetext.ts"');
  });
});

describe('npm run deploy:check', () => {
  // Running it over every configuration is CI's own deploy:check step (.ci/run), not a test here:
  // five wrangler dry runs would cost the suite a minute and prove nothing more. What the step
  // covers is pinned here: every example under deploy/, and the order of its report.
  it('covers wrangler.toml and every example configuration', () => {
    const examples = readdirSync(path.join(root, 'deploy')).filter((f) => f.endsWith('.toml'));
    expect(examples.sort()).toEqual([
      'access-hostname.toml',
      'github.toml',
      'oidc.toml',
      'workers-vpc.toml',
    ]);
    expect(readFileSync(path.join(root, '.ci/run'), 'utf8')).toMatch(
      /^npm run deploy:check \|\| status=1$/m,
    );
  });

  it('fails on a configuration with a top-level key placed after a table, saying where it went and how to fix it', () => {
    // What the README once said to do: append the vpc_services line at the end of the file.
    const line = 'vpc_services = [{ binding = "PVE", service_id = "<VPC service id>" }]\n';
    const example = readFileSync(path.join(root, 'deploy/workers-vpc.toml'), 'utf8');
    expect(example).toContain(line);
    const bad = path.join(tmp, 'appended.toml');
    // Copied elsewhere, its paths (main, [alias]) must point back into the repository.
    const moved = example.replace(line, '').replaceAll('"../src/', `"${path.join(root, 'src')}/`);
    writeFileSync(bad, `${moved}\n${line}`);
    const { status, output } = deployCheck(bad);
    expect(status).toBe(1);
    expect(output).toContain('FAIL');
    expect(output).toContain(
      'wrangler reads "vpc_services" as part of [observability] and ignores it there',
    );
    expect(output).toContain('move "vpc_services" above the first [table] header');
    expect(output).toContain(
      'binding PVE is written at observability.vpc_services[0] but wrangler does not bind it',
    );
    expect(output).toContain('deploy:check: 1 of 2 configurations have problems.');
  }, 120_000);
});
