// `npm run -s token -- [user] [groups] [scope]`: prints an access token for the local server started by
// `npm start` (dev sign-in), for clients that take a bearer header instead of signing in, such
// as the MCP Inspector CLI:
//   npx -y @modelcontextprotocol/inspector@2.12.0 --cli http://localhost:8787/mcp \
//     --header "Authorization: Bearer $(npm run -s token)" --method tools/list
// It signs in through one client of its own per server, kept in .wrangler/dev-token-clients.json
// (in PERSIST_TO when that is set, as for npm start): signing the same person in again replaces
// their earlier grant to it, so /admin shows one grant per person, not one per run (the earlier
// token stops working). A client the server no longer knows (its state was reset) is registered
// anew.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { devAccessToken, registerDevClient } from '../test/support/oauth-node.ts';

// `scope` (space-separated) is what the token is granted: by default pve:read, pve:operate and
// pve:provision, as the consent page ticks them; e.g. 'pve:read pve:guest' for commands inside
// guests, or `policy:edit` for a token the policy API accepts for changes (for an editor).
const [user = 'dev@example.com', groups = '', scope = ''] = process.argv.slice(2);
const url = process.env.MCP_URL ?? `http://localhost:${process.env.PORT ?? 8787}`;
const root = path.resolve(import.meta.dirname, '..');
const dir = process.env.PERSIST_TO
  ? path.resolve(process.env.PERSIST_TO)
  : path.join(root, '.wrangler');
const saved = path.join(dir, 'dev-token-clients.json');

/** The client ids this script registered, by server URL. */
function clients(): Record<string, string> {
  try {
    const parsed = JSON.parse(readFileSync(saved, 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

async function freshClient(): Promise<string> {
  const clientId = await registerDevClient(url, 'npm run token');
  mkdirSync(dir, { recursive: true });
  writeFileSync(saved, `${JSON.stringify({ ...clients(), [url]: clientId }, null, 2)}\n`);
  return clientId;
}

try {
  const known = clients()[url];
  let token: string;
  try {
    token = await devAccessToken(url, user, groups, scope, known ?? (await freshClient()));
  } catch (err) {
    if (!known) throw err;
    // The server forgot the client (a new state directory): register it anew, once.
    token = await devAccessToken(url, user, groups, scope, await freshClient());
  }
  console.log(token);
} catch (err) {
  console.error(
    `Could not get a token from ${url} (is npm start running with the dev sign-in?): ${err instanceof Error ? err.message : err}`,
  );
  process.exit(1);
}
