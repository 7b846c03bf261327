// The policy console (/admin/policy) in headless Debian Chromium, as an editor uses it: edit the
// policy, check it, replay it over the calls an agent made, activate it with a comment (the
// agent's next calls follow it), roll back to version 1 in one step; an invalid draft shows its
// problems and stores nothing; an administrator who is not an editor gets no buttons that change
// anything. Also at a phone's width.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startStack, type Stack } from '../../scripts/dev-stack.ts';
import { devSignedInClient } from '../support/oauth-node.ts';
import { BROWSER, launchChromium } from '../support/browser/launch.ts';
import { signInOnPage } from '../support/browser/sign-in.ts';

/** The page's document, as the code passed to page.evaluate sees it (Node has no DOM types). */
declare const document: { documentElement: { scrollWidth: number } };

const POLICY = {
  version: '1',
  default: 'deny',
  tools: { pve_list_vms: {}, pve_start_vm: {} },
};
const CLOSED = {
  version: '1',
  default: 'deny',
  tools: {
    pve_list_vms: { action: 'deny', reason: 'Listing is closed.' },
    pve_start_vm: {},
  },
};

let stack: Stack;
let browser: Browser;
let agent: Client;
let state: string;

async function openConsole(user: string, width = 1200): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width, height: 900 } })).newPage();
  await page.goto(`${stack.url}/admin/policy`);
  await signInOnPage(page, user);
  await page.waitForURL(/\/admin\/policy$/);
  return page;
}

/** Polls the agent's call until it is refused (or 6 s pass): every isolate follows within 5 s. */
async function listUntil(refused: boolean): Promise<boolean> {
  const started = Date.now();
  for (;;) {
    const r = await agent.callTool({ name: 'pve_list_vms', arguments: {} });
    if (Boolean(r.isError) === refused || Date.now() - started > 6_000) return Boolean(r.isError);
    await new Promise((res) => setTimeout(res, 200));
  }
}

beforeAll(async () => {
  state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-policy-console-'));
  [stack, browser] = await Promise.all([
    startStack({
      port: 0,
      inspectorPort: 0,
      simPort: 0,
      vars: {
        AUTH_MODE: 'oauth',
        IDP: 'dev',
        ALLOWED_GROUPS: 'ops',
        // The editor is an admin too (replay shows admins everyone's calls); solo edits only.
        ADMIN_USERS: 'admin@example.com,editor@example.com',
        POLICY_EDITORS: 'editor@example.com,solo@example.com',
        POLICY: JSON.stringify(POLICY),
      },
      stdio: 'ignore',
      persistTo: state,
    }),
    launchChromium(),
  ]);
  agent = await devSignedInClient(stack.url, 'agent@example.com', 'ops');
}, 90_000);

afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await browser?.close();
  await stack?.stop();
  rmSync(state, { recursive: true, force: true });
});

