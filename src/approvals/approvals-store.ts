// Pending and decided approvals, in one Durable Object's SQLite storage (approvals are rare and
// must be seen together on the admin page). Every method is synchronous over SQL, so deciding
// and consuming are atomic: an approval is spent at most once.
//
// Table approvals: id TEXT PK (128-bit random, base64url), status, created_at, expires_at,
// tool, args TEXT json (redacted), upstream TEXT json, args_hmac, grant_id, user_id,
// user_email, client_id, approvers TEXT json|null, reason, rule, decided_by, decided_at, used_at,
// approvals_required INTEGER (default 1), approved_by TEXT json (who approved so far, and when),
// origin (the server's public origin, for the page's address in notifications), notify TEXT json
// (the receivers the rule names), expiry_told (its expiry announced). Table notify_stats: target
// TEXT PK, undelivered INTEGER (notifications given up after their last attempt).
// Status: pending → approved (once approvals_required different people approved) | denied (one
// denial) | revoked (its grant revoked; decided_by says by whom);
// approved → used (and back, when the call fails before Proxmox).
// Table spent_tokens: token TEXT PK, expires_at: one-time tokens (answers of 2026 clients) spent.
// Rows are deleted 90 days after they expire (so the audit trail's approval ids can still be
// looked up: who decided, when), by an alarm.

import { randomToken } from '../encoding';
import { errorText, logLine } from '../log';
import { withDeadline } from '../stores/deadline';
import { type Clock, systemClock } from '../clock';
import { DurableObject } from 'cloudflare:workers';
import type { ApprovalSnapshot, NotifyMessage } from '../notify/event-formats';
import type { NotifyEvent } from '../notify/targets';
import type { BlastRadius } from '../proxmox/blast-radius';
import { mayConsume, mayDecide, meetsTerms, NO_SUCH_APPROVAL, type DecideCheck } from './rules';
import { rankOf } from '../audit/figures';
import type {
  Approval,
  ApprovalFigures,
  ApprovalsObject,
  ApprovalRequest,
  ConsumeCall,
  ConsumeRefusal,
  Decider,
  Spent,
} from './types';

/** As long as the audit trail keeps the calls that name them (its default retention). */
const KEEP_AFTER_EXPIRY_MS = 90 * 86_400_000;
/** Who withdrew an approval for a new ask of the same call (decided_by). */
const WITHDRAWN_BY = '(policy changed)';
/** The statuses of an approval someone decided. */
const DECIDED = new Set(['approved', 'used', 'denied']);
const MAX_PENDING_PER_GRANT = 20;
const PRUNE_EVERY_MS = 6 * 3_600_000;
/** How long putting an event on the notification queue may hold up the change it announces. */
const QUEUE_SEND_MS = 1_000;

type Row = Record<string, string | number | null>;

interface ApprovalsEnv {
  /** Where approval events go to be announced (APPROVAL_WEBHOOKS); absent: none are. */
  NOTIFY_QUEUE?: Queue<NotifyMessage>;
}

export class Approvals extends DurableObject<ApprovalsEnv> implements ApprovalsObject {
  /** The time (its alarms, record times); the system clock. */
  private readonly clock: Clock = systemClock;
  private readonly notifications: Queue<NotifyMessage> | undefined;

  constructor(ctx: DurableObjectState, env: ApprovalsEnv) {
    super(ctx, env);
    this.notifications = env.NOTIFY_QUEUE;
  }

  private ready = false;

