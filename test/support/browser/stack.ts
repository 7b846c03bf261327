// A server (`npm start`'s stack: the Worker and its simulator, free ports, state of its own) and
// headless Chromium for one browser test file, started before its tests and stopped after them,
// with a signed-in agent (the MCP SDK client through the development sign-in) to make calls.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startStack, type Stack } from '../../../scripts/dev-stack.ts';
import { devSignedInClient } from '../oauth-node.ts';
import { launchChromium } from './launch.ts';

export interface BrowserStack {
  stack: Stack;
  browser: Browser;
  agent: Client;
}

/** The file's server with `vars` (OAuth with the dev sign-in), Chromium, and `agent` signed in. */
export function browserStack(vars: Record<string, string>, agent: string): BrowserStack {
  const out = {} as BrowserStack;
  let state = '';
  beforeAll(async () => {
    state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-browser-'));
    [out.stack, out.browser] = await Promise.all([
      startStack({
        port: 0,
        inspectorPort: 0,
        simPort: 0,
        vars: { AUTH_MODE: 'oauth', IDP: 'dev', ...vars },
        stdio: 'ignore',
        persistTo: state,
      }),
      launchChromium(),
    ]);
    out.agent = await devSignedInClient(out.stack.url, agent, 'ops');
  }, 90_000);
  afterAll(async () => {
    await out.agent?.close().catch(() => undefined);
    await out.browser?.close();
    await out.stack?.stop();
    if (state) rmSync(state, { recursive: true, force: true });
  });
  return out;
}
