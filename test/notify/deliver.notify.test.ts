// Approval notifications, delivered through the Worker's queue to a local HTTP receiver
// (test/support/setup/receivers.ts): a call needing approval returns at once and its signed
// approval.requested arrives within 5 s; a receiver answering 500 gets it again; one that never
// answers ends in the undelivered count (/health and /admin); Slack and Teams bodies have their
// formats; decisions and expiry are sent; no secret, token or password is in any body; a rule's
// `notify` narrows the receivers.

import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, inject, it, onTestFinished, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Approvals } from '../../src/approvals/approvals-store';
import type { AppEnv } from '../../src/env';
import { asEditor, Browser, connectSignedIn } from '../support/worker/oauth';
import { csrfOf, openAsDevUser } from '../support/form-browser';
import { workerFetch } from '../support/worker/mcp';
import { NOTIFY_SECRET } from '../support/notify-secret';
import type { Received } from '../support/setup/receivers';
import { NOTIFY_POLICY } from '../support/policies/notify';
import { usePolicy } from '../support/worker/policy';

usePolicy(NOTIFY_POLICY, asEditor());

const STOP = { node: 'pve1', vmid: 100, confirm: true };

async function received(): Promise<Received[]> {
  return (await (await fetch(`${inject('receiverUrl')}/_log`)).json()) as Received[];
}

/** Waits (up to `ms`) until `match` holds for what the receiver got. */
async function until(
  match: (log: Received[]) => boolean,
  ms = 5_000,
): Promise<{ log: Received[]; after: number }> {
  const started = Date.now();
  for (;;) {
    const log = await received();
    if (match(log)) return { log, after: Date.now() - started };
    if (Date.now() - started > ms)
      throw new Error(
        `receiver did not get it in ${ms} ms: ${JSON.stringify(log.map((r) => r.path))}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function hmacHex(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(body));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const of = (log: Received[], path: string, type?: string): Received[] =>
  log.filter(
    (r) => r.path === path && (type === undefined || r.headers['x-approval-event'] === type),
  );

/**
 * The approvals object's count of deliveries given up after every retry: to `target`, or to every
 * receiver (and the queue) together.
 */
async function undelivered(target?: string): Promise<number> {
  const ns = (env as unknown as AppEnv).APPROVALS as unknown as DurableObjectNamespace<Approvals>;
  const counts = await ns.get(ns.idFromName('approvals')).undelivered();
  return target === undefined
    ? Object.values(counts).reduce((a, b) => a + b, 0)
    : (counts[target] ?? 0);
}

/** Waits (up to `ms`) until `holds`. */
async function eventually(holds: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const started = Date.now();
  while (!(await holds())) {
    if (Date.now() - started > ms) throw new Error(`not so within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The Worker's console lines (the queue consumer's among them) for the rest of this test. */
function watchConsole(): { logs: string[] } {
  const logs: string[] = [];
  const spies = (['log', 'warn', 'error'] as const).map((level) =>
    vi
      .spyOn(console, level)
      .mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(' '))),
  );
  onTestFinished(() => {
    for (const spy of spies) spy.mockRestore();
  });
  return { logs };
}

let agent: Client;

beforeEach(async () => {
  await fetch(`${inject('receiverUrl')}/_reset`, { method: 'POST' });
  agent ??= (await connectSignedIn('http', { user: 'ann@example.com', groups: 'ops' })).client;
});

