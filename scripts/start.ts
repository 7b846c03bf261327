// `npm start`: the Proxmox simulator plus `wrangler dev` pointed at it, so the server works with
// no Proxmox and no Cloudflare account. Sign-in is real OAuth with the local development identity
// provider (any name; loopback only); AUTH_MODE=none turns sign-in off. With PVE_BASE_URL (and a
// token) in the environment it uses that Proxmox instead of the simulator; POLICY, PUBLIC_URL and
// the sign-in settings are taken from the environment too.

import { startStack } from './dev-stack.ts';

const port = Number(process.env.PORT ?? 8787);
const simPort = Number(process.env.SIM_PORT ?? 8006);

function realPve(): Record<string, string> | undefined {
  if (!process.env.PVE_BASE_URL) return undefined;
  const out: Record<string, string> = {};
  for (const name of [
    'PVE_BASE_URL',
    'PVE_TOKEN_ID',
    'PVE_TOKEN_SECRET',
    'CF_ACCESS_CLIENT_ID',
    'CF_ACCESS_CLIENT_SECRET',
  ]) {
    const value = process.env[name];
    if (value) out[name] = value;
  }
  return out;
}

function authVars(): Record<string, string> {
  const mode = process.env.AUTH_MODE ?? 'oauth';
  if (mode !== 'oauth') return { AUTH_MODE: mode };
  const vars: Record<string, string> = { AUTH_MODE: 'oauth', IDP: process.env.IDP ?? 'dev' };
  const names = [
    'ALLOWED_USERS',
    'ALLOWED_GROUPS',
    'PUBLIC_URL',
    'OIDC_ISSUER',
    'OIDC_CLIENT_ID',
    'OIDC_CLIENT_SECRET',
    'OIDC_SCOPES',
    'OIDC_GROUPS_CLAIM',
    'GITHUB_CLIENT_ID',
    'GITHUB_CLIENT_SECRET',
    'GITHUB_ORG',
  ];
  for (const name of names) {
    const value = process.env[name];
    if (value) vars[name] = value;
  }
  return vars;
}

/** Other settings taken from the environment as they are: POLICY='{"version":"1",...}' npm start. */
function otherVars(): Record<string, string> {
  const value = process.env.POLICY;
  return value ? { POLICY: value } : {};
}

const stack = await startStack({
  port,
  simPort,
  pve: realPve(),
  vars: { ...authVars(), ...otherVars() },
  stdio: 'inherit',
});

const stop = (code: number): void => {
  void stack.stop().then(() => process.exit(code));
};
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
stack.wrangler.on('exit', (code) => stop(code ?? 1));

console.log(
  [
    '',
    stack.simulatorUrl
      ? `Proxmox simulator: ${stack.simulatorUrl}/api2/json (3 nodes, seeded guests)`
      : `Proxmox API: ${stack.vars.PVE_BASE_URL}`,
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
            ? `  or: npx @modelcontextprotocol/inspector@2.12.0 --cli ${stack.url}/mcp --header "Authorization: Bearer $(npm run -s token)" --method tools/list`
            : '',
        ].join('\n')
      : `Try: npx @modelcontextprotocol/inspector@2.12.0 --cli ${stack.url}/mcp --transport http --method tools/list`,
    '',
  ].join('\n'),
);