  private get sql(): SqlStorage {
    if (!this.ready) {
      this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS approvals (
        id TEXT PRIMARY KEY, status TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        tool TEXT NOT NULL, args TEXT NOT NULL, upstream TEXT, args_hmac TEXT NOT NULL, grant_id TEXT NOT NULL,
        user_id TEXT NOT NULL, user_email TEXT, client_id TEXT NOT NULL, approvers TEXT, reason TEXT NOT NULL,
        rule TEXT NOT NULL, decided_by TEXT, decided_at INTEGER, used_at INTEGER)`);
      // The argument hash is an HMAC, and is named so since: older tables are renamed in place.
      const columns = this.ctx.storage.sql
        .exec<{ name: string }>('PRAGMA table_info(approvals)')
        .toArray()
        .map((c) => c.name);
      if (columns.includes('args_sha256'))
        this.ctx.storage.sql.exec('ALTER TABLE approvals RENAME COLUMN args_sha256 TO args_hmac');
      // Quorums came later: older tables gain their columns in place (one approval each).
      if (!columns.includes('approvals_required'))
        this.ctx.storage.sql.exec(
          'ALTER TABLE approvals ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 1',
        );
      if (!columns.includes('approved_by'))
        this.ctx.storage.sql.exec(
          "ALTER TABLE approvals ADD COLUMN approved_by TEXT NOT NULL DEFAULT '[]'",
        );
      // Notifications came later too: where the page is, who hears of it, whether its expiry was told.
      for (const [column, type] of [
        ['origin', 'TEXT'],
        ['notify', 'TEXT'],
        ['expiry_told', 'INTEGER NOT NULL DEFAULT 0'],
        // and what the call would hit, as read when it was asked (JSON)
        ['blast_radius', 'TEXT'],
      ] as const) {
        if (!columns.includes(column))
          this.ctx.storage.sql.exec(`ALTER TABLE approvals ADD COLUMN ${column} ${type}`);
      }
      // Approvals from before notifications existed are never announced as expired.
      if (!columns.includes('expiry_told'))
        this.ctx.storage.sql.exec('UPDATE approvals SET expiry_told = 1');
      this.ctx.storage.sql.exec(
        'CREATE TABLE IF NOT EXISTS notify_stats (target TEXT PRIMARY KEY, undelivered INTEGER NOT NULL)',
      );
      this.ctx.storage.sql.exec(
        'CREATE INDEX IF NOT EXISTS approvals_status ON approvals (status, expires_at)',
      );
      this.ctx.storage.sql.exec(
        'CREATE TABLE IF NOT EXISTS spent_tokens (token TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)',
      );
      this.ready = true;
    }
    return this.ctx.storage.sql;
  }

  /**
   * Opens an approval, or returns the one already waiting for the same call from the same grant
   * (an agent asking again does not flood approvers). Null when the grant already has
   * MAX_PENDING_PER_GRANT calls waiting.
   */
  async create(request: ApprovalRequest, now: number, ttlMs: number): Promise<Approval | null> {
    const waiting = this.sql
      .exec<Row>(
        `SELECT * FROM approvals WHERE status = 'pending' AND expires_at > ? AND grant_id = ? ORDER BY created_at`,
        now,
        request.grant_id,
      )
      .toArray()
      .map(fromRow);
    const same = waiting.find((a) => a.tool === request.tool && a.args_hmac === request.args_hmac);
    // The same call waiting under the same rule: that one. Under another rule (the policy asks
    // more now): it is withdrawn, and a new one asks under the rule in force.
    if (same && meetsTerms(same, request) && meetsTerms(request, same)) return same;
    if (same)
      this.sql.exec(
        `UPDATE approvals SET status = 'revoked', decided_by = '${WITHDRAWN_BY}', decided_at = ? WHERE id = ? AND status = 'pending'`,
        now,
        same.id,
      );
    if (waiting.length >= MAX_PENDING_PER_GRANT) return null;
    const id = randomToken(16);
    this.sql.exec(
      `INSERT INTO approvals (id, status, created_at, expires_at, tool, args, upstream, args_hmac, grant_id, user_id,
         user_email, client_id, approvers, reason, rule, approvals_required, origin, notify, blast_radius)
         VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      now,
      now + ttlMs,
      request.tool,
      JSON.stringify(request.args),
      request.upstream ? JSON.stringify(request.upstream) : null,
      request.args_hmac,
      request.grant_id,
      request.user_id,
      request.user_email,
      request.client_id,
      request.approvers ? JSON.stringify(request.approvers) : null,
      request.reason,
      request.rule,
      Math.max(1, Math.trunc(request.approvals_required || 1)),
      request.origin ?? null,
      request.notify ? JSON.stringify(request.notify) : null,
      request.blast_radius ? JSON.stringify(request.blast_radius) : null,
    );
    const created = this.get(id)!;
    await this.announce('approval.requested', created);
    // Woken at its expiry (to announce it) or for the next prune, whichever comes first.
    const alarm = await this.ctx.storage.getAlarm();
    const wake = Math.min(created.expires_at + 1_000, now + PRUNE_EVERY_MS);
    if (alarm === null || alarm > wake) await this.ctx.storage.setAlarm(wake);
    return created;
  }

