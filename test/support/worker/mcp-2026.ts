// SDK v2 clients (@modelcontextprotocol/client) pinned to MCP 2026-07-28, connected to the Worker
// under test through its own fetch handler: stateless requests, server/discover, input_required.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ORIGIN, type WorkerFetch, workerFetch } from './mcp';

export interface Connect2026 {
  /** A bearer token (signed in elsewhere); none with AUTH_MODE=none. */
  token?: string;
  /** Declares form elicitation and answers every question with this. */
  answer?: (message: string) => {
    action: 'accept' | 'decline' | 'cancel';
    content?: Record<string, string | number | boolean | string[]>;
  };
  origin?: string;
  /** Into the Worker another way (./mcp.ts workerFetchWith); workerFetch by default. */
  fetch?: WorkerFetch;
}

export async function connect2026(options: Connect2026 = {}): Promise<Client> {
  const client = new Client(
    { name: 'vitest-2026', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      ...(options.answer ? { capabilities: { elicitation: { form: {} } } } : {}),
    },
  );
  if (options.answer) {
    const answer = options.answer;
    client.setRequestHandler('elicitation/create', async (request) =>
      answer(String((request.params as { message?: unknown }).message ?? '')),
    );
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${options.origin ?? ORIGIN}/mcp`), {
    fetch: options.fetch ?? workerFetch,
    ...(options.token ? { authProvider: { token: async () => options.token! } } : {}),
  });
  await client.connect(transport);
  return client;
}
