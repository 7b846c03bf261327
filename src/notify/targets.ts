// Where approval events go: APPROVAL_WEBHOOKS, a JSON list of receivers, each
// `{name?, url, format?, secret?, events?, private_network?}`. `format` is `json` (our own body,
// signed when a secret is set), `slack` (an incoming webhook: Block Kit with a button to the
// approval page) or `teams` (a Workflows webhook: an Adaptive Card). `events` narrows what a
// receiver gets (default: all). Which addresses are taken, and when `private_network: true` is
// needed: ./receiver-address.ts. A policy rule's `notify` names the receivers its approvals go to
// (by `name`); without it, every receiver gets them. Parsed once; a bad entry is dropped with a
// problem that /health shows, never half-used.

import { type ReceiverRules, receiverAddressProblem } from './receiver-address';

export const NOTIFY_EVENTS = [
  'approval.requested',
  'approval.decided',
  'approval.expired',
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
export const NOTIFY_FORMATS = ['json', 'slack', 'teams'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

export interface NotifyTarget {
  /** How a policy's `notify` names it (default `webhook-<n>`, counted from 1). */
  name: string;
  url: string;
  format: NotifyFormat;
  /** Signs `json` bodies: `X-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`. */
  secret?: string;
  events: readonly NotifyEvent[];
  /** `private_network: true`: may be on a private network or link-local (/health names it). */
  privateNetwork: boolean;
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function notifyTargets(
  text: string | undefined,
  problems: string[],
  rules: ReceiverRules,
): NotifyTarget[] {
  if (text === undefined || text.trim() === '') return [];
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    problems.push('APPROVAL_WEBHOOKS is not valid JSON: no approval is announced');
    return [];
  }
  if (!Array.isArray(list)) {
    problems.push(
      'APPROVAL_WEBHOOKS must be a JSON list of {url, format?, secret?, events?, private_network?}',
    );
    return [];
  }
  const out: NotifyTarget[] = [];
  list.slice(0, 20).forEach((raw, i) => {
    const at = `APPROVAL_WEBHOOKS[${i}]`;
    const entry = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    const name = entry.name === undefined ? `webhook-${i + 1}` : entry.name;
    const format = entry.format ?? 'json';
    const events = entry.events ?? NOTIFY_EVENTS;
    const problem = ((): string | null => {
      if (typeof name !== 'string' || !NAME.test(name))
        return 'name: letters, digits, "_", "." or "-", at most 64';
      if (out.some((t) => t.name === name)) return `name "${name}" is used twice`;
      if (entry.private_network !== undefined && typeof entry.private_network !== 'boolean')
        return 'private_network: true or false';
      if (typeof entry.url !== 'string') return 'url: an https address';
      const address = receiverAddressProblem(entry.url, entry.private_network === true, rules);
      if (address) return address;
      if (!NOTIFY_FORMATS.includes(format as NotifyFormat))
        return `format: one of ${NOTIFY_FORMATS.join(', ')}`;
      if (
        entry.secret !== undefined &&
        (typeof entry.secret !== 'string' || entry.secret.length < 16)
      )
        return 'secret: at least 16 characters';
      if (!Array.isArray(events) || !events.every((e) => NOTIFY_EVENTS.includes(e as NotifyEvent)))
        return `events: a list of ${NOTIFY_EVENTS.join(', ')}`;
      return null;
    })();
    if (problem) {
      problems.push(`${at} is ignored: ${problem}`);
      return;
    }
    out.push({
      name: name as string,
      url: entry.url as string,
      format: format as NotifyFormat,
      ...(typeof entry.secret === 'string' ? { secret: entry.secret } : {}),
      events: events as NotifyEvent[],
      privateNetwork: entry.private_network === true,
    });
  });
  return out;
}