describe('approval notifications', () => {
  it('announces a request at once, signed, in each format, with nothing secret in it', async () => {
    const pending = await agent.callTool({ name: 'pve_stop_vm', arguments: STOP });
    const returnedAt = Date.now();
    expect(pending.isError).toBe(true);
    const { approval_id: id, approval_url: url } = pending.structuredContent as {
      approval_id: string;
      approval_url: string;
    };
    const { log, after } = await until((l) =>
      ['/json', '/slack', '/teams', '/flaky'].every((p) => of(l, p).length > 0),
    );
    expect(after).toBeLessThan(5_000);
    // The call did not wait for any receiver: every delivery came after its answer.
    const mine = log.filter((r) => r.body.includes(id));
    expect(mine.length).toBeGreaterThanOrEqual(4);
    for (const r of mine) expect(r.at).toBeGreaterThanOrEqual(returnedAt);
    // And the approvals object is woken at its expiry, to announce it.
    const ns = (env as unknown as AppEnv).APPROVALS as unknown as DurableObjectNamespace<Approvals>;
    const alarm = await runInDurableObject(ns.get(ns.idFromName('approvals')), (_o, state) =>
      state.storage.getAlarm(),
    );
    const expires = Date.parse(
      (JSON.parse(of(log, '/json')[0]!.body) as { expires_at: string }).expires_at,
    );
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(expires + 2_000);

    const [json] = of(log, '/json', 'approval.requested');
    expect(json!.headers['x-signature-256']).toBe(
      `sha256=${await hmacHex(NOTIFY_SECRET, json!.body)}`,
    );
    expect(JSON.parse(json!.body)).toEqual({
      type: 'approval.requested',
      id,
      url,
      tool: 'pve_stop_vm',
      args: expect.objectContaining({ node: 'pve1', vmid: 100, confirm: true }),
      // What the arguments hide from approvers (nothing, for a stop), with why.
      hidden: [],
      reason: 'Stopping a guest needs a person.',
      requester: 'ann@example.com',
      client_id: expect.any(String),
      approvers: null,
      approvals_required: 1,
      approvals_given: [],
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      status: 'pending',
      decided_by: null,
      // What the stop would hit, read from Proxmox when it was asked.
      blast_radius: expect.objectContaining({
        guest: { node: 'pve1', vmid: 100, vm_type: 'qemu', name: 'web01' },
        status: 'running',
        ha: { managed: false },
        replication: [],
        newest_backup: expect.objectContaining({ storage: 'pbs-backup', verified: 'ok' }),
        protection: false,
        pool: 'prod',
        tags: ['prod', 'web'],
        disks: [{ key: 'scsi0', volume: 'local-lvm:vm-100-disk-0', size: '32G' }],
        warnings: [],
        unreadable: {},
      }),
      sent_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      delivery: expect.any(String),
    });

    const slack = JSON.parse(of(log, '/slack')[0]!.body) as {
      text: string;
      blocks: { type: string; elements?: { type: string; url?: string }[] }[];
    };
    expect(slack.text).toBe('ann@example.com asks: Stop VM 100 (web01) on pve1 (hard stop)?');
    // The request as a plain-text header (nothing in it formats), the reason, what it would hit,
    // the arguments, the count and expiry, the button.
    expect(slack.blocks.map((b) => b.type)).toEqual([
      'header',
      'section',
      'section',
      'section',
      'context',
      'actions',
    ]);
    expect(slack.blocks[0]).toEqual({
      type: 'header',
      text: {
        type: 'plain_text',
        text: 'ann@example.com asks: Stop VM 100 (web01) on pve1 (hard stop)?',
        emoji: false,
      },
    });
    const facts = (slack.blocks[2] as unknown as { text: { text: string } }).text.text;
    expect(facts).toMatch(
      /^```State: running\nHA: not HA-managed\nReplication: none\nNewest backup: /,
    );
    expect(slack.blocks[5]!.elements![0]).toMatchObject({ type: 'button', url });
    expect(of(log, '/slack')[0]!.headers['x-signature-256']).toBeUndefined();

    const teams = JSON.parse(of(log, '/teams')[0]!.body) as {
      type: string;
      attachments: { contentType: string; content: Record<string, unknown> }[];
    };
    expect(teams.type).toBe('message');
    expect(teams.attachments[0]!.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(teams.attachments[0]!.content).toMatchObject({
      type: 'AdaptiveCard',
      version: '1.4',
      actions: [{ type: 'Action.OpenUrl', url }],
    });
    expect(JSON.stringify(teams)).toContain('{"type":"TextRun","text":"HA: not HA-managed"}');

    // No secret of this server in any body or header.
    const secrets = [NOTIFY_SECRET, (env as unknown as AppEnv).PVE_TOKEN_SECRET!];
    for (const r of log) for (const s of secrets) expect(JSON.stringify(r)).not.toContain(s);
  });

  it('keeps a password out of every format, and shows what the agent wrote as plain text', async () => {
    const PASSWORD = 'cl0ud-Pa55word-xyz';
    const LINK = '[Approve now](https://evil.example/approve) ```*approved*```';
    const pending = await agent.callTool({
      name: 'pve_set_vm_config',
      arguments: {
        node: 'pve1',
        vmid: 100,
        config: { cipassword: PASSWORD, description: LINK },
        confirm: true,
      },
    });
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    const mine = (l: Received[]) => l.filter((r) => r.body.includes(id));
    const { log } = await until((l) =>
      ['/json', '/slack', '/teams'].every((p) => of(mine(l), p).length > 0),
    );
    for (const r of mine(log)) {
      expect(r.body).not.toContain(PASSWORD);
      // Teams shows brackets as look-alikes (no [link](url) can form): ［redacted］.
      expect(r.body).toContain(r.path === '/teams' ? '\uff3bredacted\uff3d' : '[redacted]');
    }
    // Teams: the agent's text is in a text run (no markdown), never in a TextBlock or a fact.
    const card = JSON.parse(of(mine(log), '/teams')[0]!.body).attachments[0].content as {
      body: { type: string; inlines?: { type: string; text: string }[] }[];
    };
    const withLink = card.body.filter((b) => JSON.stringify(b).includes('evil.example'));
    expect(withLink.map((b) => [b.type, b.inlines?.[0]?.type])).toEqual([
      ['RichTextBlock', 'TextRun'],
    ]);
    // Slack: the agent's backticks cannot close the code block.
    const slack = JSON.parse(of(mine(log), '/slack')[0]!.body) as {
      blocks: { text?: { text: string } }[];
    };
    const code = slack.blocks
      .map((b) => b.text?.text ?? '')
      .find((t) => t.includes('evil.example'))!;
    expect(code.startsWith('```') && code.endsWith('```')).toBe(true);
    expect(code.slice(3, -3)).not.toContain('`');
  });

  it('sends it again to a receiver that answered 500, and counts the one that never answers as undelivered', async () => {
    // Watching first: a give-up logged from here on is one the count below may include.
    const watched = watchConsole();
    // A give-up logged just before the watch began has its count land within moments: let it.
    await new Promise((r) => setTimeout(r, 500));
    const before = await undelivered('hang');
    const pending = await agent.callTool({
      name: 'pve_stop_vm',
      arguments: { ...STOP, vmid: 101 },
    });
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    const mine = (l: Received[]) => of(l, '/flaky').filter((r) => r.body.includes(id));
    const { log } = await until((l) => mine(l).length >= 2, 10_000);
    expect(mine(log).map((r) => r.answered)).toEqual([500, 200]);
    const bodies = mine(log).map(
      (r) => JSON.parse(r.body) as { delivery: string; sent_at: string },
    );
    // The same delivery (its id), sent again later.
    expect(bodies[1]!.delivery).toBe(bodies[0]!.delivery);
    expect(Date.parse(bodies[1]!.sent_at)).toBeGreaterThan(Date.parse(bodies[0]!.sent_at));
    const hung = (l: Received[]) => of(l, '/hang').filter((r) => r.body.includes(id));
    // Four attempts of 0.5 s, 1 + 2 + 4 s apart, then given up: a `notification_undelivered`
    // line for this approval and one more in the receiver's undelivered count. The receiver
    // also gets the earlier tests' requests, which may be given up meanwhile: the count grows
    // by exactly the give-ups logged while this test watched.
    const gaveUp = (target: string, approval?: string) =>
      watched.logs
        .filter((l) => l.includes('"msg":"notification_undelivered"'))
        .map((l) => JSON.parse(l) as { target: string; approval: string; attempts: number })
        .filter((l) => l.target === target && (approval === undefined || l.approval === approval));
    await eventually(() => gaveUp('hang', id).length === 1, 15_000);
    expect(gaveUp('hang', id)).toEqual([
      expect.objectContaining({ target: 'hang', approval: id, attempts: 4 }),
    ]);
    await eventually(async () => (await undelivered('hang')) - before === gaveUp('hang').length);
    // /health shows the store's sum over every receiver (read between two equal sums).
    await eventually(async () => {
      const sum = await undelivered();
      const health = (await (await workerFetch('http://localhost/health')).json()) as {
        notifications?: { undelivered: number };
      };
      return health.notifications?.undelivered === sum && (await undelivered()) === sum;
    });
    // Four attempts, 1, 2 and 4 s apart (and no fifth).
    await new Promise((r) => setTimeout(r, 2_000));
    const attempts = hung(await received());
    expect(attempts).toHaveLength(4);
    const gaps = attempts.slice(1).map((r, i) => r.at - attempts[i]!.at);
    expect(gaps[0]!).toBeGreaterThanOrEqual(900);
    expect(gaps[1]!).toBeGreaterThanOrEqual(1_900);
    expect(gaps[2]!).toBeGreaterThanOrEqual(3_900);
  }, 30_000);

  it('announces the decision, by whom, and an expiry', async () => {
    const pending = await agent.callTool({
      name: 'pve_stop_vm',
      arguments: { ...STOP, vmid: 102 },
    });
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    const browser = new Browser();
    const opened = await openAsDevUser(
      browser,
      `http://localhost/approvals/${id}`,
      'admin@example.com',
      'ops',
    );
    await browser.post(`http://localhost/approvals/${id}`, {
      csrf: csrfOf(opened.html),
      decision: 'deny',
    });
    const { log } = await until((l) => of(l, '/json', 'approval.decided').length > 0);
    expect(JSON.parse(of(log, '/json', 'approval.decided')[0]!.body)).toMatchObject({
      type: 'approval.decided',
      id,
      status: 'denied',
      decided_by: 'admin@example.com',
    });

    // One that nobody decides: its time runs out, and the alarm announces it.
    const other = await agent.callTool({
      name: 'pve_stop_vm',
      arguments: { ...STOP, vmid: 103, node: 'pve2' },
    });
    const { approval_id: late } = other.structuredContent as { approval_id: string };
    const ns = (env as unknown as AppEnv).APPROVALS as unknown as DurableObjectNamespace<Approvals>;
    const stub = ns.get(ns.idFromName('approvals'));
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec(
        'UPDATE approvals SET expires_at = ? WHERE id = ?',
        Date.now() - 1,
        late,
      );
    });
    await runDurableObjectAlarm(stub);
    const expired = await until((l) => of(l, '/json', 'approval.expired').length > 0);
    expect(JSON.parse(of(expired.log, '/json', 'approval.expired')[0]!.body)).toMatchObject({
      type: 'approval.expired',
      id: late,
      status: 'pending',
    });
    // Announced once: the next alarm says nothing more about it.
    await runDurableObjectAlarm(stub);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(of(await received(), '/json', 'approval.expired')).toHaveLength(1);
  });

  it('sends a rule with `notify` to the receivers it names only', async () => {
    const pending = await agent.callTool({
      name: 'pve_delete_vm',
      arguments: { node: 'pve2', vmid: 104, confirm: true },
    });
    const { approval_id: id } = pending.structuredContent as { approval_id: string };
    const mine = (l: Received[]) => l.filter((r) => r.body.includes(id));
    const { log } = await until((l) => of(mine(l), '/json').length > 0);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(of(mine(log), '/json')[0]!.headers['x-approval-event']).toBe('approval.requested');
    expect(mine(await received()).map((r) => r.path)).toEqual(['/json']);
  });
});
