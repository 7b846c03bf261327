// `npm start`: the Proxmox simulator plus `wrangler dev` pointed at it, so the server works with
// no Proxmox and no Cloudflare account. Sign-in is real OAuth with the local development identity
// provider (any name; loopback only); AUTH_MODE=none turns sign-in off. Every Worker setting
// (POLICY, POLICY_EDITORS, ADMIN_USERS, APPROVAL_WEBHOOKS, the sign-in's, ...) is taken from the
// environment, or else from a `.dev.vars` file in the checkout (DEV_VARS=<file> for another):
// scripts/local-settings.ts. With PVE_BASE_URL (and a token) it uses that Proxmox instead of the
// simulator. With PVE_CLUSTERS it reaches each cluster listed, simulating those given no address
// (`PVE_CLUSTERS='[{"name":"lab"},{"name":"prod"}]' npm start`: two simulated clusters).
//
// Where it listens and keeps its state:
//   PORT        the server's port (default 8787); 0 picks a free one (and a free devtools port),
//               printed when ready.
//   SIM_PORT    the simulator's port (default 8006); 0 picks a free one.
//   PERSIST_TO  the directory for Durable Objects and KV (grants, audit, counters); default
//               .wrangler/state in the checkout. Tests give each server a fresh one.
// One server per state directory: a second `npm start` on a port or a state directory already in
// use stops at once and says which (two workerd processes on one state directory break each
// other's Durable Objects), instead of failing later.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { SEED_SUMMARY } from '../simulator/server.ts';
import { type Stack, startStack } from './dev-stack.ts';
import { localSettings, type LocalSettings } from './local-settings.ts';

const root = path.resolve(import.meta.dirname, '..');
const port = portFromEnv('PORT', 8787);
const simPort = portFromEnv('SIM_PORT', 8006);
const persistTo = process.env.PERSIST_TO ? path.resolve(process.env.PERSIST_TO) : undefined;

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65_535) {
    console.error(`${name} must be a port number (0 picks a free one), got '${raw}'`);
    process.exit(1);
  }
  return value;
}

/** Whether something already listens on 127.0.0.1:port (where wrangler and the simulator bind). */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

/**
 * Claims the state directory for this process (a pid file in it); the pid of the live
 * `npm start` that holds it instead, if any. A pid file left by a server that died is taken over.
 */
function claimState(dir: string): number | null {
  const file = path.join(dir, 'npm-start.pid');
  mkdirSync(dir, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      process.once('exit', () => rmSync(file, { force: true }));
      return null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileSync(file, 'utf8'));
    if (holder && holder !== process.pid && alive(holder)) return holder;
    rmSync(file, { force: true });
  }
  return null;
}

/** Whether `pid` is a running `npm start` (a reused pid is not, where /proc tells). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('start.ts');
  } catch {
    return true; // no /proc here: trust the pid
  }
}

/** Every reason this server cannot start beside what runs already, and how to start it anyway. */
async function checkFree(): Promise<string | null> {
  const stateDir = persistTo ?? path.join(root, '.wrangler', 'state');
  const problems: string[] = [];
  // The command to suggest: this one's own settings, changed where they clash.
  const instead = new Map<string, string>();
  for (const name of ['PORT', 'SIM_PORT', 'PERSIST_TO']) {
    const value = process.env[name];
    if (value) instead.set(name, value);
  }
  if (port !== 0 && (await portInUse(port))) {
    problems.push(`port ${port} (PORT) is already in use`);
    instead.set('PORT', '0');
  }
  const simulated = settings.clusters ? settings.clusters.simulated.length > 0 : !settings.pve;
  if (simulated && simPort !== 0 && (await portInUse(simPort))) {
    problems.push(`port ${simPort} (SIM_PORT, the Proxmox simulator) is already in use`);
    instead.set('SIM_PORT', '0');
  }
  const holder = claimState(stateDir);
  if (holder !== null) {
    problems.push(
      `${path.relative(root, stateDir) || stateDir} is the state directory of another npm start (pid ${holder}); two servers on one state directory break each other's Durable Objects`,
    );
    instead.set('PERSIST_TO', '$(mktemp -d)');
  }
  if (problems.length === 0) return null;
  const command = [...instead].map(([name, value]) => `${name}=${value}`).join(' ');
  return [
    'npm start cannot start here:',
    ...problems.map((p) => `  - ${p}`),
    'Is another npm start running? Stop it (Ctrl-C in its terminal), or run this one beside it:',
    `  ${command} npm start${/PORT=0/.test(command) ? '   (PORT=0 and SIM_PORT=0 pick free ports)' : ''}`,
  ].join('\n');
}

