// What an approval event says, and how each receiver format says it: our JSON (signed with the
// receiver's secret), Slack Block Kit, a Teams Adaptive Card. Built from what the approval page
// shows: arguments as redacted for the audit trail, never a secret, a token or a password.
// Pure, but for the HMAC (WebCrypto).

import { approvalTitle } from '../approval-title';
import type { BlastRadius } from '../proxmox/blast-radius';
import { blastRadiusRows } from '../proxmox/blast-radius-text';
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

/** The arguments as lines, at most 20 of 200 characters: enough to judge, short enough to post. */
function argLines(args: Record<string, unknown>): string[] {
  return Object.entries(args)
    .slice(0, 20)
    .map(([k, v]) => {
      const text = typeof v === 'string' ? v : JSON.stringify(v);
      return `${k}: ${text.length > 200 ? `${text.slice(0, 199)}…` : text}`;
    });
}

/** Slack refuses a section over 3,000 characters: the arguments' block stays well under. */
const SLACK_SECTION_MAX = 2_800;

/** Facts from Proxmox and arguments from the agent go in code blocks, where nothing formats. */
function slackCode(lines: string[]): Record<string, unknown> {
  return {
    type: 'section',
    // Inside the code block, a backtick is shown as a look-alike, so that no text can close the
    // block and format the rest (a fake "approved").
    text: {
      type: 'mrkdwn',
      text: `\`\`\`${clip(escapeSlack(lines.join('\n')).replace(/`/g, '\u02cb'), SLACK_SECTION_MAX)}\`\`\``,
    },
  };
}

export function slackBody(event: NotifyEvent, a: ApprovalSnapshot): Record<string, unknown> {
  const title = headline(event, a);
  const radius = radiusFacts(event, a);
  return {
    text: title,
    blocks: [
      // The title holds what the agent wrote and names Proxmox gave: plain text, where nothing
      // formats (Slack cuts a header at 150 characters).
      { type: 'header', text: { type: 'plain_text', text: clip(title, 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: escapeSlack(a.reason) } },
      ...(radius.warnings.length ? [slackCode(radius.warnings)] : []),
      ...(radius.facts.length ? [slackCode(radius.facts)] : []),
      slackCode(argLines(a.args)),
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: escapeSlack(
              `Approvals ${a.approvals_given.length} of ${a.approvals_required} · expires ${a.expires_at}`,
            ),
          },
        ],
      },
      ...(event === 'approval.requested' && a.url
        ? [
            {
              type: 'actions',
              elements: [
                {
                  type: 'button',
                  text: { type: 'plain_text', text: 'Open the approval' },
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
          // What others wrote (the request, its arguments) goes in text runs, which Teams shows
          // as they are: a TextBlock or a fact would render markdown, links included.
          body: [
            plainText(headline(event, a), true),
            plainText(a.reason),
            ...radius.warnings.map((line) => plainText(line, true)),
            ...radius.facts.map((line) => plainText(line)),
            ...argLines(a.args).map((line) => plainText(line, false, true)),
            {
              type: 'FactSet',
              facts: [
                {
                  title: 'Approvals',
                  value: `${a.approvals_given.length} of ${a.approvals_required}`,
                },
                { title: 'Expires', value: a.expires_at },
              ],
            },
          ],
          actions: a.url
            ? [{ type: 'Action.OpenUrl', title: 'Open the approval', url: a.url }]
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
        text,
        ...(bold ? { weight: 'Bolder' } : {}),
        ...(monospace ? { fontType: 'Monospace' } : {}),
      },
    ],
  };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Slack's mrkdwn control characters, as its docs say to escape them. */
function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
