// APPROVAL_WEBHOOKS parsing and the message formats (src/notify/): which receiver addresses are
// taken in production and in local development, and that a chat body carries what an agent (or
// Proxmox) wrote as text in every field the chat shows, never as a mention, a link or markup.

import { describe, expect, it } from 'vitest';
import {
  type ApprovalSnapshot,
  jsonBody,
  signature,
  slackBody,
  teamsBody,
} from '../../src/notify/event-formats';
import type { NotifyEvent } from '../../src/notify/targets';
import { notifyTargets } from '../../src/notify/targets';

const APPROVAL: ApprovalSnapshot = {
  id: 'a1',
  url: 'https://mcp.example.com/approvals/a1',
  tool: 'pve_set_vm_config',
  args: { node: 'pve1', description: '[Approve](https://evil.example) ``` *done* ```' },
  reason: 'Config changes need a person.',
  requester: 'ann@example.com',
  client_id: 'c',
  approvers: null,
  approvals_required: 1,
  approvals_given: [],
  expires_at: '2026-12-01T12:15:00Z',
  status: 'pending',
  decided_by: null,
};

const PRODUCTION = { localDevelopment: false };
const DEVELOPMENT = { localDevelopment: true };

describe('APPROVAL_WEBHOOKS', () => {
  const list = JSON.stringify([
    { url: 'https://hooks.example.com/a' },
    { name: 'local', url: 'http://127.0.0.1:9/x', format: 'slack' },
    { url: 'http://hooks.example.com/plain' },
    { url: 'https://user:pw@hooks.example.com/creds' },
    { name: 'local', url: 'https://hooks.example.com/dup' },
    { url: 'https://hooks.example.com/s', secret: 'short' },
    { url: 'https://hooks.example.com/e', events: ['approval.nope'] },
    { url: 'https://hooks.example.com/f', format: 'email' },
  ]);

  it('takes https receivers on public hosts and names each problem (production)', () => {
    const problems: string[] = [];
    const targets = notifyTargets(list, problems, PRODUCTION);
    // The loopback one refused, the second "local" is no longer a duplicate.
    expect(targets.map((t) => [t.name, t.url])).toEqual([
      ['webhook-1', 'https://hooks.example.com/a'],
      ['local', 'https://hooks.example.com/dup'],
    ]);
    expect(problems.map((p) => p.replace(/ is ignored:.*/, ''))).toEqual([
      'APPROVAL_WEBHOOKS[1]',
      'APPROVAL_WEBHOOKS[2]',
      'APPROVAL_WEBHOOKS[3]',
      'APPROVAL_WEBHOOKS[5]',
      'APPROVAL_WEBHOOKS[6]',
      'APPROVAL_WEBHOOKS[7]',
    ]);
    expect(problems[0]).toMatch(/127\.0\.0\.1 is a loopback address.*local development/);
    expect(notifyTargets('{not json', problems, PRODUCTION)).toEqual([]);
  });

  it('takes a loopback receiver in local development (IDP=dev, AUTH_MODE=none)', () => {
    const problems: string[] = [];
    const targets = notifyTargets(list, problems, DEVELOPMENT);
    expect(targets.map((t) => [t.name, t.format])).toEqual([
      ['webhook-1', 'json'],
      ['local', 'slack'],
    ]);
    expect(problems.map((p) => p.replace(/ is ignored:.*/, ''))).toEqual([
      'APPROVAL_WEBHOOKS[2]',
      'APPROVAL_WEBHOOKS[3]',
      'APPROVAL_WEBHOOKS[4]',
      'APPROVAL_WEBHOOKS[5]',
      'APPROVAL_WEBHOOKS[6]',
      'APPROVAL_WEBHOOKS[7]',
    ]);
  });

  /** What each verdict's problem says (ok: taken, no problem). */
  const SAYS = {
    ok: null,
    https: 'https only',
    credentials: 'no user name or password',
    invalid: 'not a URL',
    loopback: 'is a loopback address',
    private: 'is on a private network',
    linkLocal: 'is a link-local address',
    metadata: 'is a cloud metadata address',
    notPublic: 'is not a public',
    optIn: 'private_network: true or false',
  } as const;
  type Verdict = keyof typeof SAYS;
  const OPT_IN = { private_network: true };

  // [url, extra receiver fields, verdict in production, verdict in local development]
  it.each<[string, Record<string, unknown>, Verdict, Verdict]>([
    ['https://hooks.slack.com/services/T0/B0/xyz', {}, 'ok', 'ok'],
    ['https://8.8.8.8/hook', {}, 'ok', 'ok'],
    ['https://172.32.0.1/hook', {}, 'ok', 'ok'],
    ['https://[2606:4700:4700::1111]/hook', {}, 'ok', 'ok'],
    ['http://hooks.example.com/plain', {}, 'https', 'https'],
    ['ftp://hooks.example.com/x', {}, 'https', 'https'],
    ['https://user:pw@hooks.example.com/creds', {}, 'credentials', 'credentials'],
    ['not a url', {}, 'invalid', 'invalid'],
    ['http://127.0.0.1:9/x', {}, 'loopback', 'ok'],
    ['https://127.8.9.10/x', {}, 'loopback', 'ok'],
    ['http://localhost:8787/x', {}, 'loopback', 'ok'],
    ['http://LOCALHOST./x', {}, 'loopback', 'ok'],
    ['http://app.localhost/x', {}, 'loopback', 'ok'],
    ['http://[::1]:9/x', {}, 'loopback', 'ok'],
    ['http://[0:0:0:0:0:0:0:1]/x', {}, 'loopback', 'ok'],
    ['http://2130706433/x', {}, 'loopback', 'ok'],
    ['http://0x7f.1/x', {}, 'loopback', 'ok'],
    ['http://017700000001/x', {}, 'loopback', 'ok'],
    ['http://[::ffff:127.0.0.1]/x', {}, 'loopback', 'ok'],
    // The opt-in is for a private network, not for this machine.
    ['http://127.0.0.1:9/x', OPT_IN, 'loopback', 'ok'],
    ['https://10.0.0.5/hook', {}, 'private', 'private'],
    ['https://10.0.0.5/hook', OPT_IN, 'ok', 'ok'],
    ['http://10.0.0.5/hook', OPT_IN, 'https', 'https'],
    ['https://10.0.0.5/hook', { private_network: 'yes' }, 'optIn', 'optIn'],
    ['https://172.16.3.4/hook', {}, 'private', 'private'],
    ['https://172.31.255.255/hook', OPT_IN, 'ok', 'ok'],
    ['https://192.168.1.10/hook', {}, 'private', 'private'],
    ['https://100.64.0.1/hook', {}, 'private', 'private'],
    ['https://100.127.255.254/hook', OPT_IN, 'ok', 'ok'],
    ['https://[fd12:3456::1]/hook', {}, 'private', 'private'],
    ['https://[fd12:3456::1]/hook', OPT_IN, 'ok', 'ok'],
    ['https://[::ffff:192.168.1.1]/hook', {}, 'private', 'private'],
    ['https://[::ffff:c0a8:101]/hook', OPT_IN, 'ok', 'ok'],
    ['https://hooks.internal/x', {}, 'private', 'private'],
    ['https://hooks.corp/x', OPT_IN, 'ok', 'ok'],
    ['https://relay/x', {}, 'private', 'private'],
    ['https://169.254.10.1/hook', {}, 'linkLocal', 'linkLocal'],
    ['https://169.254.10.1/hook', OPT_IN, 'ok', 'ok'],
    ['https://[fe80::1]/hook', {}, 'linkLocal', 'linkLocal'],
    ['https://[fe80::1]/hook', OPT_IN, 'ok', 'ok'],
    // Cloud metadata (instance credentials): never, whatever the receiver says.
    ['http://169.254.169.254/latest/meta-data/', {}, 'metadata', 'metadata'],
    ['https://169.254.169.254/latest/meta-data/', OPT_IN, 'metadata', 'metadata'],
    ['https://0251.0376.0251.0376/', OPT_IN, 'metadata', 'metadata'],
    ['https://2852039166/', OPT_IN, 'metadata', 'metadata'],
    ['https://[::ffff:169.254.169.254]/', OPT_IN, 'metadata', 'metadata'],
    ['https://[fd00:ec2::254]/', OPT_IN, 'metadata', 'metadata'],
    ['https://169.254.170.2/v2/credentials', OPT_IN, 'metadata', 'metadata'],
    ['https://100.100.100.200/latest/meta-data/', OPT_IN, 'metadata', 'metadata'],
    ['https://metadata.google.internal/computeMetadata/v1/', OPT_IN, 'metadata', 'metadata'],
    ['https://METADATA.google.internal./computeMetadata/v1/', OPT_IN, 'metadata', 'metadata'],
    ['https://metadata/computeMetadata/v1/', OPT_IN, 'metadata', 'metadata'],
    // Nothing a receiver can be on: refused in every mode, opt-in or not.
    ['http://0.0.0.0:9/x', OPT_IN, 'notPublic', 'notPublic'],
    ['https://192.0.2.1/x', OPT_IN, 'notPublic', 'notPublic'],
    ['https://224.0.0.1/x', OPT_IN, 'notPublic', 'notPublic'],
    ['https://[64:ff9b::a9fe:a9fe]/x', OPT_IN, 'notPublic', 'notPublic'],
    ['https://hooks.example/x', OPT_IN, 'notPublic', 'notPublic'],
  ])('%s %j: %s in production, %s in local development', (url, extra, production, development) => {
    for (const [rules, verdict] of [
      [PRODUCTION, production],
      [DEVELOPMENT, development],
    ] as const) {
      const problems: string[] = [];
      const targets = notifyTargets(
        JSON.stringify([{ name: 'r', url, ...extra }]),
        problems,
        rules,
      );
      const says = SAYS[verdict];
      if (says === null) {
        expect(problems, JSON.stringify(rules)).toEqual([]);
        expect(targets).toEqual([
          expect.objectContaining({
            name: 'r',
            url,
            privateNetwork: extra.private_network === true,
          }),
        ]);
      } else {
        expect(targets, JSON.stringify(rules)).toEqual([]);
        expect(problems).toHaveLength(1);
        expect(problems[0], JSON.stringify(rules)).toContain(says);
      }
      // A receiver's address can be its credential: a problem names the host, never the path.
      for (const p of problems) expect(p).not.toMatch(/services\/|meta-data|\/hook|\/x\b/);
    }
  });
});

