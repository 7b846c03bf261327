// Connecting with the MCP TypeScript SDK 2.x (@modelcontextprotocol/client) at 2026-07-28: no
// session, each request carries its version and capabilities in `_meta`. Without the pin the
// 2.x client talks 2025-11-25 to this server (`mode: 'auto'` probes server/discover first).
//   MCP_URL=http://localhost:8787/mcp TOKEN=$(npm run -s token) node --import tsx examples/sdk-v2.ts
// (TOKEN left out with AUTH_MODE=none). test/scripts/start.node.test.ts runs it.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const url = new URL(process.env.MCP_URL ?? 'http://localhost:8787/mcp');
const headers: Record<string, string> = process.env.TOKEN
  ? { Authorization: `Bearer ${process.env.TOKEN}` }
  : {};

const client = new Client(
  { name: 'example-sdk-v2', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
const { tools } = await client.listTools();
console.log(`protocol ${client.getNegotiatedProtocolVersion()}: ${tools.length} tools`);
const nodes = await client.callTool({ name: 'pve_list_nodes', arguments: {} });
console.log((nodes.content as { type: string; text: string }[])[0]!.text);
await client.close();