  get(id: string): Approval | null {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(id)) return null;
    const row = this.sql.exec<Row>('SELECT * FROM approvals WHERE id = ?', id).toArray()[0];
    return row ? fromRow(row) : null;
  }

  async decide(
    id: string,
    decision: 'approve' | 'deny',
    decider: Decider,
    now: number,
  ): Promise<DecideCheck> {
    const approval = this.get(id);
    if (!approval) return { ok: false, reason: NO_SUCH_APPROVAL };
    const check = mayDecide(approval, decider, now);
    if (!check.ok) return check;
    const by = decider.email ?? decider.userId;
    if (decision === 'approve') {
      const given = [...approval.approved_by, { by, user_id: decider.userId, at: now }];
      // Approved once enough different people said yes; until then it waits for the others.
      const done = given.length >= approval.approvals_required;
      this.sql.exec(
        `UPDATE approvals SET approved_by = ?, status = ?, decided_by = ?, decided_at = ?
         WHERE id = ? AND status = 'pending'`,
        JSON.stringify(given),
        done ? 'approved' : 'pending',
        done ? given.map((g) => g.by).join(', ') : null,
        done ? now : null,
        id,
      );
      if (done) await this.announce('approval.decided', this.get(id)!);
      return { ok: true };
    }
    this.sql.exec(
      `UPDATE approvals SET status = 'denied', decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'`,
      by,
      now,
      id,
    );
    await this.announce('approval.decided', this.get(id)!);
    return { ok: true };
  }

  /** Spends an approval on a call: the requests it approved when it was valid (and is now used), else why not. */
  consume(id: string, call: ConsumeCall, now: number): ConsumeRefusal | Spent {
    const approval = this.get(id);
    const refusal = mayConsume(approval, call, now);
    if (refusal) return refusal;
    this.sql.exec(
      `UPDATE approvals SET status = 'used', used_at = ? WHERE id = ? AND status = 'approved'`,
      now,
      id,
    );
    return { upstream: approval!.upstream };
  }

  /** Gives a spent approval back (the call it was spent on was refused or failed before Proxmox). */
  restore(id: string): void {
    this.sql.exec(
      `UPDATE approvals SET status = 'approved', used_at = NULL WHERE id = ? AND status = 'used'`,
      id,
    );
  }

  /**
   * Records a one-time token, such as the nonce of a 2026 client's answer in the conversation:
   * true the first time, false ever after (until it expires, when it is worthless anyway).
   */
  async spendOnce(token: string, expiresAt: number, now: number): Promise<boolean> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(token) || expiresAt <= now) return false;
    const taken =
      this.sql.exec<Row>('SELECT token FROM spent_tokens WHERE token = ?', token).toArray().length >
      0;
    if (taken) return false;
    this.sql.exec('INSERT INTO spent_tokens (token, expires_at) VALUES (?, ?)', token, expiresAt);
    if ((await this.ctx.storage.getAlarm()) === null)
      await this.ctx.storage.setAlarm(now + PRUNE_EVERY_MS);
    return true;
  }

  /**
   * Cancels what a revoked grant was still waiting for: its pending approvals become `revoked`
   * (by whom, when), so nobody is offered them again. Returns how many.
   */
  async cancelForGrant(grantId: string, by: string, now: number): Promise<number> {
    // Counted by RETURNING: rowsWritten also counts the status index's entries.
    const cancelled = this.sql
      .exec<Row>(
        `UPDATE approvals SET status = 'revoked', decided_by = ?, decided_at = ? WHERE grant_id = ? AND status = 'pending' RETURNING *`,
        by,
        now,
        grantId,
      )
      .toArray()
      .map(fromRow);
    // Whoever was told of them hears that they are off (the button would lead nowhere).
    for (const approval of cancelled) await this.announce('approval.decided', approval);
    return cancelled.length;
  }

  /** Pending approvals that have not expired, oldest first. */
  pending(now: number): Approval[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM approvals WHERE status = 'pending' AND expires_at > ? ORDER BY created_at LIMIT 200`,
        now,
      )
      .toArray()
      .map(fromRow);
  }

  figures(now: number, since: number): ApprovalFigures {
    const rows = this.sql
      .exec<{ status: string; expires_at: number; took: number | null; by: string | null }>(
        'SELECT status, expires_at, decided_at - created_at AS took, decided_by AS by FROM approvals WHERE created_at >= ?',
        since,
      )
      .toArray();
    const isWithdrawn = (r: (typeof rows)[number]) =>
      r.status === 'revoked' && r.by === WITHDRAWN_BY;
    const count = (test: (r: (typeof rows)[number]) => boolean) => rows.filter(test).length;
    const took = rows
      .filter((r) => DECIDED.has(r.status) && r.took !== null)
      .map((r) => r.took!)
      .sort((a, b) => a - b);
    const at = (q: number) => (took.length ? took[rankOf(q, took.length)]! : null);
    return {
      since,
      asked: rows.length - count(isWithdrawn),
      given: count((r) => r.status === 'approved' || r.status === 'used'),
      refused: count((r) => r.status === 'denied'),
      expired: count((r) => r.status === 'pending' && r.expires_at <= now),
      revoked: count((r) => r.status === 'revoked' && !isWithdrawn(r)),
      withdrawn: count(isWithdrawn),
      waiting: count((r) => r.status === 'pending' && r.expires_at > now),
      decide_p50_ms: at(0.5),
      decide_p95_ms: at(0.95),
    };
  }

  /** Counts a notification that could not be delivered after its last attempt. */
  countUndelivered(target: string): void {
    this.sql.exec(
      `INSERT INTO notify_stats (target, undelivered) VALUES (?, 1)
       ON CONFLICT(target) DO UPDATE SET undelivered = undelivered + 1`,
      target.slice(0, 64),
    );
  }

  /** Notifications not delivered after their last attempt, by receiver. */
  undelivered(): Record<string, number> {
    return Object.fromEntries(
      this.sql
        .exec<{ target: string; undelivered: number }>(
          'SELECT target, undelivered FROM notify_stats',
        )
        .toArray()
        .map((r) => [r.target, r.undelivered]),
    );
  }

  /**
   * Puts an event about an approval on the notification queue: awaited (a Durable Object has no
   * waitUntil) for at most QUEUE_SEND_MS, so a slow queue never holds up the call that asked;
   * one not queued in time is logged and counted undelivered.
   */
  private async announce(event: NotifyEvent, approval: Approval): Promise<void> {
    const queue = this.notifications;
    if (!queue) return;
    const message: NotifyMessage = {
      kind: 'event',
      event,
      approval: snapshot(approval),
      notify: approval.notify ?? null,
    };
    try {
      await withDeadline(queue.send(message), QUEUE_SEND_MS, 'notification queue');
    } catch (err) {
      logLine('error', 'notification_not_queued', {
        event,
        approval: approval.id,
        error: errorText(err, 200),
      });
      this.countUndelivered('(queue)');
    }
  }

  override async alarm(): Promise<void> {
    const now = this.clock.now();
    // Approvals that ran out while pending: announced once.
    const expired = this.sql
      .exec<Row>(
        `UPDATE approvals SET expiry_told = 1 WHERE status = 'pending' AND expires_at <= ? AND expiry_told = 0 RETURNING *`,
        now,
      )
      .toArray()
      .map(fromRow);
    for (const approval of expired) await this.announce('approval.expired', approval);
    this.sql.exec('DELETE FROM approvals WHERE expires_at < ?', now - KEEP_AFTER_EXPIRY_MS);
    this.sql.exec('DELETE FROM spent_tokens WHERE expires_at < ?', now);
    const left =
      this.sql.exec<{ n: number }>('SELECT count(*) AS n FROM approvals').one().n +
      this.sql.exec<{ n: number }>('SELECT count(*) AS n FROM spent_tokens').one().n;
    const next = this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(expires_at) AS at FROM approvals WHERE status = 'pending' AND expiry_told = 0`,
      )
      .one().at;
    if (left > 0)
      await this.ctx.storage.setAlarm(
        Math.min(now + PRUNE_EVERY_MS, next === null ? Infinity : next + 1_000),
      );
  }
}

