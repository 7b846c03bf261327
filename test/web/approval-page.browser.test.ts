// The approval page in headless Debian Chromium, at a laptop's 1280×800 and a phone's 390×844, on
// the longest page there is: a rollback of the HA-managed, replicated file server (VM 120, every
// blast radius fact and a backup warning) that two people must approve. Approve and Deny, with
// the quorum state, are in view before any scrolling and stay there; the hint beside each value
// says something about that value; values and ids break only where a word ends, unless a word is
// wider than its box. The first approval counts 1 of 2, and the page says so where it decides.

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

// The DOM as the function evaluated inside the page sees it (the Node project has no DOM types).
interface DomRect {
  top: number;
  width: number;
}
interface DomNode {
  nodeType: number;
  textContent: string | null;
  parentElement: DomElement | null;
}
interface DomElement {
  clientWidth: number;
  closest(selector: string): DomElement | null;
}
declare const document: {
  querySelectorAll(selector: string): Iterable<DomElement>;
  createTreeWalker(root: DomElement, what: number): { nextNode(): DomNode | null };
  createRange(): {
    setStart(node: DomNode, at: number): void;
    setEnd(node: DomNode, at: number): void;
    getClientRects(): Iterable<DomRect>;
    getBoundingClientRect(): DomRect;
  };
};

const BUNDLED = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../policy.json'), 'utf8'),
) as { tools: Record<string, object> };
const POLICY = {
  ...BUNDLED,
  tools: {
    ...BUNDLED.tools,
    pve_rollback_snapshot: { ...BUNDLED.tools.pve_rollback_snapshot, approvals_required: 2 },
  },
};
const ROLLBACK = { node: 'pve2', vmid: 120, snapname: 'before_samba_update', confirm: true };
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];

let stack: Stack;
let browser: Browser;
let agent: Client;
let state: string;
let approvalUrl: string;

async function approverPage(user: string, size: { width: number; height: number }): Promise<Page> {
  const page = await (await browser.newContext({ viewport: size })).newPage();
  await page.goto(approvalUrl);
  await signInOnPage(page, user);
  await page.waitForURL(approvalUrl);
  return page;
}

/** Whether a box lies wholly inside the window as it is now (nothing scrolled into view). */
async function inView(page: Page, name: string, size: { height: number }): Promise<boolean> {
  const box = (await page.getByRole('button', { name, exact: true }).boundingBox())!;
  return box.y >= 0 && box.y + box.height <= size.height;
}

/**
 * Each word (a run without spaces) in the page's values, ids, dates and table cells that a line
 * break splits between two letters or digits ("sta|rted", "ce|ph-pool"), although the word is
 * narrower than the box it is in: a break where the word had room and no sensible point. (A break
 * after "-", "/", ":" or "_" is one a reader expects in an id or a path.)
 */
function brokenWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const broken: string[] = [];
    for (const box of document.querySelectorAll('main code, main .uri, main td, main small')) {
      const walker = document.createTreeWalker(box, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (const m of text.matchAll(/\S+/g)) {
          const range = document.createRange();
          const top = (i: number): number => {
            range.setStart(node, m.index! + i);
            range.setEnd(node, m.index! + i + 1);
            return Math.round(range.getBoundingClientRect().top);
          };
          range.setStart(node, m.index!);
          range.setEnd(node, m.index! + m[0].length);
          const width = [...range.getClientRects()].reduce((w, r) => w + r.width, 0);
          const room = node.parentElement?.closest('td, p, li, div, pre, dd')?.clientWidth ?? 0;
          if (width >= room) continue;
          for (let i = 1; i < m[0].length; i++) {
            if (top(i) !== top(i - 1) && /[\p{L}\p{N}]{2}/u.test(m[0].slice(i - 1, i + 1)))
              broken.push(
                `${m[0].slice(0, i)}|${m[0].slice(i)} (${Math.round(width)} of ${room} px)`,
              );
          }
        }
      }
    }
    return [...new Set(broken)];
  });
}