// Stopping, at any point from here: Ctrl-C (SIGINT), a supervisor (SIGTERM), a closed terminal
// (SIGHUP), or npm gone. npm runs this script through a shell (`sh -c`), and Debian's dash neither
// passes a signal on nor hands its place to the script: npm stopped alone takes the shell down and
// leaves this process orphaned, which the parent's id then tells. Before the stack is up, exiting
// is enough (dev-stack's exit handler takes wrangler's process group along); after, the stack
// stops and is waited for, port freed. (On Windows a process keeps its parent's id, and Ctrl-C
// reaches the whole console.)
let stack: Stack | undefined;
let stopping = false;
function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  if (!stack) process.exit(code);
  void stack.stop().then(() => process.exit(code));
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(0));
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop(0);
}, 250).unref();

let settings: LocalSettings;
try {
  settings = localSettings(process.env, root);
} catch (err) {
  console.error(`npm start cannot start: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}
for (const warning of settings.warnings) console.error(`warning: ${warning}`);

const notFree = await checkFree();
if (notFree) {
  console.error(notFree);
  process.exit(1);
}

try {
  stack = await startStack({
    port,
    // Picking the server's port picks the devtools port too, so that servers started side by
    // side (the tests) do not race for wrangler's default one.
    inspectorPort: port === 0 ? 0 : undefined,
    simPort,
    pve: settings.pve,
    clusters: settings.clusters,
    secretVars: settings.secretVars,
    vars: settings.vars,
    stdio: 'inherit',
    persistTo,
  });
} catch (err) {
  // A port taken between the check above and wrangler binding it, or wrangler failing: one line.
  console.error(`npm start failed: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}
stack.wrangler.on('exit', (code) => stop(code ?? 1));

/** Where the server reaches Proxmox: the simulator, a real one, or each cluster of PVE_CLUSTERS. */
function proxmoxLines(stack: Stack): string {
  if (!stack.clusters)
    return stack.simulatorUrl
      ? `Proxmox simulator: ${stack.simulatorUrl}/api2/json (${SEED_SUMMARY.full})`
      : `Proxmox API: ${stack.vars.PVE_BASE_URL}`;
  const width = Math.max(...stack.clusters.map((c) => c.name.length));
  return [
    'Proxmox clusters (PVE_CLUSTERS, the first the default):',
    ...stack.clusters.map(
      (c) =>
        `  ${c.name.padEnd(width)}  ${c.url ?? 'through its VPC service'}${c.seed ? ` (simulated: ${SEED_SUMMARY[c.seed]})` : ''}`,
    ),
  ].join('\n');
}

const actualPort = new URL(stack.url).port;
const tokenCommand = `${actualPort === '8787' ? '' : `PORT=${actualPort} `}npm run -s token`;
console.log(
  [
    '',
    proxmoxLines(stack),
    settings.file && settings.fromFile.length
      ? `Settings from ${path.resolve(settings.file)}: ${settings.fromFile.join(', ')}`
      : '',
    `MCP server ready (AUTH_MODE=${stack.vars.AUTH_MODE}${stack.vars.IDP ? `, IDP=${stack.vars.IDP}` : ''}):`,
    `  streamable HTTP  ${stack.url}/mcp`,
    `  SSE              ${stack.url}/sse`,
    `  health           ${stack.url}/health`,
    stack.vars.IDP === 'dev'
      ? `Clients sign in through ${stack.url}/authorize with any user name (local development sign-in).`
      : '',
    stack.vars.AUTH_MODE === 'oauth'
      ? [
          `Try: npx -y mcp-remote@0.15.1 ${stack.url}/mcp   (opens the sign-in page in your browser)`,
          stack.vars.IDP === 'dev'
            ? `  or: npx -y @modelcontextprotocol/inspector@2.12.0 --cli ${stack.url}/mcp --header "Authorization: Bearer $(${tokenCommand})" --method tools/list`
            : '',
        ].join('\n')
      : `Try: npx -y @modelcontextprotocol/inspector@2.12.0 --cli ${stack.url}/mcp --transport http --method tools/list`,
    '',
  ]
    // A line left out (a setting not in use) leaves no gap; the first and last frame the banner.
    .filter((line, i, all) => line !== '' || i === 0 || i === all.length - 1)
    .join('\n'),
);
