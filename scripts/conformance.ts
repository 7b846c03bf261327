// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance,
// every server scenario) against a server of its own (the simulator and `wrangler dev`, with
// AUTH_MODE=none: the suite cannot sign in; free ports, a fresh state directory), at 2026-07-28
// and 2025-11-25, each compared with its reviewed baseline (conformance/baseline-*.yml: the
// failures expected, each with its reason). Prints the suite's own report; exits 1 when either
// run differs from its baseline (a new failure, or a listed one that now passes). The suite needs
// Node 22, which npm scripts run on every machine (README, "Which Node"): it runs under this
// process's own Node. test/mcp/conformance.node.test.ts runs the
// same, keeping each run's report (CONFORMANCE_OUT=<dir>: one folder per version, left there).
// `-- 2026-07-28` (or `2025-11-25`) runs one version only.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStack } from './dev-stack.ts';

const root = path.resolve(import.meta.dirname, '..');
const SUITE = path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const VERSIONS = ['2026-07-28', '2025-11-25'];

const asked = process.argv.slice(2);
const unknown = asked.filter((v) => !VERSIONS.includes(v));
if (unknown.length) {
  console.error(
    `npm run conformance: unknown version ${unknown.join(', ')} (one of ${VERSIONS.join(', ')})`,
  );
  process.exit(2);
}
const versions = asked.length ? asked : VERSIONS;

const state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-conformance-'));
const out = process.env.CONFORMANCE_OUT ? path.resolve(process.env.CONFORMANCE_OUT) : state;
const stack = await startStack({
  port: 0,
  inspectorPort: 0,
  simPort: 0,
  vars: { AUTH_MODE: 'none' },
  stdio: 'ignore',
  persistTo: path.join(state, 'wrangler'),
});
const results: string[] = [];
try {
  for (const version of versions) {
    console.log(`\nMCP conformance at ${version} against ${stack.url}/mcp\n`);
    const run = spawnSync(
      process.execPath,
      [
        SUITE,
        'server',
        '--url',
        `${stack.url}/mcp`,
        '--suite',
        'all',
        '--spec-version',
        version,
        '--expected-failures',
        path.join(root, `conformance/baseline-${version}.yml`),
        '-o',
        path.join(out, version),
      ],
      { stdio: 'inherit', timeout: 300_000 },
    );
    results.push(
      `${version}: ${run.status === 0 ? 'matches its baseline' : `differs from its baseline (exit ${run.status ?? run.signal})`}`,
    );
  }
} finally {
  await stack.stop();
  rmSync(state, { recursive: true, force: true });
}
console.log(`\n${results.join('\n')}`);
process.exit(results.every((r) => r.endsWith('matches its baseline')) ? 0 : 1);