describe.skipIf(!BROWSER)('the policy console in headless Chromium', () => {
  it('edits, checks, replays, activates and rolls back the policy', async () => {
    for (let i = 0; i < 2; i++)
      expect((await agent.callTool({ name: 'pve_list_vms', arguments: {} })).isError).toBeFalsy();

    const page = await openConsole('editor@example.com');
    await expect(page.locator('#active-line').innerText()).resolves.toMatch(
      /active version 1 · deploy · .* · “first start”/,
    );

    // A rule no call of its tool can reach is valid, with a warning that says why.
    const aimless = {
      version: '1',
      default: 'allow',
      tools: {
        pve_list_vms: { deny_if: [{ path: 'target.tags', op: 'contains', value: 'prod' }] },
      },
    };
    await page.getByLabel('Draft policy (JSON)').fill(JSON.stringify(aimless, null, 2));
    await page.getByRole('button', { name: 'Check' }).click();
    await expect(page.locator('#draft-valid').innerText()).resolves.toBe(
      'The draft is valid. Warnings: /tools/pve_list_vms/deny_if/0: target.tags: pve_list_vms acts on no guest, so no target fact reaches it',
    );

    // Edit: listing closed. Check, then replay over the calls the agent made.
    await page.getByLabel('Draft policy (JSON)').fill(JSON.stringify(CLOSED, null, 2));
    await page.getByRole('button', { name: 'Check' }).click();
    await expect(page.locator('#draft-valid').innerText()).resolves.toMatch(/The draft is valid/);
    // The draft survives the round trip.
    expect(JSON.parse(await page.getByLabel('Draft policy (JSON)').inputValue())).toEqual(CLOSED);
    let summary = '';
    for (let i = 0; i < 20 && !/^2 of/.test(summary); i++) {
      await page.getByRole('button', { name: 'Replay' }).click();
      summary = await page.locator('#replay-summary').innerText();
    }
    expect(summary).toMatch(/^2 of \d+ recorded calls would be decided otherwise \(allow→deny 2\)/);
    const rows = await page.locator('#replay-changes tbody tr').allInnerTexts();
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toContain('agent@example.com');
      expect(row).toContain('pve_list_vms');
      expect(row).toMatch(/allow[\s\S]*deny[\s\S]*\/tools\/pve_list_vms\/action/);
    }

    // The check showed what activating would change: the new rule, against version 1.
    await expect(page.locator('#draft-changes .diff ins').first().innerText()).resolves.toContain(
      'Listing is closed.',
    );
    // Activating is the weighty action: set apart, not the default-looking button, and it asks.
    const activate = page.getByRole('button', { name: 'Save and activate' });
    await expect(activate.getAttribute('class')).resolves.toBe('danger');
    await expect(page.getByRole('button', { name: 'Check' }).getAttribute('class')).resolves.toBe(
      'primary',
    );
    await page.getByLabel('Comment (required to save)').fill('close listing for the freeze');
    const at = page.url();
    await activate.click();
    // Without the box ticked the browser does not send it (and the server would refuse it).
    await expect(
      page
        .locator('input[name=confirm_activate]')
        .evaluate((el) => (el as unknown as { matches(s: string): boolean }).matches(':invalid')),
    ).resolves.toBe(true);
    expect(page.url()).toBe(at);
    await expect(page.locator('#history tbody tr').count()).resolves.toBe(1);
    await page
      .getByLabel('Replace the active version 1 with this draft for every agent', { exact: false })
      .check();
    await activate.click();
    await page.waitForURL(/\/admin\/policy\?done=/);
    await expect(page.locator('#notice').innerText()).resolves.toBe('Version 2 active.');
    await expect(page.locator('#active-line').innerText()).resolves.toMatch(
      /active version 2 · editor@example.com · .* · “close listing for the freeze”/,
    );
    // Its diff against version 1 shows the new rule.
    await expect(page.locator('.diff ins').first().innerText()).resolves.toContain(
      'Listing is closed.',
    );
    expect(await listUntil(true)).toBe(true);

    // Roll back in one step, from version 1's page.
    await page.getByRole('link', { name: 'view, diff, activate' }).last().click();
    await page.waitForURL(/\/admin\/policy\/version\/1$/);
    await page.getByLabel('Comment').first().fill('freeze is over');
    await page.getByRole('button', { name: 'Activate version 1' }).click();
    await page.waitForURL(/\/admin\/policy\?done=/);
    await expect(page.locator('#notice').innerText()).resolves.toBe('Version 1 active.');
    await expect(page.locator('#active-line').innerText()).resolves.toMatch(/active version 1 /);
    expect(await listUntil(false)).toBe(false);
    const events = await page.locator('#events li').allInnerTexts();
    expect(events.slice(0, 2)).toEqual([
      expect.stringMatching(/editor@example.com · activate version 1 · “freeze is over”/),
      expect.stringMatching(
        /editor@example.com · activate version 2 · “close listing for the freeze”/,
      ),
    ]);
    await page.context().close();
  }, 90_000);

  it("replays an editor who is not an admin over that editor's own calls only, and says so", async () => {
    const page = await openConsole('solo@example.com');
    await page.getByLabel('Draft policy (JSON)').fill(JSON.stringify(CLOSED, null, 2));
    await page.getByRole('button', { name: 'Replay' }).click();
    await expect(page.locator('#replay-note').innerText()).resolves.toMatch(
      /^Only your own recorded calls/,
    );
    // The agent's calls are recorded (the admin's replay above decided them): none is shown.
    await expect(page.locator('#replay-summary').innerText()).resolves.toMatch(
      /^0 of 0 recorded calls of yours would be decided otherwise/,
    );
    expect(await page.locator('#replay-changes tbody tr').count()).toBe(0);
    expect(await page.content()).not.toContain('agent@example.com');
    await page.context().close();
  }, 60_000);

  it('shows an invalid draft its problems and stores nothing', async () => {
    const page = await openConsole('editor@example.com', 390); // a phone
    const before = await page.locator('#history tbody tr').count();
    await page
      .getByLabel('Draft policy (JSON)')
      .fill('{\n  "version": "1",\n  "default": "sometimes"\n}');
    await page.getByLabel('Comment (required to save)').fill('oops');
    await page.getByLabel(/with this draft for every agent/).check();
    await page.getByRole('button', { name: 'Save and activate' }).click();
    // Where the problem is: its line and column, and that line among its neighbours.
    const problems = page.locator('#draft-problems');
    await expect(problems.innerText()).resolves.toMatch(/Line 3, column 3: \/default: /);
    await expect(problems.locator('mark').innerText()).resolves.toBe(
      '3 |   "default": "sometimes"',
    );
    expect(await page.locator('#history tbody tr').count()).toBe(before);
    // A syntax error is placed too.
    await page
      .getByLabel('Draft policy (JSON)')
      .fill('{\n  "version": "1",\n  "default" "deny"\n}');
    await page.getByRole('button', { name: 'Check' }).click();
    await expect(problems.innerText()).resolves.toMatch(/Line 3, column 13: \/: not valid JSON/);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await page.context().close();
  }, 60_000);

  it('gives an administrator who is not an editor the view without the buttons that change it', async () => {
    const page = await openConsole('admin@example.com');
    await expect(page.locator('#active-line').innerText()).resolves.toMatch(/active version 1/);
    await expect(page.getByRole('button', { name: 'Replay' }).count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: 'Save and activate' }).count()).resolves.toBe(0);
    // The form itself is refused too.
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const res = await page.context().request.post(`${stack.url}/admin/policy/version/2/activate`, {
      form: { csrf, comment: 'not mine' },
      headers: { origin: stack.url },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    await page.context().close();
  }, 60_000);
});
