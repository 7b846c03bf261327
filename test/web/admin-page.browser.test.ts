// The admin page in headless Debian Chromium, under the bundled policy (VM creation made to need
// an approval): an agent's call waits for approval; an admin signs in with the dev identity
// provider, approves it on /admin, the agent's retry goes through, and the call shows in the
// audit list with its guest and argument values. The page stays short (the policy folded),
// counters show their limits, revoking asks first and cancels what the grant waited for, and at
// 390 px nothing scrolls sideways. A signed-in non-admin gets 403.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startStack, type Stack } from '../../scripts/dev-stack.ts';
import { devSignedInClient } from '../support/oauth-node.ts';
import { BROWSER, launchChromium } from '../support/browser/launch.ts';
import { signInOnPage } from '../support/browser/sign-in.ts';

// The DOM as the functions evaluated inside the page see it (the Node project has no DOM types).
declare const document: { documentElement: { scrollWidth: number; scrollHeight: number } };
declare function getComputedStyle(el: unknown): { display: string; lineHeight: string };

/** The bundled policy (8.8 KiB of JSON, as a deployment has), VM creation made to need approval. */
const BUNDLED = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../policy.json'), 'utf8'),
) as { tools: Record<string, object> };
const POLICY = {
  ...BUNDLED,
  tools: {
    ...BUNDLED.tools,
    pve_create_qemu_vm: {
      ...BUNDLED.tools.pve_create_qemu_vm,
      action: 'require_approval',
      reason: 'VM creation needs an approval.',
    },
  },
};
/**
 * How tall /admin was at 1280 px before it folded the policy, measured with this test's data (the
 * calls and counters below), most of it the policy's JSON.
 */
const OLD_HEIGHT_PX = 9_377;

let stack: Stack;
let browser: Browser;
let agent: Client;
let state: string;
let vmid: number;

/** A signed-in administrator's page at this viewport (a new context: its own cookies). */
async function adminTab(width: number, height = 900): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width, height } })).newPage();
  await page.goto(`${stack.url}/admin`);
  await signInOnPage(page, 'admin@example.com');
  await page.waitForURL(/\/admin$/);
  return page;
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

