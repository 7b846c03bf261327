// APPROVAL_WEBHOOKS parsing and the message formats (src/notify/): what is refused, and that a
// receiver's body carries what an agent wrote as text, not as formatting, within Slack's limits.

import { describe, expect, it } from 'vitest';
import { type ApprovalSnapshot, slackBody, teamsBody, signature } from '../../src/notify/messages';
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

describe('APPROVAL_WEBHOOKS', () => {
  it('takes https receivers (http only on loopback) and names each problem', () => {
    const problems: string[] = [];
    const targets = notifyTargets(
      JSON.stringify([
        { url: 'https://hooks.example.com/a' },
        { name: 'local', url: 'http://127.0.0.1:9/x', format: 'slack' },
        { url: 'http://hooks.example.com/plain' },
        { url: 'https://user:pw@hooks.example.com/creds' },
        { name: 'local', url: 'https://hooks.example.com/dup' },
        { url: 'https://hooks.example.com/s', secret: 'short' },
        { url: 'https://hooks.example.com/e', events: ['approval.nope'] },
        { url: 'https://hooks.example.com/f', format: 'email' },
      ]),
      problems,
    );
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
    expect(notifyTargets('{not json', problems)).toEqual([]);
  });
});

describe('message formats', () => {
  it('Slack: the agent cannot close the code block, and a section stays under 3,000 characters', () => {
    const body = slackBody('approval.requested', APPROVAL) as {
      blocks: { text?: { text: string } }[];
    };
    const code = body.blocks[1]!.text!.text;
    expect(code.slice(3, -3)).not.toContain('`');
    const huge = slackBody('approval.requested', {
      ...APPROVAL,
      args: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, '<'.repeat(199)])),
    }) as { blocks: { text?: { text: string } }[] };
    for (const b of huge.blocks) expect((b.text?.text ?? '').length).toBeLessThanOrEqual(3_000);
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
