// What an approval event says, and how each receiver format says it: our JSON (signed with the
// receiver's secret), Slack Block Kit, a Teams Adaptive Card. Built from what the approval page
// shows: arguments as redacted for the audit trail, never a secret, a token or a password.
// Nearly every word in it is someone else's: the agent's arguments and names, the requester,
// guest names and facts from Proxmox. A chat format gets each of its texts through its one
// escaping helper (./chat-text.ts), so that none of it mentions (@channel), links
// ("Approve" to anywhere) or formats (a fake bold "approved") in any field a client shows. The
// JSON body carries the values as data; its receiver decides how to show them.
// Pure, but for the HMAC (WebCrypto).

import { approvalTitle } from '../core/approval-title';
import { hiddenFields } from '../audit/hidden-fields';
import type { BlastRadius } from '../proxmox/blast-radius';
import { blastRadiusRows } from '../proxmox/blast-radius-text';
import { clipEscaped, slackText, teamsText } from './chat-text';
import type { NotifyEvent, NotifyFormat } from './targets';

/** An approval as its events carry it. */
export interface ApprovalSnapshot {
  id: string;
  /** The approval page (null for an approval from before the server kept its address). */
  url: string | null;
  tool: string;
  /** As redacted for the audit trail and the approval page. */
  args: Record<string, unknown>;
  reason: string;
  requester: string;
  client_id: string;
  approvers: string[] | null;
  approvals_required: number;
  approvals_given: { by: string; at: string }[];
  expires_at: string;
  status: string;
  decided_by: string | null;
  /** What the call would hit, as read when it was asked. */
  blast_radius?: BlastRadius | null;
}

/** What travels on the queue: an event (fanned out to receivers), or one receiver's delivery. */
export type NotifyMessage =
  | { kind: 'event'; event: NotifyEvent; approval: ApprovalSnapshot; notify: string[] | null }
  | { kind: 'delivery'; event: NotifyEvent; approval: ApprovalSnapshot; target: string };

export function jsonBody(event: NotifyEvent, a: ApprovalSnapshot): Record<string, unknown> {
  return {
    type: event,
    id: a.id,
    url: a.url,
    tool: a.tool,
    args: a.args,
    hidden: hiddenFields(a.args),
    reason: a.reason,
    requester: a.requester,
    client_id: a.client_id,
    approvers: a.approvers,
    approvals_required: a.approvals_required,
    approvals_given: a.approvals_given,
    expires_at: a.expires_at,
    status: a.status,
    decided_by: a.decided_by,
    blast_radius: a.blast_radius ?? null,
  };
}

/** One line a person reads first, in every format. */
export function headline(event: NotifyEvent, a: ApprovalSnapshot): string {
  const what = approvalTitle(a.tool, a.args, a.blast_radius?.guest.name);
  switch (event) {
    case 'approval.requested':
      return `${a.requester} asks: ${what}?${a.approvals_required > 1 ? ` (${a.approvals_required} approvals needed)` : ''}`;
    case 'approval.decided':
      return `${what}, asked by ${a.requester}: ${a.status} by ${a.decided_by ?? 'someone'}`;
    case 'approval.expired':
      return `${what}, asked by ${a.requester}: expired without a decision`;
  }
}

/** Warnings, then the facts of what the call would hit, as lines (none for a decision or expiry). */
function radiusFacts(
  event: NotifyEvent,
  a: ApprovalSnapshot,
): { warnings: string[]; facts: string[] } {
  const b = a.blast_radius;
  if (!b || event !== 'approval.requested') return { warnings: [], facts: [] };
  // Ages as they were when the facts were read (the message is built moments later).
  const facts = blastRadiusRows(b, Date.parse(b.read_at)).map((r) => `${r.label}: ${r.value}`);
  return { warnings: b.warnings.map((w) => `Warning: ${w}`), facts };
}

/**
 * The arguments as lines, at most 20 of 200 characters: enough to judge, short enough to post;
 * then what they hide from the approver, and why.
 */
function argLines(args: Record<string, unknown>): string[] {
  const clip = (text: string): string => (text.length > 200 ? `${text.slice(0, 199)}…` : text);
  return [
    ...Object.entries(args)
      .slice(0, 20)
      .map(([k, v]) => `${k}: ${clip(typeof v === 'string' ? v : JSON.stringify(v))}`),
    ...hiddenFields(args)
      .slice(0, 10)
      .map((h) => clip(`Hidden from approvers: ${h.field} (${h.why})`)),
  ];
}

