// The admin page in headless Debian Chromium: an agent's call waits for approval; an admin signs
// in with the dev identity provider, approves it on /admin, the agent's retry goes through, and
// the call shows in the audit list. A signed-in non-admin gets 403.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startStack, type Stack } from '../../scripts/dev-stack.ts';
import { devSignedInClient } from '../support/oauth-node.ts';
import { launchChromium } from './global-setup.ts';

const POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_list_vms: {},
    pve_create_qemu_vm: { action: 'require_approval', reason: 'VM creation needs an approval.' },
  },
};

let stack: Stack;
let browser: Browser;
let agent: Client;
let state: string;

async function signInOnPage(page: Page, user: string): Promise<void> {
  await page.waitForURL(/\/dev-idp\/login/);
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Groups (optional, comma-separated)').fill('ops');
  await page.getByRole('button', { name: 'Sign in' }).click();
}

beforeAll(async () => {
  state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-admin-'));
  [stack, browser] = await Promise.all([
    startStack({
      // Free ports picked by startStack (and picked again on a clash); state of its own.
      port: 0,
      inspectorPort: 0,
      simPort: 0,
      vars: {
        AUTH_MODE: 'oauth',
        IDP: 'dev',
        ALLOWED_GROUPS: 'ops',
        ADMIN_USERS: 'admin@example.com',
        POLICY: JSON.stringify(POLICY),
      },
      stdio: 'ignore',
      persistTo: state,
    }),
    launchChromium(),
  ]);
  agent = await devSignedInClient(stack.url, 'agent-user@example.com', 'ops');
}, 90_000);

afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await browser?.close();
  await stack?.stop();
  rmSync(state, { recursive: true, force: true });
});

describe('the admin page in headless Chromium', () => {
  it('lets an admin approve a waiting call, and then shows it in the audit list', async () => {
    const args = { node: 'pve1', name: 'needs-ok', memory: 1024, confirm: true };
    const pending = await agent.callTool({ name: 'pve_create_qemu_vm', arguments: args });
    const approvalId = (pending.structuredContent as { approval_id: string }).approval_id;
    expect(approvalId).toBeTruthy();

    const page = await (
      await browser.newContext({ viewport: { width: 390, height: 844 } })
    ).newPage(); // a phone
    await page.goto(`${stack.url}/admin`);
    await signInOnPage(page, 'admin@example.com');
    await page.waitForURL(/\/admin$/);
    await expect(page.locator('h2#approvals').innerText()).resolves.toBe('Pending approvals (1)');
    await page
      .getByRole('button', { name: 'Approve pve_create_qemu_vm for agent-user@example.com' })
      .click();
    await page.waitForURL(/\/admin#approvals$/);
    await expect(page.locator('h2#approvals').innerText()).resolves.toBe('Pending approvals (0)');

    const done = await agent.callTool({
      name: 'pve_create_qemu_vm',
      arguments: { ...args, approval_id: approvalId },
    });
    expect(done.isError).toBeFalsy();
    const vmid = (done.structuredContent as { vmid: number }).vmid;

    // The record is written just after the answer: reload until it is listed.
    let row = '';
    for (let i = 0; i < 20 && !row.includes(String(vmid)); i++) {
      await page.goto(`${stack.url}/admin?tool=pve_create_qemu_vm&decision=allow`);
      row = await page.locator('#calls ~ div table tbody tr').first().innerText();
    }
    expect(row).toContain('agent-user@example.com');
    expect(row).toContain('pve_create_qemu_vm');
    expect(row).toContain('ok');
    expect(row).toContain(String(vmid));
    await page.context().close();
  }, 60_000);

  it('refuses /admin to a signed-in user who is not an admin', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${stack.url}/admin`);
    await signInOnPage(page, 'bob@example.com');
    await page.waitForURL(/\/admin$/);
    await expect(page.locator('h1').innerText()).resolves.toBe('Administrators only');
    const again = await page.context().request.get(`${stack.url}/admin`, { maxRedirects: 0 });
    expect(again.status()).toBe(403);
    await page.context().close();
  }, 60_000);
});
