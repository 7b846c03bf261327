// Stands in for `@modelcontextprotocol/client` (the MCP SDK v2 *client*, with its SSE and OAuth
// code: about 210 KiB minified).
//
// Why it never runs: agents imports it for the Agent's MCP client manager (`this.mcp`:
// `addMcpServer()`, connecting this Durable Object to *other* MCP servers) and for deprecated
// client transports that agents/mcp re-exports. A client or transport is only created for a
// server that `addMcpServer()` stored; this Worker never calls it, so the manager's table stays
// empty and its start-up restore returns before creating anything. What does run at load —
// `class ... extends SSEClientTransport` and `instanceof` tests — only needs these to be
// classes. The JSON-schema validator the manager builds at load comes from the sibling stub
// mcp-client-cf-worker.ts, not from here.
//
// Exports are exactly what agents 0.32 imports: if a new version imports another name, the
// build fails on the missing export; if it creates a client, the constructors below throw.

import { leftOut } from './left-out';

const MODULE = '@modelcontextprotocol/client';
const STUB = 'mcp-client.ts';

export class Client {
  constructor() {
    throw leftOut(`${MODULE} (Client)`, STUB);
  }
}

export class StreamableHTTPClientTransport {
  constructor() {
    throw leftOut(`${MODULE} (StreamableHTTPClientTransport)`, STUB);
  }
}

export class SSEClientTransport {
  constructor() {
    throw leftOut(`${MODULE} (SSEClientTransport)`, STUB);
  }
}

/** Only ever the right side of `instanceof` for errors a client threw: none is created here. */
export class SdkHttpError extends Error {
  constructor() {
    super();
    throw leftOut(`${MODULE} (SdkHttpError)`, STUB);
  }
}

export function validateClientMetadataUrl(): never {
  throw leftOut(`${MODULE} (validateClientMetadataUrl)`, STUB);
}
