// `npm run deploy:check`: every example under deploy/ passes wrangler's dry run cleanly, and the
// mistake the README once invited — a top-level key appended after the last [table] — fails,
// naming the key, the table it fell into and the fix; so does a configuration that bundles the
// Worker otherwise than wrangler.toml (minify, [alias]), and a copy of a template with a `<...>`
// or an example host left in. The parsing of wrangler's output is checked on its own with
// wrangler's real wording (4.86's, which 4.164 keeps).

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnNpmSync } from '../../scripts/processes.ts';
import { checkConfig, referenceOf, type CheckedConfig } from '../../scripts/deploy-check/rules.ts';
import {
  placeholderFindings,
  placeholdersIn,
  SHIPPED_TEMPLATES,
} from '../../scripts/deploy-check/placeholders.ts';
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

const KV_ID = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';

/** A template as a person fills it in: every <...> and example host replaced by their own. */
function filledIn(template: string): string {
  return template
    .replace(/<[^<>"'\n]+>/g, KV_ID)
    .replace(/\b([a-z0-9-]+)\.example\.com\b/g, '$1.acme-ops.net');
}

/** A shipped template, copied out of the repository: its paths point back into it. */
function copied(name: string, text: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, text.replaceAll('"../src/', `"${path.join(root, 'src')}/`));
  return file;
}

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
        raw: {
          vars: {
            IDP: 'dev',
            PVE_TOKEN_SECRET: 'x',
            OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer k',
            OTEL_TRACES_SAMPLER_ARG: '0.05',
          },
        },
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
      'OTEL_EXPORTER_OTLP_HEADERS is in [vars], in plain text',
    ]);
  });

  it('lets a configuration leave out the Analytics Engine dataset, which the Worker runs without', () => {
    const reference = {
      bindings: new Map([
        ['AUDIT', 'Durable Object'],
        ['CALL_METRICS', 'Analytics Engine Dataset'],
      ]),
      migrations: [],
      build: { minify: false, alias: new Map<string, string>() },
    };
    const without = (report: string) =>
      checkConfig({ raw: {}, dir: root, exitCode: 0, report: parseDryRun(report) }, reference).map(
        (f) => f.problem,
      );
    // Nothing bound: AUDIT is missing, CALL_METRICS may be.
    expect(without('')).toEqual(['binding AUDIT (Durable Object) is missing; the Worker needs it']);
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

describe('values left to fill in', () => {
  const template = (name: string): string => readFileSync(path.join(root, 'deploy', name), 'utf8');

  it.each([...SHIPPED_TEMPLATES])(
    '%s holds placeholders only in the keys the guide says to fill in',
    (name) => {
      expect(placeholderFindings(template(name), true)).toEqual([]);
      expect(placeholdersIn(template(name)).map((p) => p.key)).toEqual(
        expect.arrayContaining(['routes', 'vars.PUBLIC_URL', 'kv_namespaces.id']),
      );
    },
  );

  it('passes a filled-in copy, and names each key and line left unfilled in one', () => {
    const text = template('access-hostname.toml');
    const filled = filledIn(text);
    expect(placeholderFindings(filled, false)).toEqual([]);
    const kvLine = text.split('\n').indexOf('id = "<OAUTH_KV namespace id>"') + 1;
    const oneLeft = filled.replace(`\nid = "${KV_ID}"`, '\nid = "<OAUTH_KV namespace id>"');
    expect(placeholderFindings(oneLeft, false)).toEqual([
      {
        problem: `line ${kvLine}: kv_namespaces.id still holds the placeholder <OAUTH_KV namespace id>`,
        fix: expect.stringMatching(/^Fill in your own value \(docs\/deploy\.md/),
      },
    ]);
    // The copy as it comes: every value the guide names, in file order.
    expect(
      placeholderFindings(text, false).map((f) =>
        /^line \d+: (\S+) still holds (.*)$/.exec(f.problem)!.slice(1).join(' '),
      ),
    ).toEqual([
      'routes the example host mcp.example.com',
      'vars.PUBLIC_URL the example host mcp.example.com',
      'vars.PVE_BASE_URL the example host pve-api.example.com',
      'vars.CF_ACCESS_CLIENT_ID the placeholder <service token client id>',
      'vars.OIDC_ISSUER the placeholder <team>',
      'vars.OIDC_ISSUER the placeholder <client id>',
      'vars.OIDC_CLIENT_ID the placeholder <client id>',
      'kv_namespaces.id the placeholder <OAUTH_KV namespace id>',
    ]);
  });

  it('reads a value written over several lines under its key: a multi-line string, an array', () => {
    const text = template('two-clusters.toml');
    const keys = placeholdersIn(text).map((p) => `${p.key} ${p.text}`);
    expect(keys).toEqual(
      expect.arrayContaining([
        'vpc_services <lab VPC service id>',
        'vpc_services <prod VPC service id>',
        'vars.PVE_CLUSTERS pve-lab.example.com',
        'vars.PVE_CLUSTERS pve-prod.example.com',
      ]),
    );
    // After the value closes, keys are read as before; a # inside the string is no comment.
    const lines = ['[vars]', "A = '''x # <kept>", "y <kept too>'''", 'B = "<b>" # <not>'];
    expect(placeholdersIn(lines.join('\n')).map((p) => `${p.line} ${p.key} ${p.text}`)).toEqual([
      '2 vars.A <kept>',
      '3 vars.A <kept too>',
      '4 vars.B <b>',
    ]);
  });

  it('reads keys as wrangler does (tables, quoted keys), and skips comments but not a # in a string', () => {
    const text = [
      '# Replace <this> in mcp.example.com',
      '"name" = "x" # <not this>',
      '[vars]',
      'PUBLIC_URL = "https://mcp.example.org/#<frag>"',
      '[[d1_databases]]',
      'database_id = "<id>"',
    ].join('\n');
    expect(placeholdersIn(text).map((p) => `${p.line} ${p.key} ${p.text}`)).toEqual([
      '4 vars.PUBLIC_URL mcp.example.org',
      '4 vars.PUBLIC_URL <frag>',
      '6 d1_databases.database_id <id>',
    ]);
    // In a template, a placeholder where the guide says nothing is a finding too.
    expect(placeholderFindings(text, true).map((f) => f.problem)).toEqual([
      'line 6: d1_databases.database_id holds <id>, which the deploy guide does not say to fill in',
    ]);
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
      'two-clusters.toml',
      'workers-vpc.toml',
    ]);
    expect(readFileSync(path.join(root, '.ci/run'), 'utf8')).toMatch(
      /^npm run deploy:check \|\| status=1$/m,
    );
  });

  it('fails a copied template with one value left to fill in, naming it, and passes it filled in', () => {
    const filled = filledIn(readFileSync(path.join(root, 'deploy/access-hostname.toml'), 'utf8'));
    // With the account named, as the guide says for more than one account.
    expect(filled).toContain(`# account_id = "${KV_ID}"\n`);
    const ready = copied('production.toml', filled.replace('# account_id', 'account_id'));
    const left = copied(
      'half-done.toml',
      filled.replace('https://pve-api.acme-ops.net', 'https://pve-api.example.com'),
    );
    const { status, output } = deployCheck(ready, left);
    expect(status, output).toBe(1);
    expect(output).toMatch(/^ok {4}\S*production\.toml \(bindings: /m);
    expect(output).toMatch(/^FAIL {2}\S*half-done\.toml$/m);
    expect(output).toMatch(
      /- line \d+: vars\.PVE_BASE_URL still holds the example host pve-api\.example\.com\n {4}fix: Use your own hostname/,
    );
    expect(output).toContain('deploy:check: 1 of 3 configurations have problems.');
  }, 120_000);

  it('passes the two-cluster template filled in, and fails a cluster naming a binding it does not declare', () => {
    const filled = filledIn(readFileSync(path.join(root, 'deploy/two-clusters.toml'), 'utf8'));
    const ready = copied('clusters.toml', filled);
    const undeclared = copied(
      'undeclared.toml',
      filled.replace('"vpc_service": "PVE_PROD"', '"vpc_service": "PVE_STAGING"'),
    );
    const beside = copied(
      'beside.toml',
      filled
        .replace('AUTH_MODE = "oauth"', 'AUTH_MODE = "oauth"\nPVE_TOKEN_ID = "mcp@pve!mcp"')
        // The single cluster's binding, which no cluster names.
        .replace(
          '  { binding = "PVE_PROD"',
          `  { binding = "PVE", service_id = "${KV_ID}" },\n  { binding = "PVE_PROD"`,
        ),
    );
    const { status, output } = deployCheck(ready, undeclared, beside);
    expect(status, output).toBe(1);
    expect(output).toMatch(
      /^ok {4}\S*clusters\.toml \(bindings: .*PVE_LAB, PVE_PROD, CALL_METRICS\)$/m,
    );
    expect(output).toMatch(/^FAIL {2}\S*undeclared\.toml$/m);
    expect(output).toContain(
      '- vars.PVE_CLUSTERS[1] ("prod") names the VPC service binding "PVE_STAGING", which this file does not declare',
    );
    expect(output).toMatch(/^FAIL {2}\S*beside\.toml$/m);
    expect(output).toContain(
      '- vars.PVE_CLUSTERS is set beside PVE_TOKEN_ID, the PVE binding: the Worker refuses both',
    );
    expect(output).toContain('deploy:check: 2 of 4 configurations have problems.');
  }, 120_000);

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
