// /admin/activity in headless Debian Chromium, after seeded traffic from a signed-in agent:
// calls allowed, denied by a rule, rate-limited, and asking a person (one approval given on its
// page and spent, one refused, one left to expire: approvals last a minute here, so the test
// waits for it). At 1280×800 and at 390×844 each chart shows the seeded numbers (read from the
// SVG's text, the bars' heights and the page's words), its labels inside the chart, nothing
// scrolls sideways on the phone, and a screenshot of each is saved (test-results/).
// /admin/metrics.json gives the same figures to an administrator (signed in, or a token with a
// policy scope), and nothing to an MCP client's token, another person or anyone else.

import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BROWSER } from '../support/browser/launch.ts';
import { signInOnPage } from '../support/browser/sign-in.ts';
import { browserStack } from '../support/browser/stack.ts';
import { devAccessToken } from '../support/oauth-node.ts';

declare const document: {
  documentElement: { scrollWidth: number };
  querySelectorAll(s: string): { getAttribute(a: string): string | null }[];
};

const POLICY = {
  version: '1',
  default: 'allow',
  tools: {
    pve_get_vm_status: { deny_if: [{ path: 'args.vmid', op: 'eq', value: 101 }] },
    pve_list_nodes: {
      limits: [{ counter: 'node_lists', window: 'hour', max: 1, scope: 'user' }],
    },
    pve_shutdown_vm: { action: 'require_approval', reason: 'Shutdowns need a person.' },
  },
};
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];
const SHOTS = path.resolve(import.meta.dirname, '../../test-results');

const server = browserStack(
  { ADMIN_USERS: 'admin@example.com', POLICY: JSON.stringify(POLICY), APPROVAL_TTL_MINUTES: '1' },
  'agent@example.com',
);

interface Metrics {
  calls: { day: { counts: Record<string, number> }[] };
  refusing: { tools: { name: string; count: number }[]; rules: { name: string; count: number }[] };
  approvals: { week: { asked: number; given: number; refused: number; expired: number } };
  limits: { key: string; count: number; max: number }[];
  latency: { upstream_calls: number }[];
}

/** An administrator's page at this size (a context of its own: its own cookies). */
async function adminPage(size: { width: number; height: number }, at: string): Promise<Page> {
  const page = await (await server.browser.newContext({ viewport: size })).newPage();
  await page.goto(`${server.stack.url}${at}`);
  await signInOnPage(page, 'admin@example.com');
  await page.waitForURL(new RegExp(`${at.replace(/[.?]/g, '\\$&')}$`));
  return page;
}

/** Decides an approval on its own page. */
async function decide(id: string, button: 'Approve' | 'Deny'): Promise<void> {
  const page = await adminPage(SIZES[0]!, `/approvals/${id}`);
  await page.getByRole('button', { name: button, exact: true }).click();
  await page.waitForLoadState();
  await page.context().close();
}

const call = (name: string, args: Record<string, unknown>) =>
  server.agent.callTool({ name, arguments: args });