/** Markup, mentions and links of Slack and Teams, as an agent could write them anywhere. */
const MARKUP = [
  '<!channel> <!here> <!everyone> <@U123> <#C1> <!subteam^S1>',
  '<https://evil.example|Approve> <https://evil.example> [Approve](https://evil.example)',
  '*bold* **strong** _it_ __under__ ~gone~ ~~gone~~ `code` ```pre```',
  '＊fw＊ ＿fw＿ ｀fw｀ &lt;!here&gt; &amp; <at>Ann</at>',
].join(' ');
const hostile = (field: string): string => `${field}-${MARKUP}\n> quoted\n＞ quoted`;

/** Every field an agent or Proxmox fills, filled with markup. */
const HOSTILE: ApprovalSnapshot = {
  ...APPROVAL,
  tool: 'pve_stop_vm',
  args: {
    node: hostile('node'),
    vmid: 100,
    [hostile('key')]: hostile('value'),
    nested: { deep: hostile('nested') },
  },
  reason: hostile('reason'),
  requester: hostile('requester'),
  client_id: hostile('client'),
  approvers: [hostile('approver')],
  approvals_required: 2,
  approvals_given: [{ by: hostile('given'), at: '2026-12-01T12:01:00Z' }],
  status: 'approved',
  decided_by: hostile('decider'),
  blast_radius: {
    guest: { node: 'pve1', vmid: 100, vm_type: 'qemu', name: hostile('guest') },
    read_at: '2026-12-01T12:00:00Z',
    status: hostile('status'),
    lock: hostile('lock'),
    tags: [hostile('tag')],
    snapshots: [hostile('snapshot')],
    pool: hostile('pool'),
    warnings: [hostile('warning')],
    unreadable: { ha: hostile('unreadable') },
  },
};

