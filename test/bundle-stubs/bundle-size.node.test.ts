// The Worker's bundle stays lean: built as `npm run build` and `wrangler deploy` build it (with
// wrangler.toml's minify and [alias]), it gzips to no more than the budget, and the code it never
// runs, which src/bundle-stubs/ stands in for, is not back in it.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_WRANGLER_ENV } from '../../scripts/dev-stack.ts';
import { packageCommand } from '../../scripts/processes.ts';

const root = path.resolve(import.meta.dirname, '../..');
const outdir = mkdtempSync(path.join(os.tmpdir(), 'bundle-size-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

// Gzipped, as wrangler counts it ("Total Upload: … / gzip: …"); the README and docs/performance.md
// give the figure, held to the measure below (411 KiB when [alias] came in, with wrangler 4.86 and
// agents 0.32; 546 KiB minified without [alias], 801 KiB before either). The issue asks for 560;
// 480 left room for features until many clusters and per-person tokens came in (481 KiB; the
// activity charts and a call's trace context, OpenTelemetry's parser and ids, made it 488); 500
// left room again until a call's spans came in (OpenTelemetry's SDK tracer and OTLP JSON encoder,
// 504 KiB); 520 leaves room again, and the checks below name what came back if a left-out package
// returns (MCP client ≈ 60 KiB, ajv ≈ 48, e-mail ≈ 29).
const BUDGET_KIB = 520;

// A string each left-out package has and the bundle must not: error messages and data, which
// minifying keeps. Each is first looked for in the package itself, so that a dependency update
// that drops it fails here instead of making the check pass for nothing.
const LEFT_OUT = [
  {
    what: 'the MCP client SDK',
    pkg: '@modelcontextprotocol/client',
    marker: 'Server returned 401 after re-authentication',
  },
  {
    what: "the MCP client SDK's OAuth client",
    pkg: '@modelcontextprotocol/client',
    marker: 'OAuth client information must be saveable for dynamic registration',
  },
  { what: 'the e-mail library', pkg: 'mimetext', marker: 'MIMETEXT_MISSING_HEADER' },
  {
    what: "the e-mail library's MIME types (mime-db)",
    pkg: 'mimetext',
    marker: 'application/vnd.openxmlformats-officedocument',
  },
  { what: 'ajv', pkg: 'ajv', marker: 'options.loadSchema should be a function' },
];

let bundle = '';
let gzipKiB = 0;

beforeAll(() => {
  const run = spawnSync(
    ...packageCommand('wrangler', [
      'deploy',
      '--dry-run',
      '--outdir',
      outdir,
      '--metafile',
      path.join(outdir, 'meta.json'),
    ]),
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ...OFFLINE_WRANGLER_ENV, FORCE_COLOR: '0' },
    },
  );
  if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${run.stderr}`);
  // The modules wrangler would upload: everything but source maps, the metafile and its README.
  const modules = readdirSync(outdir).filter((f) => !/\.(map|json|md)$/.test(f));
  const contents = modules.map((f) => readFileSync(path.join(outdir, f)));
  bundle = Buffer.concat(contents).toString('utf8');
  gzipKiB = gzipSync(Buffer.concat(contents)).byteLength / 1024;
}, 120_000);

/** The packages contributing most to the bundle (minified KiB), to say what grew. */
function largestPackages(): string {
  const meta = JSON.parse(readFileSync(path.join(outdir, 'meta.json'), 'utf8')) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
  };
  const byPackage = new Map<string, number>();
  for (const output of Object.values(meta.outputs))
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? 'src';
      byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
    }
  return [...byPackage]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([name, bytes]) => `${(bytes / 1024).toFixed(0).padStart(5)} KiB  ${name}`)
    .join('\n');
}

/** Whether any .js/.mjs/.cjs/.json file of the installed package (its own dependencies too) has it. */
function packageHas(pkg: string, marker: string): boolean {
  const search = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return search(full);
      return /\.(m?js|cjs|json)$/.test(entry.name) && readFileSync(full, 'utf8').includes(marker);
    });
  return search(path.join(root, 'node_modules', pkg));
}

describe('the Worker bundle', () => {
  it(`gzips to at most ${BUDGET_KIB} KiB`, () => {
    expect(
      gzipKiB,
      `bundle is ${gzipKiB.toFixed(1)} KiB gzipped. Largest packages (minified):\n${largestPackages()}`,
    ).toBeLessThanOrEqual(BUDGET_KIB);
  });

  it.each([
    ['README.md', /The Worker bundles to ([\d.]+) KiB gzipped/],
    ['docs/performance.md', /to ([\d.]+) KiB minified and gzipped/],
  ])('is as large as %s says, within 2%%', (file, figure) => {
    const stated = figure.exec(readFileSync(path.join(root, file), 'utf8'));
    expect(stated, `${file} gives the gzipped size`).not.toBeNull();
    expect(
      Math.abs(Number(stated![1]) / gzipKiB - 1),
      `${file} says ${stated![1]} KiB; the bundle is ${gzipKiB.toFixed(1)} KiB gzipped`,
    ).toBeLessThanOrEqual(0.02);
  });

  it.each(LEFT_OUT)('leaves out $what', ({ pkg, marker }) => {
    expect(packageHas(pkg, marker), `"${marker}" no longer identifies ${pkg}: pick another`).toBe(
      true,
    );
    expect(
      bundle.includes(marker),
      `${pkg} is bundled again: is its [alias] in wrangler.toml gone, or does a new import reach it?`,
    ).toBe(false);
  });
});