/** An approval as its notifications carry it (arguments as redacted for the page). */
function snapshot(a: Approval): ApprovalSnapshot {
  const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    id: a.id,
    url: a.origin ? `${a.origin}/approvals/${a.id}` : null,
    tool: a.tool,
    args: a.args,
    reason: a.reason,
    requester: a.user_email ?? a.user_id,
    client_id: a.client_id,
    approvers: a.approvers,
    approvals_required: a.approvals_required,
    approvals_given: a.approved_by.map((g) => ({ by: g.by, at: iso(g.at) })),
    expires_at: iso(a.expires_at),
    status: a.status,
    decided_by: a.decided_by,
    blast_radius: a.blast_radius ?? null,
  };
}

function fromRow(row: Row): Approval {
  const parse = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : null);
  return {
    id: String(row.id),
    status: row.status as Approval['status'],
    created_at: Number(row.created_at),
    expires_at: Number(row.expires_at),
    tool: String(row.tool),
    args: parse(row.args) as Approval['args'],
    upstream: parse(row.upstream) as Record<string, string> | null,
    args_hmac: String(row.args_hmac),
    grant_id: String(row.grant_id),
    user_id: String(row.user_id),
    user_email: row.user_email === null ? null : String(row.user_email),
    client_id: String(row.client_id),
    approvers: parse(row.approvers) as string[] | null,
    reason: String(row.reason),
    rule: String(row.rule),
    decided_by: row.decided_by === null ? null : String(row.decided_by),
    decided_at: row.decided_at === null ? null : Number(row.decided_at),
    used_at: row.used_at === null ? null : Number(row.used_at),
    approvals_required: row.approvals_required == null ? 1 : Number(row.approvals_required),
    origin: row.origin == null ? undefined : String(row.origin),
    notify: row.notify == null ? null : (parse(row.notify) as string[]),
    blast_radius: row.blast_radius == null ? null : (parse(row.blast_radius) as BlastRadius),
    approved_by: (parse(row.approved_by) as Approval['approved_by'] | null) ?? [],
  };
}
