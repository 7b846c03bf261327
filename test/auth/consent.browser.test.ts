// The consent and dev sign-in pages in a real browser (headless Debian Chromium through
// playwright-core): authorize → consent → Allow → sign in → back at the client with a code that
// buys a token the MCP endpoint accepts; and authorize → consent → Deny → access_denied.

import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../scripts/dev-stack.ts';
import { BROWSER, launchChromium } from '../support/browser/launch.ts';

let stack: Stack;
let browser: Browser;
let callbackServer: Server;
let callbackUrl: string;
let clientId: string;
let state: string;
const arrivals: URL[] = [];

beforeAll(async () => {
  state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-browser-'));
  [stack, browser] = await Promise.all([
    startStack({
      // Free ports picked by startStack (and picked again on a clash); state of its own.
      port: 0,
      inspectorPort: 0,
      simPort: 0,
      vars: { AUTH_MODE: 'oauth', IDP: 'dev', ALLOWED_GROUPS: 'ops' },
      stdio: 'ignore',
      persistTo: state,
    }),
    launchChromium(),
  ]);
  // The MCP client's redirect URI: a local page that records what the browser brings back.
  callbackServer = createServer((req, res) => {
    const url = new URL(req.url!, callbackUrl);
    if (url.pathname === '/callback') arrivals.push(url);
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<title>Client callback</title><p>Back at the client.</p>');
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
  const registered = await fetch(`${stack.url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Browser <Test> Client',
      redirect_uris: [callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  expect(registered.status).toBe(201);
  clientId = ((await registered.json()) as { client_id: string }).client_id;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  callbackServer?.close();
  await stack?.stop();
  rmSync(state, { recursive: true, force: true });
});

function authorizeUrl(): { url: string; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callbackUrl,
    state: randomBytes(8).toString('hex'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: stack.url,
  });
  return { url: `${stack.url}/authorize?${params}`, verifier };
}

describe.skipIf(!BROWSER)('the consent page in headless Chromium', () => {
  it('approves, signs in, and returns a code that buys a working token', async () => {
    const page = await browser.newPage();
    const { url, verifier } = authorizeUrl();
    await page.goto(url);
    await expect(page.title()).resolves.toBe('Allow Browser <Test> Client?');
    const heading = await page.locator('h1').innerText();
    expect(heading).toContain('Allow Browser <Test> Client to use Proxmox VE?');
    expect(await page.content()).not.toContain('<Test>'); // escaped in the markup
    const main = await page.locator('main').innerText();
    expect(main).toMatch(/Access will be sent to 127\.0\.0\.1/);
    // The scopes, each with what the policy lets through in it (the shipped policy asks a person
    // before some operations, and refuses the raw API outright).
    expect(main).toMatch(/Read pve:read/);
    expect(main).toMatch(/only with a person's approval/);
    expect(main).toMatch(/Raw API pve:raw[\s\S]*The policy allows none of its tools now/);
    const box = (name: RegExp) => page.getByRole('checkbox', { name });
    expect(await box(/Read/).isChecked()).toBe(true);
    expect(await box(/Provision/).isChecked()).toBe(true);
    expect(await box(/Inside guests/).isChecked()).toBe(false);
    expect(await box(/Raw API/).isChecked()).toBe(false);
    // The buttons are in view without scrolling, on a laptop and on a phone.
    for (const size of [
      { width: 1280, height: 720 },
      { width: 390, height: 640 },
    ]) {
      await page.setViewportSize(size);
      const allow = await page.getByRole('button', { name: 'Allow' }).boundingBox();
      expect(allow!.y + allow!.height).toBeLessThanOrEqual(size.height);
      expect(allow!.y).toBeGreaterThanOrEqual(0);
    }
    // The person gives this client less than it asked for.
    await box(/Provision/).uncheck();
    await page.getByRole('button', { name: 'Allow' }).click();

    await page.waitForURL(/\/dev-idp\/login/);
    await page.getByLabel('User name').fill('browser-user@example.com');
    await page.getByLabel('Groups (optional, comma-separated)').fill('ops');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/callback\?/);
    await expect(page.locator('p').innerText()).resolves.toBe('Back at the client.');

    const back = arrivals.at(-1)!;
    expect(back.searchParams.get('iss')).toBe(stack.url);
    const code = back.searchParams.get('code')!;
    const token = await fetch(`${stack.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callbackUrl,
        client_id: clientId,
        code_verifier: verifier,
        resource: stack.url,
      }),
    });
    expect(token.status).toBe(200);
    const { access_token: accessToken, scope } = (await token.json()) as {
      access_token: string;
      scope: string;
    };
    // The grant holds what stayed ticked, and the token's tools/list shows nothing else.
    expect(scope).toBe('pve:read pve:operate');
    const listed = await fetch(`${stack.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'browser-test', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    const names = (
      (await listed.json()) as { result: { tools: { name: string }[] } }
    ).result.tools.map((t) => t.name);
    expect(names).toContain('pve_list_vms');
    expect(names).toContain('pve_start_vm');
    expect(names).not.toContain('pve_create_qemu_vm');
    expect(names).not.toContain('pve_clone_vm');
    expect(names).not.toContain('pve_guest_exec');
    const mcp = await fetch(`${stack.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'browser-test', version: '1' },
        },
      }),
    });
    expect(mcp.status).toBe(200);
    await mcp.body?.cancel();
    await page.close();
  }, 60_000);

  it('denies, sending the browser back to the client with access_denied', async () => {
    const page = await browser.newPage();
    await page.goto(authorizeUrl().url);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(/\/callback\?/);
    const back = arrivals.at(-1)!;
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
    await page.close();
  }, 60_000);

  it('cannot be framed', async () => {
    const res = await fetch(authorizeUrl().url);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    await res.body?.cancel();
  });
});
