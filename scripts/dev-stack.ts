// Starts the local stack: a Proxmox simulator (unless a real PVE_BASE_URL is given, or every
// cluster of PVE_CLUSTERS is real) and `wrangler dev` pointed at it. Used by `npm start`, `npm run
// bench` and the tests that start servers. Port 0 (server or inspector) picks a free port:
// wrangler must be told its ports in advance, so one is bound here first, and a start that still
// finds it taken is tried again.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  type SeedName,
  SIMULATOR_TOKENS,
  type SimulatorOptions,
  startSimulator,
} from '../simulator/server.ts';
import { endTree, OWN_GROUP, packageCommand, stopTree } from './processes.ts';

const root = path.resolve(import.meta.dirname, '..');

/** Offline hygiene for every wrangler call: no metrics, no error reports, no network lookups. */
export const OFFLINE_WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
};

export interface StackOptions {
  /** The Worker's port (on 127.0.0.1); 0 picks a free one. */
  port: number;
  /** Simulator port; 0 picks a free one. Ignored when `pve` is given. */
  simPort: number;
  simulator?: SimulatorOptions;
  /** Settings of a real Proxmox to use instead of the simulator. */
  pve?: Record<string, string>;
  vars?: Record<string, string>;
  /** Where wrangler's output goes. */
  stdio: 'inherit' | 'ignore';
  /** Separate persisted state (Durable Objects, KV); default wrangler's `.wrangler/state`. */
  persistTo?: string;
  /** wrangler's devtools port; 0 picks a free one; default wrangler's (9229 or the next free). */
  inspectorPort?: number;
  /** Another checkout to run the Worker from (e.g. a baseline for the benchmark); default this one. */
  root?: string;
  /** Another wrangler configuration (e.g. the benchmark's bare Worker); default wrangler.toml. */
  config?: string;
  /** A Proxmox simulator already running (several stacks sharing one); default: start one. */
  simulatorUrl?: string;
  /** PVE_CLUSTERS (instead of `pve`): the clusters it lists without an address are simulated. */
  clusters?: LocalClusters;
  /** Variables a setting names for secrets (PVE_CLUSTERS', PVE_IDENTITIES'): never on a command line. */
  secretVars?: readonly string[];
}

export interface LocalClusters {
  /** PVE_CLUSTERS' entries, as written. */
  entries: Record<string, unknown>[];
  /** The names of those npm start simulates (no base_url, no vpc_service), in order. */
  simulated: string[];
  /** The variables the others name for their secrets (their values are in the stack's `vars`). */
  secretVars: string[];
}

/** The variable a simulated cluster's token secret is handed over in (lab: LAB_TOKEN_SECRET). */
export function simulatedSecretVar(cluster: string): string {
  return `${cluster.toUpperCase().replaceAll('-', '_')}_TOKEN_SECRET`;
}

/**
 * The seed of each simulated cluster: the first the full one (3 nodes, 13 guests), the others a
 * smaller site (2 nodes, 5 guests; simulator/cluster/seed-small.ts).
 */
export function clusterSeeds(simulated: readonly string[]): Record<string, SeedName> {
  return Object.fromEntries(simulated.map((name, i) => [name, i === 0 ? 'full' : 'small']));
}

