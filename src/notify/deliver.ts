// The queue consumer of approval notifications (NOTIFY_QUEUE): an event message is fanned out
// into one delivery message per receiver it goes to, so that each receiver is retried on its
// own; a delivery is POSTed with a deadline, retried with backoff (1, 2, 4 s ...) when it fails
// or times out, and after its last attempt counted as undelivered (shown on /admin and /health)
// and logged. The call that asked for the approval never waits for any of it.

import { errorText, logLine } from '../log';
import { bodyFor, type NotifyMessage, signature } from './event-formats';
import type { NotifyTarget } from './targets';

/** Attempts per delivery (the queue's own max_retries is higher, so this count decides). */
export const MAX_ATTEMPTS = 4;

export interface NotifyDeps {
  targets: readonly NotifyTarget[];
  /** How long one delivery may take. */
  timeoutMs: number;
  /** The queue, to fan an event out into deliveries. */
  queue: Queue<NotifyMessage> | undefined;
  /** Counts a delivery given up after its last attempt (the approvals object keeps the count). */
  undelivered(target: string): Promise<void>;
  now(): number;
}

export async function handleNotifications(
  batch: MessageBatch<NotifyMessage>,
  deps: NotifyDeps,
): Promise<void> {
  const { targets, timeoutMs, queue } = deps;
  for (const message of batch.messages) {
    const m = message.body;
    if (m.kind === 'event') {
      const to = targets.filter(
        (t) => t.events.includes(m.event) && (m.notify === null || m.notify.includes(t.name)),
      );
      if (to.length && queue)
        await queue.sendBatch(
          to.map((t) => ({
            body: { kind: 'delivery', event: m.event, approval: m.approval, target: t.name },
          })),
        );
      message.ack();
      continue;
    }
    const target = targets.find((t) => t.name === m.target);
    // A receiver taken out of the configuration since: nothing to deliver to.
    if (!target) {
      message.ack();
      continue;
    }
    const failure = await deliver(target, m, timeoutMs, message.id, deps.now());
    if (failure === null) {
      message.ack();
    } else if (message.attempts >= MAX_ATTEMPTS) {
      logLine('error', 'notification_undelivered', {
        target: target.name,
        event: m.event,
        approval: m.approval.id,
        attempts: message.attempts,
        error: failure,
      });
      await deps.undelivered(target.name).catch(() => undefined);
      message.ack();
    } else {
      message.retry({ delaySeconds: 2 ** (message.attempts - 1) });
    }
  }
}

/** POSTs one delivery; null when the receiver took it (2xx), else why not. */
async function deliver(
  target: NotifyTarget,
  m: Extract<NotifyMessage, { kind: 'delivery' }>,
  timeoutMs: number,
  deliveryId: string,
  now: number,
): Promise<string | null> {
  const payload = bodyFor(target.format, m.event, m.approval);
  // Our own body says when it was sent and which delivery it is (signed with it): a receiver
  // can refuse a replayed or stale one, and tell a retry from a new event.
  if (target.format === 'json')
    Object.assign(payload, { sent_at: new Date(now).toISOString(), delivery: deliveryId });
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'proxmox-mcp-approvals',
    'x-approval-event': m.event,
  };
  if (target.secret && target.format === 'json')
    headers['x-signature-256'] = await signature(target.secret, body);
  try {
    const res = await fetch(target.url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel();
    return res.ok ? null : `HTTP ${res.status}`;
  } catch (err) {
    return errorText(err, 200);
  }
}
