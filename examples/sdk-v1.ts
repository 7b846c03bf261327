// Connecting with the MCP TypeScript SDK 1.x (@modelcontextprotocol/sdk), which speaks the 2025
// revisions (a session: initialize, then Mcp-Session-Id). Lists the tools and calls one.
//   MCP_URL=http://localhost:8787/mcp TOKEN=$(npm run -s token) node --import tsx examples/sdk-v1.ts
// (TOKEN left out with AUTH_MODE=none). test/scripts/start.node.test.ts runs it.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.env.MCP_URL ?? 'http://localhost:8787/mcp');
const headers: Record<string, string> = process.env.TOKEN
  ? { Authorization: `Bearer ${process.env.TOKEN}` }
  : {};

const client = new Client({ name: 'example-sdk-v1', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
await client.connect(transport);
const { tools } = await client.listTools();
console.log(`protocol ${transport.protocolVersion}: ${tools.length} tools`);
const nodes = await client.callTool({ name: 'pve_list_nodes', arguments: {} });
console.log((nodes.content as { type: string; text: string }[])[0]!.text);
await client.close();
