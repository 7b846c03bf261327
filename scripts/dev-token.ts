// `npm run -s token -- [user] [groups]`: prints an access token for the local server started by
// `npm start` (dev sign-in), for clients that take a bearer header instead of signing in, such
// as the MCP Inspector CLI:
//   npx -y @modelcontextprotocol/inspector@2.12.0 --cli http://localhost:8787/mcp \
//     --header "Authorization: Bearer $(npm run -s token)" --method tools/list

import { devAccessToken } from '../test/support/oauth-node.ts';

const [user = 'dev@example.com', groups = ''] = process.argv.slice(2);
const url = process.env.MCP_URL ?? `http://localhost:${process.env.PORT ?? 8787}`;
try {
  console.log(await devAccessToken(url, user, groups));
} catch (err) {
  console.error(
    `Could not get a token from ${url} (is npm start running with the dev sign-in?): ${err instanceof Error ? err.message : err}`,
  );
  process.exit(1);
}
