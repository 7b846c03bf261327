// `npm run doctor -- <url> [--token <access token>]`: checks a running server the way an operator
// and an MCP client would, and prints one line per check with what to do when it fails:
//   /health (configuration, Proxmox reachable, policy valid, audit on), OAuth and protected-resource
//   metadata naming this URL, 401 with resource_metadata on a token-less /mcp, client registration
//   advertised, then tools/list and a read-only call with their latency.
// The token may also come from MCP_TOKEN; on a local server with the development sign-in the doctor
// signs in by itself. Exit 0 only when every check holds, 1 when one fails, 2 when some could not
// be checked (no token for a deployed server).

import { fetchHealth, healthResults } from './doctor/health-checks.ts';
import { devToken, signInResult, toolResults } from './doctor/mcp-checks.ts';
import { oauthResults } from './doctor/oauth-checks.ts';
import { formatResult, notApplicable, skip, summary, type CheckResult } from './doctor/report.ts';

const USAGE =
  'usage: npm run doctor -- <server URL, e.g. https://mcp.example.com> [--token <access token>]';

function parseArgs(argv: string[]): { origin: string; token?: string } {
  let url: string | undefined;
  let token = process.env.MCP_TOKEN?.trim() || undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--token') token = argv[++i];
    else if (arg.startsWith('--token=')) token = arg.slice('--token='.length);
    else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (!arg.startsWith('-') && !url) url = arg;
    else {
      console.error(`unknown argument ${arg}\n${USAGE}`);
      process.exit(64);
    }
  }
  const target = url ?? `http://localhost:${process.env.PORT ?? 8787}`;
  try {
    // Clients are given https://host/mcp; every check is made against the origin.
    return { origin: new URL(target).origin, token };
  } catch {
    console.error(`not a URL: ${target}\n${USAGE}`);
    process.exit(64);
  }
}

const { origin, token } = parseArgs(process.argv.slice(2));
console.log(`Checking ${origin}`);
const results: CheckResult[] = [];
const show = (more: CheckResult[]): void => {
  for (const r of more) console.log(formatResult(r));
  results.push(...more);
};

let got = await fetchHealth(origin, token);
let dev: string | undefined;
if (!token && !('result' in got) && got.health.view === 'public' && got.health.idp === 'dev') {
  // The development sign-in: the doctor signs in by itself, and reads /health again with a token
  // that may see its details (an administrator's, with policy:read).
  dev = await devToken(origin).catch(() => undefined);
  const again = dev ? await fetchHealth(origin, dev) : got;
  if (!('result' in again)) got = again;
}
if ('result' in got) {
  show([got.result]);
  show(await oauthResults(origin));
  show([skip('tools/list', 'not tried: /health did not answer', got.result.fix ?? '')]);
} else {
  const health = got.health;
  show(healthResults(health));
  if (health.auth_mode === 'oauth') show(await oauthResults(origin));
  else
    show(
      [
        'oauth metadata',
        'resource metadata',
        'resource metadata /mcp',
        '401 challenge',
        'client registration',
      ].map((n) => notApplicable(n, `AUTH_MODE=${health.auth_mode}`)),
    );
  const signedIn = await signInResult(origin, health, token, dev);
  show([signedIn.result]);
  show(await toolResults(origin, signedIn.token, signedIn.result));
}

const { line, exitCode } = summary(results);
console.log(line);
process.exit(exitCode);
