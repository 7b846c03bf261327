// MCP SDK clients connected to the Worker under test through its own fetch handler
// (exports.default.fetch), over streamable HTTP (/mcp) or legacy SSE (/sse).

import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import type { AppEnv } from '../../../src/env';
import worker from '../../../src/index';

export type TransportKind = 'http' | 'sse';
export const TRANSPORTS: TransportKind[] = ['http', 'sse'];

export const ORIGIN = 'http://localhost';

/** fetch that lands in the Worker's default export, as a request from a local client would. */
export function workerFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(input, init));
}

export type WorkerFetch = typeof workerFetch;

/** A raw 2025-06-18 initialize, for tests that speak MCP over plain HTTP. */
export const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
};

/** The headers a streamable HTTP POST to /mcp carries. */
export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/**
 * fetch into the Worker as deployed with other settings: the project's bindings with `vars` over
 * them (the Worker builds its configuration from the env it is given). Only what runs in the
 * Worker itself sees them: a Durable Object reads its own env, the project's, so an MCP client
 * here speaks 2026-07-28 (stateless, no session object; ./mcp-2026.ts takes this fetch).
 */
export function workerFetchWith(vars: Record<string, string>): WorkerFetch {
  const settings = { ...env, ...vars } as unknown as AppEnv;
  return async (input, init) => {
    const ctx = createExecutionContext();
    const res = await worker.fetch(new Request(input, init), settings, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  };
}

export async function connect(kind: TransportKind = 'http'): Promise<Client> {
  const client = new Client(
    { name: 'vitest', version: '1.0.0' },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  const transport =
    kind === 'http'
      ? new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), { fetch: workerFetch })
      : new SSEClientTransport(new URL(`${ORIGIN}/sse`), {
          fetch: workerFetch,
          eventSourceInit: { fetch: workerFetch },
        });
  await client.connect(transport);
  return client;
}

// biome-ignore lint/suspicious/noExplicitAny: see call() below
type ToolResult = CallToolResult & { structuredContent?: Record<string, any> };

/**
 * Calls a tool and returns its result with the types narrowed for assertions. `any` on purpose:
 * tests read structuredContent's members directly, and each assertion checks what it reads.
 */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  const result = await client.callTool({ name, arguments: args });
  return result as ToolResult;
}

export function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}