/** Slack refuses a section over 3,000 characters: the arguments' block stays well under. */
const SLACK_SECTION_MAX = 2_800;

/** Facts from Proxmox and arguments from the agent go in code blocks, set apart from our words. */
function slackCode(lines: string[]): Record<string, unknown> {
  // slackText leaves no backtick in the lines, so that nothing can close the block early.
  return {
    type: 'section',
    text: slackMrkdwn(lines.join('\n'), SLACK_SECTION_MAX - 6, '```'),
  };
}

export function slackBody(event: NotifyEvent, a: ApprovalSnapshot): Record<string, unknown> {
  const title = headline(event, a);
  const radius = radiusFacts(event, a);
  return {
    // The notification and the fallback: mrkdwn too, so escaped like every block.
    text: slackText(title),
    blocks: [
      // Slack cuts a header at 150 characters.
      { type: 'header', text: slackPlain(title, 150) },
      { type: 'section', text: slackMrkdwn(a.reason, SLACK_SECTION_MAX) },
      ...(radius.warnings.length ? [slackCode(radius.warnings)] : []),
      ...(radius.facts.length ? [slackCode(radius.facts)] : []),
      slackCode(argLines(a.args)),
      {
        type: 'context',
        elements: [
          slackMrkdwn(
            `Approvals ${a.approvals_given.length} of ${a.approvals_required} · expires ${a.expires_at}`,
            SLACK_SECTION_MAX,
          ),
        ],
      },
      ...(event === 'approval.requested' && a.url
        ? [
            {
              type: 'actions',
              elements: [
                {
                  type: 'button',
                  text: slackPlain('Open the approval', 75),
                  url: a.url,
                  style: 'primary',
                },
              ],
            },
          ]
        : []),
    ],
  };
}

export function teamsBody(event: NotifyEvent, a: ApprovalSnapshot): Record<string, unknown> {
  const radius = radiusFacts(event, a);
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          // What others wrote (the request, its arguments) goes in text runs, which render no
          // markdown (a TextBlock or a fact would, links included), and through teamsText all
          // the same: a client that rendered some would still find nothing to render.
          body: [
            plainText(headline(event, a), true),
            plainText(a.reason),
            ...radius.warnings.map((line) => plainText(line, true)),
            ...radius.facts.map((line) => plainText(line)),
            ...argLines(a.args).map((line) => plainText(line, false, true)),
            {
              type: 'FactSet',
              facts: [
                teamsFact('Approvals', `${a.approvals_given.length} of ${a.approvals_required}`),
                teamsFact('Expires', a.expires_at),
              ],
            },
          ],
          actions: a.url
            ? [{ type: 'Action.OpenUrl', title: teamsText('Open the approval'), url: a.url }]
            : [],
        },
      },
    ],
  };
}

export function bodyFor(
  format: NotifyFormat,
  event: NotifyEvent,
  a: ApprovalSnapshot,
): Record<string, unknown> {
  return format === 'slack'
    ? slackBody(event, a)
    : format === 'teams'
      ? teamsBody(event, a)
      : jsonBody(event, a);
}

/** `sha256=<hex>` of the raw body under the receiver's secret. */
export async function signature(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(body));
  return `sha256=${[...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** An Adaptive Card block of text shown as it is (a TextRun renders no markdown). */
function plainText(text: string, bold = false, monospace = false): Record<string, unknown> {
  return {
    type: 'RichTextBlock',
    inlines: [
      {
        type: 'TextRun',
        text: teamsText(text),
        ...(bold ? { weight: 'Bolder' } : {}),
        ...(monospace ? { fontType: 'Monospace' } : {}),
      },
    ],
  };
}

/** A fact of a FactSet: Teams renders markdown in both its title and its value. */
function teamsFact(title: string, value: string): Record<string, unknown> {
  return { title: teamsText(title), value: teamsText(value) };
}

/** A mrkdwn text object; `fence` wraps it (a code block). */
function slackMrkdwn(text: string, max: number, fence = ''): Record<string, unknown> {
  // verbatim: no automatic links for URLs, no channel names or @-mentions from plain words.
  return {
    type: 'mrkdwn',
    text: `${fence}${clipEscaped(slackText(text), max)}${fence}`,
    verbatim: true,
  };
}

/** A plain_text object: no mrkdwn, but Slack still reads &, < and > in it, and :emoji: codes. */
function slackPlain(text: string, max: number): Record<string, unknown> {
  return { type: 'plain_text', text: clipEscaped(slackText(text), max), emoji: false };
}
