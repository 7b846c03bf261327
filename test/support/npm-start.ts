// Runs `npm start` for a node test the way a second server beside a developer's own must run:
// free ports picked by the server itself (PORT=0, SIM_PORT=0: bound first, tried again on a
// clash; the real port read back from its ready line), its own state directory (PERSIST_TO) and
// wrangler settings (XDG_CONFIG_HOME) in a fresh temporary directory removed when it stops, so
// the checkout's .wrangler/state never sees a test's grants or calls. Its own process group (its
// tree on Windows), output collected, resolved once ready, stopped (wrangler, workerd and all) on
// demand.

import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OWN_GROUP, spawnNpm, stopTree, treeGone } from '../../scripts/processes.ts';

const root = path.resolve(import.meta.dirname, '../..');

export interface NpmStart {
  port: number;
  /** http://localhost:<port> */
  url: string;
  /** Its Durable Objects and KV (wrangler dev --persist-to); removed by stop(). */
  stateDir: string;
  child: ChildProcess;
  output(): string;
  /** Stops the whole process group and waits for npm to exit; safe to call twice. */
  stop(): Promise<void>;
}

export async function startNpm(env: Record<string, string>, readyMs = 60_000): Promise<NpmStart> {
  const temp = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-start-'));
  const stateDir = path.join(temp, 'state');
  const configDir = path.join(temp, 'config');
  mkdirSync(configDir);
  const child = spawnNpm(['start'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      SIM_PORT: '0',
      PERSIST_TO: stateDir,
      // wrangler keeps its own settings and logs under XDG_CONFIG_HOME: a fresh one per server.
      XDG_CONFIG_HOME: configDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...OWN_GROUP,
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      stopTree(child);
      await exited;
    }
    // npm may exit before the script it ran has finished cleaning up (it gets the signal too):
    // wait for the whole tree to be gone, then force what is left.
    await treeGone(child);
    rmSync(temp, { recursive: true, force: true });
  };
  const deadline = Date.now() + readyMs;
  let port: number | undefined;
  while (port === undefined) {
    port = readyPort(output);
    if (port !== undefined) break;
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`npm start exited: ${output}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`npm start did not become ready: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { port, url: `http://localhost:${port}`, stateDir, child, output: () => output, stop };
}

/** The port from the ready message ("MCP server ready ...  streamable HTTP  <url>/mcp"). */
function readyPort(output: string): number | undefined {
  const ready = output.indexOf('MCP server ready');
  if (ready < 0) return undefined;
  const url = /streamable HTTP\s+http:\/\/localhost:(\d+)\/mcp/.exec(output.slice(ready));
  return url ? Number(url[1]) : undefined;
}
