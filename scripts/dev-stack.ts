// Starts the local stack: a Proxmox simulator (unless a real PVE_BASE_URL is given) and
// `wrangler dev` pointed at it. Used by `npm start` and `npm run bench`.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SIMULATOR_TOKENS, startSimulator, type SimulatorOptions } from '../simulator/server.ts';

const root = path.resolve(import.meta.dirname, '..');

/** Offline hygiene for every wrangler call: no metrics, no error reports, no network lookups. */
export const OFFLINE_WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
};

export interface StackOptions {
  port: number;
  /** Simulator port; 0 picks a free one. Ignored when `pve` is given. */
  simPort: number;
  simulator?: SimulatorOptions;
  /** Settings of a real Proxmox to use instead of the simulator. */
  pve?: Record<string, string>;
  vars?: Record<string, string>;
  /** Where wrangler's output goes. */
  stdio: 'inherit' | 'ignore';
  /** Separate persisted state (Durable Objects, KV), e.g. for a benchmark. */
  persistTo?: string;
  inspectorPort?: number;
  /** Another checkout to run the Worker from (e.g. a baseline for the benchmark); default this one. */
  root?: string;
  /** Another wrangler configuration (e.g. the benchmark's bare Worker); default wrangler.toml. */
  config?: string;
  /** A Proxmox simulator already running (several stacks sharing one); default: start one. */
  simulatorUrl?: string;
}

export interface Stack {
  url: string;
  simulatorUrl: string | null;
  vars: Record<string, string>;
  wrangler: ChildProcess;
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const vars: Record<string, string> = { ...options.vars };
  let closeSimulator = async (): Promise<void> => {};
  let simulatorUrl: string | null = null;
  if (options.pve) {
    Object.assign(vars, options.pve);
  } else if (options.simulatorUrl) {
    simulatorUrl = options.simulatorUrl;
    vars.PVE_BASE_URL = `${options.simulatorUrl}/api2/json`;
    vars.PVE_TOKEN_ID = SIMULATOR_TOKENS.admin.id;
    vars.PVE_TOKEN_SECRET = SIMULATOR_TOKENS.admin.secret;
  } else {
    const sim = await startSimulator({ ...options.simulator, port: options.simPort });
    closeSimulator = sim.close;
    simulatorUrl = sim.url;
    vars.PVE_BASE_URL = `${sim.url}/api2/json`;
    vars.PVE_TOKEN_ID = SIMULATOR_TOKENS.admin.id;
    vars.PVE_TOKEN_SECRET = SIMULATOR_TOKENS.admin.secret;
  }

  const args = [
    'dev',
    '--port',
    String(options.port),
    '--ip',
    '127.0.0.1',
    '--show-interactive-dev-session=false',
  ];
  // Several stacks (the benchmark) must not fight over the default devtools port.
  if (options.inspectorPort !== undefined)
    args.push('--inspector-port', String(options.inspectorPort));
  if (options.persistTo) args.push('--persist-to', options.persistTo);
  if (options.config) args.push('--config', options.config);
  // Secrets never go on the command line (any local user reads it with `ps`): they go into a
  // file only we can read, removed when the stack stops.
  const secrets = writeSecretsFile(vars);
  if (secrets) args.push('--env-file', secrets.file);
  for (const [name, value] of Object.entries(vars))
    if (!SECRET_VARS.has(name)) args.push('--var', `${name}:${value}`);
  const workerRoot = options.root ?? root;
  const wrangler = spawn(path.join(root, 'node_modules', '.bin', 'wrangler'), args, {
    cwd: workerRoot,
    // Nor in its environment: wrangler and workerd get them from the file alone.
    env: { ...withoutSecrets(process.env), ...OFFLINE_WRANGLER_ENV },
    stdio: ['ignore', options.stdio, options.stdio],
    // Its own process group, so stopping kills workerd too (killing only wrangler leaves it).
    detached: true,
  });
  const stop = async (): Promise<void> => {
    killGroup(wrangler);
    secrets?.remove();
    await closeSimulator();
  };
  // However this process ends, take wrangler's process group (and workerd) with it.
  process.once('exit', () => {
    killGroup(wrangler);
    secrets?.remove();
  });
  const url = `http://localhost:${options.port}`;
  try {
    await waitForHealth(`${url}/health`, wrangler);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, simulatorUrl, vars, wrangler, stop };
}

/** Variables that are secrets in a deployment (`wrangler secret put`): never passed as --var. */
export const SECRET_VARS = new Set([
  'PVE_TOKEN_SECRET',
  'CF_ACCESS_CLIENT_SECRET',
  'OIDC_CLIENT_SECRET',
  'GITHUB_CLIENT_SECRET',
]);

/**
 * Writes the secrets among `vars` to a .env file in a fresh directory only this user can enter
 * (0700, file 0600), for `wrangler dev --env-file`. Null when there are none.
 */
function writeSecretsFile(vars: Record<string, string>): { file: string; remove(): void } | null {
  const entries = Object.entries(vars).filter(([name]) => SECRET_VARS.has(name));
  if (entries.length === 0) return null;
  const lines = entries.map(([name, value]) => {
    // Single quotes keep a .env value literal; a secret with a quote or a line break cannot be.
    if (/['\r\n]/.test(value))
      throw new Error(
        `${name} contains a quote or a line break, which cannot be passed to wrangler dev safely`,
      );
    return `${name}='${value}'`;
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-secrets-'));
  const file = path.join(dir, 'secrets.env');
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  let removed = false;
  return {
    file,
    remove() {
      if (removed) return;
      removed = true;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !SECRET_VARS.has(name)));
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with code ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the Worker did not become healthy at ${url}`);
}