/** Keys whose values a chat client does not show as text: kinds, switches, addresses. */
const NOT_SHOWN = new Set([
  'type',
  'style',
  'url',
  '$schema',
  'contentType',
  'version',
  'weight',
  'fontType',
]);

/** Every string of a body a chat client shows, with where it is: the whole body, walked. */
function shownTexts(node: unknown, at = '$'): [string, string][] {
  if (typeof node === 'string') return [[at, node]];
  if (Array.isArray(node)) return node.flatMap((v, i) => shownTexts(v, `${at}[${i}]`));
  if (node && typeof node === 'object')
    return Object.entries(node).flatMap(([k, v]) =>
      NOT_SHOWN.has(k) ? [] : shownTexts(v, `${at}.${k}`),
    );
  return [];
}

/** Every object of a body, for checks on the text objects themselves. */
function objectsOf(node: unknown): Record<string, unknown>[] {
  if (Array.isArray(node)) return node.flatMap(objectsOf);
  if (node && typeof node === 'object')
    return [node as Record<string, unknown>, ...Object.values(node).flatMap(objectsOf)];
  return [];
}

/** What would format in Slack mrkdwn (a code block's own fences aside). */
function liveInSlack(text: string): string[] {
  const inner = /^```[\s\S]*```$/.test(text) ? text.slice(3, -3) : text;
  return [
    /[<>]/.test(inner) && 'a raw < or > (mention, link)',
    /&(?!amp;|lt;|gt;)/.test(inner) && 'a raw &',
    /[*_~`＊＿｀]/.test(inner) && 'a markup character',
    /^\s*(&gt;|＞)/m.test(inner) && 'a quote at the start of a line',
  ].filter((x): x is string => typeof x === 'string');
}

/** What would format in a Teams card (Adaptive Card markdown, links, mentions). */
function liveInTeams(text: string): string[] {
  return [
    /[<>]/.test(text) && 'a raw < or > (autolink, mention)',
    /[[\]]/.test(text) && 'link brackets',
    /[*_~`]/.test(text) && 'a markup character',
  ].filter((x): x is string => typeof x === 'string');
}

