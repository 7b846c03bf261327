// `npm start`: the Proxmox simulator plus `wrangler dev` pointed at it, so the server works with
// no Proxmox and no Cloudflare account. With PVE_BASE_URL (and a token) in the environment it
// uses that Proxmox instead of the simulator.

import { startStack } from './dev-stack.ts';

const port = Number(process.env.PORT ?? 8787);
const simPort = Number(process.env.SIM_PORT ?? 8006);

function realPve(): Record<string, string> | undefined {
  if (!process.env.PVE_BASE_URL) return undefined;
  const out: Record<string, string> = {};
  for (const name of ['PVE_BASE_URL', 'PVE_TOKEN_ID', 'PVE_TOKEN_SECRET', 'CF_ACCESS_CLIENT_ID', 'CF_ACCESS_CLIENT_SECRET']) {
    const value = process.env[name];
    if (value) out[name] = value;
  }
  return out;
}

const stack = await startStack({
  port,
  simPort,
  pve: realPve(),
  vars: { AUTH_MODE: process.env.AUTH_MODE ?? 'none' },
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
    `MCP server ready (AUTH_MODE=${stack.vars.AUTH_MODE}):`,
    `  streamable HTTP  ${stack.url}/mcp`,
    `  SSE              ${stack.url}/sse`,
    `  health           ${stack.url}/health`,
    `Try: npx @modelcontextprotocol/inspector@2.12.0 --cli ${stack.url}/mcp --transport http --method tools/list`,
    '',
  ].join('\n'),
);
