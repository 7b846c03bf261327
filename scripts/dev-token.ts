// `npm run -s token -- [user] [groups] [scope]`: prints an access token for the local server started by
// `npm start` (dev sign-in), for clients that take a bearer header instead of signing in, such
// as the MCP Inspector CLI:
//   npx -y @modelcontextprotocol/inspector@2.12.0 --cli http://localhost:8787/mcp \
//     --header "Authorization: Bearer $(npm run -s token)" --method tools/list

import { devAccessToken } from '../test/support/oauth-node.ts';

// `scope` (space-separated) is what the token is granted: by default pve:read, pve:operate and
// pve:provision, as the consent page ticks them; e.g. 'pve:read pve:guest' for commands inside
// guests, or `policy:edit` for a token the policy API accepts for changes (for an editor).
const [user = 'dev@example.com', groups = '', scope = ''] = process.argv.slice(2);
const url = process.env.MCP_URL ?? `http://localhost:${process.env.PORT ?? 8787}`;
try {
  console.log(await devAccessToken(url, user, groups, scope));
} catch (err) {
  console.error(
    `Could not get a token from ${url} (is npm start running with the dev sign-in?): ${err instanceof Error ? err.message : err}`,
  );
  process.exit(1);
}
