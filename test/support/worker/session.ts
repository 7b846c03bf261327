// One MCP client for a describe block, against a freshly reset simulator whose tasks take
// `taskDurationMs`; queued faults and the request log are cleared before each test.

import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect } from './mcp';
import { sim } from './sim';

export function simSession(taskDurationMs = 100): { readonly client: Client } {
  const session = {} as { client: Client };
  beforeAll(async () => {
    await sim.reset();
    await sim.config({ taskDurationMs });
    session.client = await connect('http');
  });
  afterAll(() => session.client.close());
  beforeEach(async () => {
    await sim.clearFaults();
    await sim.clearLog();
  });
  return session;
}