describe.skipIf(!BROWSER)('the activity page in headless Chromium', () => {
  it('charts seeded traffic: allowed, denied, rate-limited, approved, refused and expired', async () => {
    // 13 calls: 6 allowed, 2 denied, 2 rate-limited, 3 asking a person (one left to expire).
    const asked = Date.now();
    const ask = async (vmid: number) =>
      (
        (await call('pve_shutdown_vm', { node: 'pve1', vmid, confirm: true }))
          .structuredContent as {
          approval_id: string;
        }
      ).approval_id;
    expect(await ask(102)).toBeTruthy();
    for (let i = 0; i < 3; i++) expect((await call('pve_list_vms', {})).isError).toBeFalsy();
    expect((await call('pve_get_vm_status', { node: 'pve1', vmid: 100 })).isError).toBeFalsy();
    for (let i = 0; i < 2; i++)
      expect((await call('pve_get_vm_status', { node: 'pve1', vmid: 101 })).isError).toBe(true);
    for (let i = 0; i < 3; i++) await call('pve_list_nodes', {});
    const given = await ask(100);
    const refused = await ask(101);
    await decide(given, 'Approve');
    await decide(refused, 'Deny');
    const done = await call('pve_shutdown_vm', {
      node: 'pve1',
      vmid: 100,
      confirm: true,
      approval_id: given,
    });
    expect(done.isError).toBeFalsy();
    // The first approval, asked a minute ago, runs out.
    await new Promise((r) => setTimeout(r, Math.max(0, asked + 61_000 - Date.now())));

    // The figures as JSON, once every record is written (just after each answer).
    const json = await adminPage(SIZES[0]!, '/admin/activity');
    let metrics: Metrics | undefined;
    for (let i = 0; i < 40; i++) {
      metrics = (await (
        await json.request.get(`${server.stack.url}/admin/metrics.json`)
      ).json()) as Metrics;
      const total = metrics.calls.day.reduce(
        (n, h) => n + Object.values(h.counts).reduce((a, b) => a + b, 0),
        0,
      );
      if (total >= 13) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const sum = (decision: string) =>
      metrics!.calls.day.reduce((n, h) => n + (h.counts[decision] ?? 0), 0);
    expect(['allow', 'deny', 'limited', 'approval_required'].map(sum)).toEqual([6, 2, 2, 3]);
    expect(metrics!.refusing.tools).toEqual([
      { name: 'pve_get_vm_status', count: 2 },
      { name: 'pve_list_nodes', count: 2 },
    ]);
    expect(metrics!.approvals.week).toMatchObject({ asked: 3, given: 1, refused: 1, expired: 1 });
    expect(metrics!.limits).toEqual([
      expect.objectContaining({ key: 'pve_list_nodes/node_lists', count: 1, max: 1 }),
    ]);
    expect(metrics!.latency.reduce((n, h) => n + h.upstream_calls, 0)).toBeGreaterThanOrEqual(6);
    await json.context().close();

    mkdirSync(SHOTS, { recursive: true });
    for (const size of SIZES) {
      const page = await adminPage(size, '/admin/activity');
      // Calls per hour: the bars' totals add up to the seeded calls, the legend says each kind.
      const day = page.locator('figure', { has: page.locator('svg#calls-day') });
      const totals = await day.locator('svg text.total').allTextContents();
      expect(totals.map(Number).reduce((a, b) => a + b, 0)).toBe(13);
      // Each bar as tall as its calls: the marks' heights add up to 13 of the axis's top.
      const ticks = await day.locator('svg text.tick').allTextContents();
      const top = Math.max(...ticks.filter((t) => /^\d+$/.test(t)).map(Number));
      const heights = await page.evaluate(() =>
        [...document.querySelectorAll('#calls-day rect.mark')].map((r) =>
          Number(r.getAttribute('height')),
        ),
      );
      expect(heights.reduce((a, b) => a + b, 0)).toBeCloseTo((13 / top) * 180, 1);
      // Every label inside the chart: none cut off at an edge.
      const chart = (await day.locator('svg#calls-day').boundingBox())!;
      for (const label of await day.locator('svg#calls-day text').all()) {
        const box = (await label.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(chart.x - 0.5);
        expect(box.y).toBeGreaterThanOrEqual(chart.y - 0.5);
        expect(box.x + box.width).toBeLessThanOrEqual(chart.x + chart.width + 0.5);
        expect(box.y + box.height).toBeLessThanOrEqual(chart.y + chart.height + 0.5);
      }
      const legend = (await day.locator('ul.legend').innerText()).replace(/\s+/g, ' ');
      for (const words of ['allowed 6', 'asked a person 3', 'rate-limited 2', 'denied 2'])
        expect(legend).toContain(words);
      // Axes: the y axis's ticks (0 and its top) and hours on the x axis.
      expect(ticks).toContain('0');
      expect(ticks).toContain('calls per hour');
      expect(ticks.some((t) => /^\d\d:00$/.test(t))).toBe(true);
      await expect(page.locator('svg#calls-week desc').textContent()).resolves.toContain(
        '13 calls: allowed 6, asked a person 3, rate-limited 2, denied 2, invalid 0.',
      );
      // What refuses most, with the counts written.
      await expect(page.locator('#refusing-tools').innerText()).resolves.toMatch(
        /pve_get_vm_status\s+2[\s\S]*pve_list_nodes\s+2/,
      );
      await expect(page.locator('#refusing-rules').innerText()).resolves.toMatch(
        /\/tools\/pve_get_vm_status\/deny_if\/0\s+2[\s\S]*\/tools\/pve_list_nodes\/limits\/0\s+2/,
      );
      // Approvals of the week: asked 3, one given, one refused, one expired.
      const week = (await page.locator('#approvals-week').innerText()).replace(/\s+/g, ' ');
      for (const words of ['asked 3', 'given 1', 'refused 1', 'expired 1', 'waiting 0'])
        expect(week).toContain(words);
      // The limit's counter against its max; Proxmox's latency for the latest hour.
      await expect(page.locator('#limit-counters').innerText()).resolves.toMatch(
        /1 \/ 1\s+per hour/,
      );
      await expect(page.locator('.latest').innerText()).resolves.toMatch(
        /^Latest hour \d\d:00 UTC: median \d+ ms, 95th percentile \d+ ms over \d+ calls\.$/,
      );
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        size.width,
      );
      const shot = path.join(SHOTS, `activity-${size.width}x${size.height}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      await page.context().close();
    }
  }, 180_000);

  it('gives the figures to administrators only', async () => {
    const url = `${server.stack.url}/admin/metrics.json`;
    const status = async (token?: string) =>
      (await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {})).status;
    const admin = (scope: string) =>
      devAccessToken(server.stack.url, 'admin@example.com', 'ops', scope);
    expect(await status(await admin('policy:read'))).toBe(200);
    // An MCP client's token, even an administrator's; another person's, with a policy scope;
    // nobody's.
    expect(await status(await admin('pve:read'))).toBe(403);
    expect(
      await status(
        await devAccessToken(server.stack.url, 'agent@example.com', 'ops', 'policy:read'),
      ),
    ).toBe(403);
    expect(await status()).toBe(403);
    // A person signed in on the pages who is no administrator.
    const page = await (await server.browser.newContext()).newPage();
    await page.goto(`${server.stack.url}/admin/activity`);
    await signInOnPage(page, 'agent@example.com');
    await page.waitForURL(/\/admin\/activity$/);
    expect((await page.request.get(url)).status()).toBe(403);
    await page.context().close();
  }, 60_000);
});