export interface Stack {
  url: string;
  simulatorUrl: string | null;
  /** With PVE_CLUSTERS: each cluster, its API URL (null: a VPC service) and its seed if simulated. */
  clusters: { name: string; url: string | null; seed: SeedName | null }[] | null;
  vars: Record<string, string>;
  wrangler: ChildProcess;
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const vars: Record<string, string> = { ...options.vars };
  const secretNames = new Set([
    ...SECRET_VARS,
    ...(options.clusters?.secretVars ?? []),
    ...(options.secretVars ?? []),
  ]);
  let closeSimulator = async (): Promise<void> => {};
  let simulatorUrl: string | null = null;
  let clusters: Stack['clusters'] = null;
  const simulator = async (seeds?: Record<string, SeedName>): Promise<string> => {
    if (options.simulatorUrl) {
      for (const [tenant, seed] of Object.entries(seeds ?? {}))
        await resetTenant(options.simulatorUrl, tenant, seed);
      return options.simulatorUrl;
    }
    const sim = await startSimulator({ ...options.simulator, port: options.simPort, seeds });
    closeSimulator = sim.close;
    return sim.url;
  };
  if (options.pve) {
    Object.assign(vars, options.pve);
  } else if (options.clusters) {
    const { entries, simulated } = options.clusters;
    const seeds = clusterSeeds(simulated);
    if (simulated.length) simulatorUrl = await simulator(seeds);
    const filled = entries.map((entry) => {
      const name = String(entry.name);
      if (!simulated.includes(name)) return entry;
      secretNames.add(simulatedSecretVar(name));
      vars[simulatedSecretVar(name)] = SIMULATOR_TOKENS.admin.secret;
      return {
        ...entry,
        base_url: `${simulatorUrl}/t/${name}/api2/json`,
        token_id: SIMULATOR_TOKENS.admin.id,
        token_secret_var: simulatedSecretVar(name),
      };
    });
    vars.PVE_CLUSTERS = JSON.stringify(filled);
    clusters = filled.map((entry) => ({
      name: String(entry.name),
      url: typeof entry.base_url === 'string' ? entry.base_url : null,
      seed: seeds[String(entry.name)] ?? null,
    }));
  } else {
    simulatorUrl = await simulator();
    vars.PVE_BASE_URL = `${simulatorUrl}/api2/json`;
    vars.PVE_TOKEN_ID = SIMULATOR_TOKENS.admin.id;
    vars.PVE_TOKEN_SECRET = SIMULATOR_TOKENS.admin.secret;
  }

  // Secrets never go on the command line (any local user reads it with `ps`): they go into a
  // file only we can read, removed when the stack stops.
  const secrets = writeSecretsFile(vars, secretNames);
  // However this process ends, take wrangler's process group (and workerd) with it.
  let wrangler: ChildProcess | undefined;
  process.once('exit', () => {
    if (wrangler) stopTree(wrangler);
    secrets?.remove();
  });
  try {
    for (let attempt = 1; ; attempt++) {
      const port = options.port || (await freePort());
      const inspectorPort = options.inspectorPort === 0 ? await freePort() : options.inspectorPort;
      try {
        const started = await startWrangler(
          options,
          { port, inspectorPort },
          vars,
          { file: secrets?.file ?? null, names: secretNames },
          (child) => (wrangler = child),
        );
        const stop = async (): Promise<void> => {
          await endTree(started);
          secrets?.remove();
          await closeSimulator();
        };
        const url = `http://localhost:${port}`;
        return { url, simulatorUrl, clusters, vars, wrangler: started, stop };
      } catch (err) {
        // A port we picked, free then, taken before wrangler bound it (a server starting beside
        // us): pick again. A port we were given stays an error.
        const picked =
          err instanceof PortTaken &&
          ((options.port === 0 && err.port === port) ||
            (options.inspectorPort === 0 && err.port === inspectorPort));
        if (!picked || attempt >= PORT_ATTEMPTS) throw err;
      }
    }
  } catch (err) {
    secrets?.remove();
    await closeSimulator();
    throw err;
  }
}

/** Starts of wrangler dev on picked ports before giving up (each clash costs about 2 s). */
const PORT_ATTEMPTS = 5;

/** A port free on 127.0.0.1 right now (bound to port 0, read back, released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** wrangler dev stopped because a port it was told to use was taken. */
export class PortTaken extends Error {
  constructor(
    readonly port: number,
    message: string,
  ) {
    super(message);
  }
}