describe.skipIf(!BROWSER)('the admin page in headless Chromium', () => {
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
    vmid = (done.structuredContent as { vmid: number }).vmid;

    // The record is written just after the answer: reload until it is listed.
    let row = '';
    for (let i = 0; i < 20 && !row.includes(String(vmid)); i++) {
      await page.goto(`${stack.url}/admin?tool=pve_create_qemu_vm&decision=allow`);
      row = await page.locator('table.calls tbody tr').first().innerText();
    }
    expect(row).toContain('agent-user@example.com');
    expect(row).toContain('pve_create_qemu_vm');
    expect(row).toContain('ok');
    expect(row).toContain(String(vmid));
    await page.context().close();
  }, 60_000);

  it('shows calls with their guest and argument values, counters with their max, the policy folded', async () => {
    const shutdown = await agent.callTool({
      name: 'pve_shutdown_vm',
      arguments: { node: 'pve2', vmid: 103, timeout: 30, confirm: true },
    });
    expect(shutdown.isError).toBeFalsy();
    const page = await adminTab(1280);
    const shutdownRow = page.locator('table.calls tbody tr', { hasText: 'pve_shutdown_vm' });
    for (let i = 0; i < 20 && (await shutdownRow.count()) === 0; i++) await page.reload();

    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    console.log(`/admin at 1280 px: ${height} px tall (was ${OLD_HEIGHT_PX} px)`);
    expect(height).toBeLessThan(OLD_HEIGHT_PX / 3);

    // The policy: one line saying where it comes from, valid, its fingerprint and size; folded.
    const policy = page.locator('details.policy');
    expect(await policy.evaluate((d) => (d as { open: boolean }).open)).toBe(false);
    await expect(policy.locator('summary').innerText()).resolves.toMatch(
      /^version 1 · valid · sha256 [0-9a-f]{12} · \d+\.\d KiB$/,
    );

    // The created VM: its node and id, and the values it was created with.
    const created = page.locator('table.calls tbody tr', { hasText: 'pve_create_qemu_vm' }).first();
    await expect(created.locator('td.guest').innerText()).resolves.toBe(`pve1 / ${vmid}`);
    const args = await created.locator('td.args').innerText();
    expect(args).toContain('name=needs-ok');
    expect(args).toContain('memory=1024');
    await expect(shutdownRow.first().locator('td.guest').innerText()).resolves.toBe('pve2 / 103');
    await expect(shutdownRow.first().locator('td.args').innerText()).resolves.toContain(
      'timeout=30',
    );
    // A tool name stays on one line.
    const tool = created.locator('td.tool code');
    const box = (await tool.boundingBox())!;
    const line = await tool.evaluate(
      (el) => Number.parseFloat(getComputedStyle(el).lineHeight) || 20,
    );
    expect(box.height).toBeLessThan(line * 1.5);

    // Counters: the count beside its limit's max and window.
    const counter = page.locator('#counters ~ div tbody tr', {
      hasText: 'pve_shutdown_vm/power_actions',
    });
    await expect(counter.locator('td', { hasText: ' per ' }).innerText()).resolves.toBe(
      '1 / 60 per hour',
    );
    await page.context().close();
  }, 60_000);

  it('asks before revoking a grant, then cancels the approvals it waited for', async () => {
    const leaver = await devSignedInClient(stack.url, 'leaver@example.com', 'ops');
    const asked = await leaver.callTool({
      name: 'pve_delete_vm',
      arguments: { node: 'pve1', vmid: 104, confirm: true },
    });
    expect((asked.structuredContent as { approval_id?: string }).approval_id).toBeTruthy();
    const page = await adminTab(1280);
    const approve = page.getByRole('button', {
      name: 'Approve pve_delete_vm for leaver@example.com',
    });
    await expect(approve.count()).resolves.toBe(1);

    await page.getByRole('button', { name: 'Revoke Node client for leaver@example.com…' }).click();
    await page.waitForURL(/\/admin\/grants\/revoke\?/);
    await expect(page.locator('h1').innerText()).resolves.toBe(
      'Revoke Node client for leaver@example.com?',
    );
    await expect(page.locator('.box').innerText()).resolves.toContain(
      '1 pending approval of it is cancelled',
    );
    // Nothing happened yet: the grant still works.
    const still = await leaver.callTool({ name: 'pve_list_vms', arguments: {} });
    expect(still.isError).toBeFalsy();

    await page.getByRole('button', { name: 'Revoke this grant' }).click();
    await page.waitForURL(/\/admin\?revoked=\d+&cancelled=1#grants$/);
    await expect(page.getByRole('status').innerText()).resolves.toContain(
      '1 pending approval cancelled',
    );
    await expect(approve.count()).resolves.toBe(0);
    await expect(leaver.callTool({ name: 'pve_list_vms', arguments: {} })).rejects.toThrow();
    await leaver.close().catch(() => undefined);
    await page.context().close();
  }, 60_000);

  it('fits a 390 px phone: no sideways scroll, the calls as cards', async () => {
    const page = await adminTab(390, 844);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    const thead = page.locator('table.calls thead');
    await expect(thead.evaluate((el) => getComputedStyle(el).display)).resolves.toBe('none');
    const card = page.locator('table.calls tbody tr').first();
    const cardBox = (await card.boundingBox())!;
    expect(cardBox.x + cardBox.width).toBeLessThanOrEqual(390);
    const tool = card.locator('td.tool code');
    const line = await tool.evaluate(
      (el) => Number.parseFloat(getComputedStyle(el).lineHeight) || 20,
    );
    expect((await tool.boundingBox())!.height).toBeLessThan(line * 1.5);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    console.log(`/admin at 390 px: ${width} px wide, ${height} px tall`);
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
