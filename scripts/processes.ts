// Child processes started and stopped the same way on macOS, Linux and Windows, in one place:
// npm through cross-spawn (on Windows npm is npm.cmd, which Node will not start without a shell),
// a package's own command as its JS entry under this Node (no .bin/ shim, no shell), and a child
// stopped together with everything it started: its process group on macOS and Linux, its process
// tree (taskkill /T) on Windows, where process groups do not exist. test/layers.node.test.ts
// keeps every script and test to these.

import {
  type ChildProcess,
  type SpawnOptions,
  type SpawnSyncOptions,
  type SpawnSyncReturns,
  spawnSync,
} from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import crossSpawn from 'cross-spawn';
import open from 'open';

export const IS_WINDOWS = process.platform === 'win32';

const root = path.resolve(import.meta.dirname, '..');
const requireHere = createRequire(path.join(root, 'package.json'));

/**
 * Options for a child that is stopped with everything it starts (`stopTree`): its own process
 * group where there are groups; on Windows no new console window.
 */
export const OWN_GROUP = { detached: !IS_WINDOWS, windowsHide: true } as const;

/** `npm <args>` as a child process. */
export function spawnNpm(args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return crossSpawn('npm', [...args], options);
}

/** `npm <args>`, waited for; its output as text. */
export function spawnNpmSync(
  args: readonly string[],
  options: Omit<SpawnSyncOptions, 'encoding'> = {},
): SpawnSyncReturns<string> {
  return crossSpawn.sync('npm', [...args], {
    ...options,
    encoding: 'utf8',
  }) as SpawnSyncReturns<string>;
}

/**
 * A package's command (its package.json `bin`) as this Node running the command's JS file:
 * `[process.execPath, [file, ...args]]`, the same on every OS.
 */
export function packageCommand(
  pkg: string,
  args: readonly string[],
  bin: string = pkg.replace(/^@[^/]+\//, ''),
): [string, string[]] {
  const manifest = requireHere.resolve(`${pkg}/package.json`);
  const { bin: bins } = JSON.parse(readFileSync(manifest, 'utf8')) as {
    bin?: string | Record<string, string>;
  };
  const entry = typeof bins === 'string' ? bins : bins?.[bin];
  if (!entry) throw new Error(`${pkg} has no command named ${bin}`);
  return [process.execPath, [path.join(path.dirname(manifest), entry), ...args]];
}

/**
 * Stops `child` and everything it started: a signal to its process group on macOS and Linux (the
 * child must have been started with OWN_GROUP), SIGTERM or with `force` SIGKILL; on Windows
 * `taskkill /T /F` on its tree while the child runs (Windows has no signal a console program
 * could catch from another, and taskkill finds the tree through the child; once the child has
 * exited its pid may belong to someone else). Does nothing once it is gone.
 */
export function stopTree(child: ChildProcess, force = false): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (IS_WINDOWS) {
    if (!running(child)) return;
    spawnSync('taskkill', ['/pid', String(pid), '/T', '/F'], {
      stdio: 'ignore',
      windowsHide: true,
    });
    return;
  }
  try {
    process.kill(-pid, force ? 'SIGKILL' : 'SIGTERM');
  } catch {
    // already gone
  }
}

const running = (child: ChildProcess): boolean =>
  child.exitCode === null && child.signalCode === null;

/**
 * Whether anything of the tree `child` started is still running: its process group on macOS and
 * Linux; on Windows the child itself (taskkill /T /F has ended the tree with it, synchronously).
 */
function treeAlive(child: ChildProcess): boolean {
  const pid = child.pid;
  if (pid === undefined) return false;
  if (IS_WINDOWS) return running(child);
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops `child` and its tree (`stopTree`) and waits until all of it is gone, so that the ports
 * it held are free when this returns.
 */
export async function endTree(child: ChildProcess, graceMs = 10_000): Promise<void> {
  stopTree(child);
  await treeGone(child, graceMs);
}

/** Waits until nothing of `child`'s tree runs; what is left after `graceMs` is killed. */
export async function treeGone(child: ChildProcess, graceMs = 10_000): Promise<void> {
  const deadline = Date.now() + graceMs;
  while (treeAlive(child) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (treeAlive(child)) stopTree(child, true);
}

/**
 * Opens `url` in the person's default browser (the `open` package: `open` on macOS, `start` on
 * Windows, xdg-open or WSL's on Linux). False when the launcher could not be started; true says
 * only that it started (on Linux, open's own xdg-open starts even where no browser is), so the
 * caller prints the URL too, for the person to open themselves.
 */
export async function openInBrowser(url: string): Promise<boolean> {
  try {
    // Resolves once the launcher has started, rejects when it could not be.
    const launcher = await open(url);
    launcher.on('error', () => {});
    return true;
  } catch {
    return false;
  }
}