beforeAll(async () => {
  state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-approval-page-'));
  [stack, browser] = await Promise.all([
    startStack({
      port: 0,
      inspectorPort: 0,
      simPort: 0,
      vars: {
        AUTH_MODE: 'oauth',
        IDP: 'dev',
        ALLOWED_GROUPS: 'ops',
        ADMIN_USERS: 'lead-one@example.com,lead-two@example.com',
        POLICY: JSON.stringify(POLICY),
      },
      stdio: 'ignore',
      persistTo: state,
    }),
    launchChromium(),
  ]);
  agent = await devSignedInClient(stack.url, 'agent-user@example.com', 'ops');
  const asked = await agent.callTool({ name: 'pve_rollback_snapshot', arguments: ROLLBACK });
  approvalUrl = (asked.structuredContent as { approval_url: string }).approval_url;
  expect(approvalUrl, JSON.stringify(asked)).toMatch(/\/approvals\/[\w-]+$/);
}, 90_000);

afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await browser?.close();
  await stack?.stop();
  rmSync(state, { recursive: true, force: true });
});

describe.skipIf(!BROWSER)('the approval page in headless Chromium', () => {
  it.each(SIZES)(
    'keeps Approve, Deny and the quorum in view at $width×$height',
    async (size) => {
      const page = await approverPage('lead-one@example.com', size);
      // The long page it is: every fact of the blast radius, a warning, the arguments.
      await expect(page.locator('#blast-radius tr').count()).resolves.toBeGreaterThanOrEqual(10);
      await expect(page.locator('#warnings').innerText()).resolves.toMatch(/newest backup/i);
      const height = await page.evaluate(
        () =>
          (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } })
            .document.documentElement.scrollHeight,
      );
      expect(height).toBeGreaterThan(size.height);
      expect(await inView(page, 'Approve', size)).toBe(true);
      expect(await inView(page, 'Deny', size)).toBe(true);
      const quorum = page.locator('#decision-quorum');
      await expect(quorum.innerText()).resolves.toBe('Approvals: 0 of 2');
      const q = (await quorum.boundingBox())!;
      expect(q.y >= 0 && q.y + q.height <= size.height).toBe(true);
      // Scrolled to the middle, the decision is still there.
      await page.mouse.wheel(0, Math.round(height / 2));
      await page.waitForFunction(() => (globalThis as unknown as { scrollY: number }).scrollY > 0);
      expect(await inView(page, 'Approve', size)).toBe(true);
      // Each value's hint is about that value: no "lxc: a container." beside vm_type qemu.
      await expect(page.locator('#arguments').innerText()).resolves.not.toMatch(/container/);
      expect(await brokenWords(page)).toEqual([]);
      await page.context().close();
    },
    60_000,
  );

  it('counts the first approval as 1 of 2, by whom, where the page decides', async () => {
    const page = await approverPage('lead-one@example.com', SIZES[1]!);
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.waitForLoadState();
    const second = await approverPage('lead-two@example.com', SIZES[1]!);
    await expect(second.locator('#decision-quorum').innerText()).resolves.toBe(
      'Approvals: 1 of 2 — by lead-one@example.com',
    );
    expect(await inView(second, 'Approve', SIZES[1]!)).toBe(true);
    await page.context().close();
    await second.context().close();
  }, 60_000);

  it('breaks no date or id on /admin inside a word that had room', async () => {
    for (const size of SIZES) {
      const page = await (await browser.newContext({ viewport: size })).newPage();
      await page.goto(`${stack.url}/admin`);
      await signInOnPage(page, 'lead-one@example.com');
      await page.waitForURL(/\/admin$/);
      expect(await brokenWords(page), `${size.width} px`).toEqual([]);
      await page.context().close();
    }
  }, 60_000);
});
