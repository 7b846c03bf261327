// /admin/activity in headless Debian Chromium, after seeded traffic from a signed-in agent:
// calls allowed, denied by a rule, rate-limited, and asking a person (one approval given on its
// page and spent, one refused). At 1280×800 and at 390×844 each chart shows the seeded numbers
// (read from the SVG's text and the page's words), the axes are labelled, nothing scrolls
// sideways on the phone, and a screenshot of each is saved (test-results/). /admin/metrics.json
// gives the same figures to the administrator, and nothing to anyone else.

import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BROWSER } from '../support/browser/launch.ts';
import { signInOnPage } from '../support/browser/sign-in.ts';
import { browserStack } from '../support/browser/stack.ts';

declare const document: { documentElement: { scrollWidth: number } };

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
  { ADMIN_USERS: 'admin@example.com', POLICY: JSON.stringify(POLICY) },
  'agent@example.com',
);

interface Metrics {
  calls: { day: { counts: Record<string, number> }[] };
  refusing: { tools: { name: string; count: number }[]; rules: { name: string; count: number }[] };
  approvals: { week: { asked: number; given: number; refused: number } };
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
  it('charts seeded traffic: allowed, denied, rate-limited, approved and refused', async () => {
    // 12 calls: 6 allowed, 2 denied, 2 rate-limited, 2 asking a person.
    for (let i = 0; i < 3; i++) expect((await call('pve_list_vms', {})).isError).toBeFalsy();
    expect((await call('pve_get_vm_status', { node: 'pve1', vmid: 100 })).isError).toBeFalsy();
    for (let i = 0; i < 2; i++)
      expect((await call('pve_get_vm_status', { node: 'pve1', vmid: 101 })).isError).toBe(true);
    for (let i = 0; i < 3; i++) await call('pve_list_nodes', {});
    const ask = async (vmid: number) =>
      (
        (await call('pve_shutdown_vm', { node: 'pve1', vmid, confirm: true }))
          .structuredContent as {
          approval_id: string;
        }
      ).approval_id;
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
      if (total >= 12) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const sum = (decision: string) =>
      metrics!.calls.day.reduce((n, h) => n + (h.counts[decision] ?? 0), 0);
    expect(['allow', 'deny', 'limited', 'approval_required'].map(sum)).toEqual([6, 2, 2, 2]);
    expect(metrics!.refusing.tools).toEqual([
      { name: 'pve_get_vm_status', count: 2 },
      { name: 'pve_list_nodes', count: 2 },
    ]);
    expect(metrics!.approvals.week).toMatchObject({ asked: 2, given: 1, refused: 1 });
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
      expect(totals.map(Number).reduce((a, b) => a + b, 0)).toBe(12);
      const legend = (await day.locator('ul.legend').innerText()).replace(/\s+/g, ' ');
      for (const words of ['allowed 6', 'asked a person 2', 'rate-limited 2', 'denied 2'])
        expect(legend).toContain(words);
      // Axes: the y axis's ticks (0 and its top) and hours on the x axis.
      const ticks = await day.locator('svg text.tick').allTextContents();
      expect(ticks).toContain('0');
      expect(ticks).toContain('calls per hour');
      expect(ticks.some((t) => /^\d\d:00$/.test(t))).toBe(true);
      await expect(page.locator('svg#calls-week desc').textContent()).resolves.toContain(
        '12 calls: allowed 6, asked a person 2, rate-limited 2, denied 2, invalid 0.',
      );
      // What refuses most, with the counts written.
      await expect(page.locator('#refusing-tools').innerText()).resolves.toMatch(
        /pve_get_vm_status\s+2[\s\S]*pve_list_nodes\s+2/,
      );
      await expect(page.locator('#refusing-rules').innerText()).resolves.toContain(
        '/tools/pve_get_vm_status/deny_if/0',
      );
      // Approvals of the week: asked 2, one given, one refused.
      const week = (await page.locator('#approvals-week').innerText()).replace(/\s+/g, ' ');
      for (const words of ['asked 2', 'given 1', 'refused 1', 'expired 0'])
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
  }, 120_000);

  it('gives the figures to administrators only', async () => {
    const res = await fetch(`${server.stack.url}/admin/metrics.json`);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: 'forbidden' });
  });
});