/** wrangler dev on these ports, once /health answers; its own process group. */
async function startWrangler(
  options: StackOptions,
  ports: { port: number; inspectorPort: number | undefined },
  vars: Record<string, string>,
  secrets: { file: string | null; names: ReadonlySet<string> },
  spawned: (wrangler: ChildProcess) => void,
): Promise<ChildProcess> {
  const args = [
    'dev',
    '--port',
    String(ports.port),
    '--ip',
    '127.0.0.1',
    '--show-interactive-dev-session=false',
  ];
  // Several stacks (tests, the benchmark) must not fight over the default devtools port.
  if (ports.inspectorPort !== undefined) args.push('--inspector-port', String(ports.inspectorPort));
  if (options.persistTo) args.push('--persist-to', options.persistTo);
  if (options.config) args.push('--config', options.config);
  if (secrets.file) args.push('--env-file', secrets.file);
  for (const [name, value] of Object.entries(vars))
    if (!secrets.names.has(name)) args.push('--var', `${name}:${value}`);
  const show = options.stdio === 'inherit';
  // The JS entry of wrangler under this Node: no shim, no shell, the same on every OS.
  const [node, command] = packageCommand('wrangler', args);
  const wrangler = spawn(node, command, {
    cwd: options.root ?? root,
    // Nor in its environment: wrangler and workerd get them from the file alone. Its output is
    // read here (see below) and passed on: keep its colours when ours is a terminal.
    env: {
      ...withoutSecrets(process.env, secrets.names),
      ...OFFLINE_WRANGLER_ENV,
      ...(show && process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group (its tree on Windows), so stopping ends workerd too (ending only
    // wrangler leaves it holding the port).
    ...OWN_GROUP,
  });
  spawned(wrangler);
  const closed = new Promise((resolve) => wrangler.once('close', resolve));
  // Read, to know that wrangler itself holds the port (its "Ready on" line) before asking it for
  // /health (whoever took a picked port first would answer too), and to tell a port clash from
  // other errors; shown as it comes when output is wanted.
  let output = '';
  let ready = false;
  const probes = { answered: 0 };
  const read = (from: NodeJS.ReadableStream, to: NodeJS.WriteStream) => {
    const shown = shownLines((line) => to.write(line), probes);
    // Decoded as a stream: a character split between two chunks stays whole.
    from.setEncoding('utf8');
    from.on('data', (chunk: string) => {
      if (show) shown.push(chunk);
      output = (output + chunk).slice(-8000);
      ready ||= new RegExp(`Ready on http://\\S+:${ports.port}\\b`).test(plain(output));
    });
    // Its last words, even without a line break.
    from.on('end', () => show && shown.flush());
  };
  read(wrangler.stdout!, process.stdout);
  read(wrangler.stderr!, process.stderr);
  try {
    await waitForHealth(`http://localhost:${ports.port}/health`, wrangler, () => ready, probes);
    return wrangler;
  } catch (err) {
    stopTree(wrangler);
    // Its last words may still be on their way when it exits.
    await Promise.race([closed, new Promise((r) => setTimeout(r, 2000))]);
    // wrangler says e.g. "Address already in use (127.0.0.1:8787). Please check that you are not
    // already running a server on this address or specify a different port with --port."
    const taken = /Address already in use \((?:\S+):(\d+)\)/.exec(plain(output));
    if (taken) throw new PortTaken(Number(taken[1]), `port ${taken[1]} is already in use`);
    // For the devtools (inspector) port it names a socket instead: "Address already in use
    // (socket "direct:1:default")" (wrangler 4.x, tried with that port held by another process).
    if (ports.inspectorPort !== undefined && /Address already in use \(socket /.test(plain(output)))
      throw new PortTaken(
        ports.inspectorPort,
        `the devtools port ${ports.inspectorPort} is already in use`,
      );
    const detail = show ? '' : `: ${plain(output).trim().slice(-2000)}`;
    throw new Error(`${err instanceof Error ? err.message : err}${detail}`);
  }
}

/**
 * What of wrangler's output a person at `npm start` can act on, line by line: not the path of the
 * private secrets file (temporary, and ours), not the hint to run `wrangler types` (the project's
 * types are written by hand: src/env.ts), not its "Ready on" (the server is ready once our banner
 * says so, after /health answered), nor the log line of each readiness probe that was answered
 * (`probes.answered` of them), nor a blank line after another. wrangler prints its bindings table
 * again, with "Connection status updated", when its dev registry (other local Workers this one
 * could bind to; here none) reports in: shown once.
 */
const NOT_SHOWN = [
  /^Using secrets defined in /,
  /Your types might be out of date/,
  /\[wrangler:info\] Ready on /,
  /Connection status updated/,
];
const BINDINGS_TABLE = /^Your Worker has access to the following bindings:/;

function shownLines(
  write: (line: string) => void,
  probes: { answered: number },
): { push(text: string): void; flush(): void } {
  let partial = '';
  let blank = false;
  let tables = 0;
  let repeatedTable = false;
  const line = (text: string, end: string): void => {
    const bare = plain(text);
    if (BINDINGS_TABLE.test(bare)) repeatedTable = ++tables > 1;
    if (repeatedTable) {
      repeatedTable = bare.trim() !== '';
      return;
    }
    if (NOT_SHOWN.some((re) => re.test(bare))) return;
    if (probes.answered > 0 && /\] GET \/health \d{3}\b/.test(bare)) {
      probes.answered--;
      return;
    }
    if (!bare.trim() && blank) return;
    blank = !bare.trim();
    write(`${text}${end}`);
  };
  return {
    push: (text) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const l of lines) line(l, '\n');
    },
    flush: () => {
      if (partial) line(partial, '');
      partial = '';
    },
  };
}

/** Text without terminal colours. */
function plain(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape starts every colour
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/**
 * Variables that are secrets in a deployment (`wrangler secret put`): never passed as --var.
 * APPROVAL_WEBHOOKS is one: Slack and Teams addresses are credentials.
 */
export const SECRET_VARS = new Set([
  'PVE_TOKEN_SECRET',
  'CF_ACCESS_CLIENT_SECRET',
  'OIDC_CLIENT_SECRET',
  'GITHUB_CLIENT_SECRET',
  'APPROVAL_WEBHOOKS',
]);

/**
 * Writes the secrets among `vars` to a .env file in a fresh directory only this user can enter
 * (0700, file 0600), for `wrangler dev --env-file`. Null when there are none.
 */
function writeSecretsFile(
  vars: Record<string, string>,
  names: ReadonlySet<string>,
): { file: string; remove(): void } | null {
  const entries = Object.entries(vars).filter(([name]) => names.has(name));
  if (entries.length === 0) return null;
  const lines = entries.map(([name, value]) => `${name}=${dotenvQuoted(name, value)}`);
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

/**
 * `value` written so that wrangler's .env reader gives it back exactly: dotenv takes a quoted
 * value as it is (line breaks too; in double quotes `\\n` becomes one), then dotenv-expand
 * replaces `$NAME` and `${NAME}` unless the `$` is escaped, and unescapes `\\$`. So every `$` is
 * escaped, in a quote the value does not contain (single, backtick, then double); a value no
 * quote can hold is refused, naming the variable.
 */
export function dotenvQuoted(name: string, value: string): string {
  // dotenv turns every CR into a line feed, and a closing backslash escapes the quote after it
  // (the next value's line is then read into this one): neither comes back as written.
  if (value.includes('\r') || value.endsWith('\\'))
    throw new Error(
      `${name} ends in a backslash or holds a carriage return, which wrangler dev would not read back as written`,
    );
  const escaped = value.replaceAll('$', '\\$');
  for (const quote of ["'", '`']) if (!value.includes(quote)) return `${quote}${escaped}${quote}`;
  if (!value.includes('"') && !/\\[nr]/.test(value)) return `"${escaped}"`;
  throw new Error(
    `${name} contains every kind of quote, which cannot be passed to wrangler dev safely`,
  );
}

function withoutSecrets(env: NodeJS.ProcessEnv, names: ReadonlySet<string>): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !names.has(name)));
}

/** Seeds a tenant of a simulator already running (its control API's reset). */
async function resetTenant(simulatorUrl: string, tenant: string, seed: SeedName): Promise<void> {
  const res = await fetch(`${simulatorUrl}/t/${tenant}/_sim/reset`, {
    method: 'POST',
    body: JSON.stringify({ seed }),
  });
  if (!res.ok) throw new Error(`the simulator did not seed ${tenant}: ${await res.text()}`);
}

/** Until wrangler is listening (`listening()`) and the Worker answers /health, for 60 s. */
async function waitForHealth(
  url: string,
  child: ChildProcess,
  listening: () => boolean,
  probes: { answered: number },
): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with code ${child.exitCode}`);
    if (listening()) {
      try {
        // The first request builds the Worker: seconds, not minutes. Stop waiting if it exits.
        const res = await Promise.race([
          fetch(url, { signal: AbortSignal.timeout(10_000) }),
          exited,
        ]);
        if (res) probes.answered++;
        if (res?.ok) return;
      } catch {
        // not answering yet
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the Worker did not become healthy at ${url}`);
}
