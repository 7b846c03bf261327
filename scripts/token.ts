// `npm run -s token`: prints an access token of this server's own sign-in, for what takes a bearer
// header instead of signing in (the MCP Inspector CLI, `npm run doctor`, `npm run policy`).
//
//   npm run -s token -- [user] [groups] [scope]
//     the local server started by `npm start` (MCP_URL, else http://localhost:$PORT or 8787),
//     signed in through its development sign-in as `user` (no browser):
//       npx -y @modelcontextprotocol/inspector@2.12.0 --cli http://localhost:8787/mcp \
//         --header "Authorization: Bearer $(npm run -s token)" --method tools/list
//   npm run -s token -- --url https://mcp.example.com [--scope "pve:read policy:read"] [--json] [--no-browser]
//     any server, deployed ones included: you sign in through your browser with the server's
//     identity provider, and consent (tick the scopes to grant). --json prints the token answer
//     with the client id and the refresh token (for a CI job that refreshes it); --no-browser
//     only prints the sign-in address.
//
// Both sign in through one client of this script's own per server, kept in
// .wrangler/token-clients.json (PERSIST_TO when set, as for npm start): signing the same person
// in again replaces their earlier grant to it, so /admin shows one grant per person, not one per
// run (the earlier token stops working). A client the server no longer knows is registered anew.
// Exit statuses: 0 a token printed, 1 no token, 2 a usage error.

import path from 'node:path';
import { parseArgs } from 'node:util';
import { devAccessToken, registerDevClient } from '../test/support/oauth-node.ts';
import { signInWithBrowser } from './token/browser.ts';
import { SavedClients } from './token/clients.ts';

const USAGE = [
  'usage: npm run -s token -- [user] [groups] [scope]          (npm start, its development sign-in)',
  '       npm run -s token -- --url <server> [--scope "pve:read policy:read"] [--json] [--no-browser]',
].join('\n');

// What the doctor needs: tools/list and a read-only call, and /health's operator view.
const BROWSER_SCOPE = 'pve:read policy:read';

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      scope: { type: 'string' },
      json: { type: 'boolean' },
      'no-browser': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
} catch (err) {
  console.error(`${err instanceof Error ? err.message : 'bad arguments'}\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const root = path.resolve(import.meta.dirname, '..');
const clients = SavedClients.forCheckout(root, process.env);

/** The development sign-in of `npm start`: no browser, any user name. */
async function devToken(): Promise<string> {
  const [user = 'dev@example.com', groups = '', positionalScope = ''] = positionals;
  // `scope` (space-separated) is what the token is granted: by default pve:read, pve:operate
  // and pve:provision, as the consent page ticks them; e.g. 'pve:read pve:guest' for commands
  // inside guests, or `policy:edit` for the policy API's changes (for an editor).
  const scope = values.scope ?? positionalScope;
  const url = process.env.MCP_URL ?? `http://localhost:${process.env.PORT ?? 8787}`;
  const fresh = async (): Promise<string> => {
    const clientId = await registerDevClient(url, 'npm run token');
    clients.set(url, { client_id: clientId });
    return clientId;
  };
  const known = clients.get(url)?.client_id;
  try {
    return await devAccessToken(url, user, groups, scope, known ?? (await fresh()));
  } catch (err) {
    if (!known)
      throw new Error(
        `${err instanceof Error ? err.message : err} (is npm start running with the dev sign-in?)`,
      );
    // The server forgot the client (a new state directory): register it anew, once.
    return devAccessToken(url, user, groups, scope, await fresh());
  }
}

/** The server's origin from --url (a path such as /mcp is dropped), or a usage error. */
function serverOrigin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url ${raw} is not a URL (e.g. https://mcp.example.com)`);
  }
  if (url.protocol !== 'https:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname))
    throw new UsageError(`--url must be https (http only for localhost), not ${url.protocol}`);
  return url.origin;
}

class UsageError extends Error {}

try {
  if (values.url === undefined) {
    console.log(await devToken());
  } else {
    if (positionals.length)
      throw new UsageError(`--url takes no user name or groups: the person signs in`);
    const server = serverOrigin(values.url);
    const { tokens, clientId } = await signInWithBrowser({
      server,
      scope: values.scope ?? BROWSER_SCOPE,
      clients,
      openBrowser: !values['no-browser'],
      say: (line) => console.error(line),
    });
    console.error(`Signed in; granted: ${tokens.scope ?? '(not said)'}.`);
    if (values.json) {
      const { issuer: _issuer, ...answer } = tokens as typeof tokens & { issuer?: string };
      console.log(JSON.stringify({ ...answer, client_id: clientId }, null, 2));
    } else console.log(tokens.access_token);
  }
} catch (err) {
  if (err instanceof UsageError) {
    console.error(`${err.message}\n${USAGE}`);
    process.exit(2);
  }
  // The origin only: a URL given with user:password@ does not come back out.
  const given = values.url ?? process.env.MCP_URL ?? `http://localhost:${process.env.PORT ?? 8787}`;
  const where = URL.canParse(given) ? new URL(given).origin : 'the server';
  console.error(`Could not get a token from ${where}: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}