const EVENTS: NotifyEvent[] = ['approval.requested', 'approval.decided', 'approval.expired'];

describe('message formats', () => {
  it('names the cluster of a call to one of several, in the headline of every format', () => {
    const stop: ApprovalSnapshot = {
      ...APPROVAL,
      tool: 'pve_stop_vm',
      args: { node: 'pve2', vmid: 104, confirm: true, cluster: 'prod' },
    };
    const json = jsonBody('approval.requested', stop);
    expect(json.args).toMatchObject({ cluster: 'prod' });
    for (const body of [
      slackBody('approval.requested', stop),
      teamsBody('approval.requested', stop),
    ])
      expect(JSON.stringify(body)).toContain(
        'ann@example.com asks: Stop VM 104 on prod/pve2 (hard stop)?',
      );
  });

  it.each(EVENTS)(
    'Slack (%s): no field shows a live mention, link or markup from the agent',
    (event) => {
      const body = slackBody(event, HOSTILE);
      const texts = shownTexts(body);
      const live = texts.flatMap(([at, text]) =>
        liveInSlack(text).map((why) => `${at}: ${why}: ${JSON.stringify(text.slice(0, 80))}`),
      );
      expect(live).toEqual([]);
      // No automatic links, channel names or @-mentions from plain words either.
      for (const o of objectsOf(body).filter((o) => o.type === 'mrkdwn'))
        expect(o.verbatim, JSON.stringify(o).slice(0, 80)).toBe(true);
      // The text is there, shown as text (the requester in the headline, in every event).
      expect(texts.map(([, t]) => t).join('\n')).toContain('requester-&lt;!channel&gt;');
    },
  );

  it.each(EVENTS)(
    'Teams (%s): no field shows a live mention, link or markup from the agent',
    (event) => {
      const body = teamsBody(event, HOSTILE);
      const texts = shownTexts(body);
      const live = texts.flatMap(([at, text]) =>
        liveInTeams(text).map((why) => `${at}: ${why}: ${JSON.stringify(text.slice(0, 80))}`),
      );
      expect(live).toEqual([]);
      expect(texts.map(([, t]) => t).join('\n')).toContain('requester-');
    },
  );

  it('Slack and Teams show each field the agent and Proxmox fill in a request', () => {
    const slack = shownTexts(slackBody('approval.requested', HOSTILE))
      .map(([, t]) => t)
      .join('\n');
    const teams = shownTexts(teamsBody('approval.requested', HOSTILE))
      .map(([, t]) => t)
      .join('\n');
    for (const field of [
      'node',
      'key',
      'value',
      'nested',
      'reason',
      'requester',
      'guest',
      'warning',
      'status',
      'tag',
      'snapshot',
      'unreadable',
    ]) {
      expect(slack).toContain(`${field}-`);
      expect(teams).toContain(`${field}-`);
    }
  });

  it('JSON: carries what was written as data, unchanged (the receiver decides how to show it)', () => {
    const body = jsonBody('approval.requested', HOSTILE);
    expect(body.reason).toBe(HOSTILE.reason);
    expect(body.args).toEqual(HOSTILE.args);
    expect(body.requester).toBe(HOSTILE.requester);
  });

  it('Slack: the agent cannot close the code block, and a section stays under 3,000 characters', () => {
    const body = slackBody('approval.requested', APPROVAL) as {
      blocks: { text?: { text: string } }[];
    };
    const code = body.blocks.map((b) => b.text?.text ?? '').find((t) => t.startsWith('```'))!;
    expect(code).toContain('description: ');
    expect(code.slice(3, -3)).not.toContain('`');
    const huge = slackBody('approval.requested', {
      ...APPROVAL,
      args: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, '<'.repeat(199)])),
    }) as { blocks: { text?: { text: string } }[] };
    for (const b of huge.blocks) expect((b.text?.text ?? '').length).toBeLessThanOrEqual(3_000);
    // Cut where it must be, the cut never splits an entity into text that formats.
    for (const [, text] of shownTexts(huge)) expect(liveInSlack(text)).toEqual([]);
  });

  it('Teams: what the agent wrote is in text runs, which render no markdown', () => {
    const card = (
      teamsBody('approval.requested', APPROVAL) as {
        attachments: { content: { body: { type: string }[]; actions: { url: string }[] } }[];
      }
    ).attachments[0]!.content;
    for (const block of card.body.filter((b) => JSON.stringify(b).includes('evil.example')))
      expect(block.type).toBe('RichTextBlock');
    expect(card.actions[0]!.url).toBe(APPROVAL.url);
    const noUrl = (
      teamsBody('approval.expired', { ...APPROVAL, url: null }) as {
        attachments: { content: { actions: unknown[] } }[];
      }
    ).attachments[0]!.content;
    expect(noUrl.actions).toEqual([]);
  });

  it('signs with HMAC-SHA256 over the raw body', async () => {
    // RFC 4231 test case 2.
    expect(await signature('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });
});
