// Runs `npm start` for a node test: its own process group on a free-ish port, output collected,
// resolved once the server says it is ready, stopped (group and all: wrangler, workerd) on demand.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

export interface NpmStart {
  port: number;
  child: ChildProcess;
  output(): string;
  /** Stops the whole process group and waits for npm to exit; safe to call twice. */
  stop(): Promise<void>;
}

export async function startNpm(env: Record<string, string>, readyMs = 60_000): Promise<NpmStart> {
  const port = 18_000 + Math.floor(Math.random() * 4000);
  // wrangler keeps its own settings under XDG_CONFIG_HOME: a fresh one per run.
  const state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-start-'));
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), SIM_PORT: '0', XDG_CONFIG_HOME: state, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await exited;
    }
    // npm may exit before the script it ran has finished cleaning up (it gets the signal too):
    // wait for the whole group to be gone, then force what is left.
    await groupGone(child.pid!, 10_000);
    rmSync(state, { recursive: true, force: true });
  };
  const deadline = Date.now() + readyMs;
  while (!output.includes('MCP server ready')) {
    if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not become ready: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { port, child, output: () => output, stop };
}

async function groupGone(pgid: number, ms: number): Promise<void> {
  const alive = (): boolean => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + ms;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive()) process.kill(-pgid, 'SIGKILL');
}
