// /admin and /admin/audit, for ADMIN_USERS / ADMIN_GROUPS only: reads the audit trail (filters,
// keyset pages, JSON Lines or CSV export), pending approvals, counters and the active policy;
// /admin/grants/ (grant-routes.ts) revokes grants.

import { Hono, type Context } from 'hono';
import type { Approval } from '../approvals/types';
import { toCsv, toJsonLines } from '../audit/export';
import type { AuditDecision, AuditOutcome, AuditPage, AuditQuery } from '../audit/record';
import { counterObjectName, guestCounterObject, scopeOfObject } from '../counters/reserve';
import { guestKey } from '../policy/conditions';
import type { CounterRow } from '../counters/window-counters';
import { type AppBindings, oauthHelpers, type Runtime } from '../compose/runtime';
import { limitOf } from '../policy/limit-of';
import { windowEnd } from '../policy/windows';
import { formatErrors } from '../policy/load';
import type { ActivePolicy } from '../policy/source';
import { adminPage, type CounterRowView } from './admin-page';
import { adminViewer, html, page } from './common';
import { goneGrants, listGrants } from '../auth/grants';
import { grantRoutes } from './grant-routes';
import type { PolicyPanel } from './policy-panel';
import { REPLAY_TOOLS } from './policy-ops';
import { guestOfRecord } from '../replay/recorded-call';
import { healthView } from './operator-view';
import { activityPage } from './activity-page';

type Ctx = Context<AppBindings>;

const DECISIONS: AuditDecision[] = ['allow', 'deny', 'limited', 'approval_required', 'none'];
const OUTCOMES: AuditOutcome[] = ['ok', 'failed', 'error', 'denied', 'invalid', 'approval_pending'];

export const adminRoutes = new Hono<AppBindings>();

adminRoutes.route('/grants', grantRoutes);

/** Reads filters from the query string; an invalid value is ignored rather than guessed at. */
function filters(c: Ctx, defaultLimit: number): AuditQuery {
  const q = (name: string): string | undefined => c.req.query(name)?.trim() || undefined;
  const time = (value: string | undefined): number | undefined => {
    if (!value) return undefined;
    const ms = /^\d+$/.test(value)
      ? Number(value)
      : Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
    return Number.isFinite(ms) ? ms : undefined;
  };
  const limit = Number(q('limit') ?? defaultLimit);
  const decision = q('decision');
  const outcome = q('outcome');
  return {
    user: q('user')?.slice(0, 200),
    tool: q('tool')?.slice(0, 128),
    decision: DECISIONS.includes(decision as AuditDecision)
      ? (decision as AuditDecision)
      : undefined,
    outcome: OUTCOMES.includes(outcome as AuditOutcome) ? (outcome as AuditOutcome) : undefined,
    cluster: q('cluster')?.slice(0, 64),
    from: time(q('from')),
    to: time(q('to')),
    cursor: q('cursor'),
    limit: Number.isInteger(limit) && limit >= 1 && limit <= 1000 ? limit : defaultLimit,
  };
}

function queryString(
  f: Omit<AuditQuery, 'limit'> & { limit?: number },
  extra: Record<string, string> = {},
): string {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, ...extra })) {
    if (v === undefined || v === '') continue;
    out.set(
      k,
      typeof v === 'number' && (k === 'from' || k === 'to') ? new Date(v).toISOString() : String(v),
    );
  }
  return out.toString();
}

adminRoutes.get('/', async (c) => {
  const v = await adminViewer(c);
  const f = filters(c, 50);
  const runtime = c.var.runtime;
  const { stores } = runtime;
  let result: AuditPage;
  try {
    result = await stores.audit().query(f);
  } catch (err) {
    return page(400, 'Cannot list calls', err instanceof Error ? err.message : 'The query failed.');
  }
  const now = runtime.clock.now();
  const active = await runtime.policy.active();
  const [stats, lost, pending, counters, undelivered] = await Promise.all([
    stores
      .audit()
      .stats()
      .catch(() => null),
    stores
      .audit('lost')
      .stats()
      .then((s) => s.lost)
      .catch(() => 0),
    stores
      .approvals()
      .pending(now)
      .catch(() => [] as Approval[]),
    counterRows(runtime, result, active, now),
    stores
      .approvals()
      .undelivered()
      .catch(() => null),
  ]);
  // A grant can go without revokeGrant (it expires; an older deployment revoked it): what its
  // approvals wait for can never happen, so they are shown as such and offered to nobody. Should
  // KV not answer, the page still shows; deciding checks the grant again and refuses then.
  const gone = await goneGrants(stores.kv, pending).catch(() => new Set<string>());
  const { cursor: _cursor, limit: _limit, ...shown } = f;
  const oauth = oauthHelpers(c.env);
  const grants = oauth
    ? await listGrants(stores, oauth).then(
        (g) => ({ rows: g.grants, more: g.more }),
        () => ({ unavailable: 'Grants could not be listed just now.' }),
      )
    : { unavailable: 'No grants: sign-in is off (AUTH_MODE=none).' };
  return html(
    adminPage({
      viewer: v.identity.email ?? v.identity.userId,
      csrf: v.csrf,
      filters: shown,
      records: result.records,
      nextPage: result.next_cursor ? queryString(shown, { cursor: result.next_cursor }) : null,
      exportQuery: queryString(shown),
      pending: pending.map((a) => ({ approval: a, grantRevoked: gone.has(a.grant_id) })),
      counters,
      stats,
      lost,
      notifications: runtime.config.notify.targets.length
        ? {
            receivers: runtime.config.notify.targets.length,
            undelivered: undelivered ? Object.values(undelivered).reduce((a, b) => a + b, 0) : null,
          }
        : null,
      auditOn: runtime.config.audit.enabled,
      clusters: runtime.clusters,
      grants,
      notice: revokedNotice(c.req.query('revoked'), c.req.query('cancelled')),
      policy: policyPanelOf(active),
    }),
  );
});

function policyPanelOf(active: ActivePolicy): PolicyPanel {
  return {
    label:
      active.version !== null
        ? `version ${active.version}`
        : active.origin === 'POLICY'
          ? 'POLICY variable'
          : 'policy.json (bundled)',
    valid: active.ok,
    text: active.text,
    errors: active.ok ? [] : formatErrors(active.errors).split('\n'),
  };
}

function revokedNotice(
  ended: string | undefined,
  cancelled: string | undefined,
): string | undefined {
  if (!ended || !/^\d+$/.test(ended)) return undefined;
  const n = Number(cancelled ?? 0);
  const approvals =
    /^\d+$/.test(cancelled ?? '') && n > 0
      ? `; ${n} pending approval${n === 1 ? '' : 's'} cancelled`
      : '';
  return `Grant revoked; ${ended} session${ended === '1' ? '' : 's'} ended${approvals}.`;
}

/** The day and the week before `now`, in ms. */
const DAY_MS = 86_400_000;

/** What /admin/activity and /admin/metrics.json show: each store's part, null where it failed. */
async function activity(runtime: Runtime, now: number) {
  const { stores } = runtime;
  const [calls, day, week, recent, active] = await Promise.all([
    stores
      .audit()
      .figures(now)
      .catch(() => null),
    stores
      .approvals()
      .figures(now, now - DAY_MS)
      .catch(() => null),
    stores
      .approvals()
      .figures(now, now - 7 * DAY_MS)
      .catch(() => null),
    // Whose counters to read: the people, grants and guests of the latest calls (as /admin).
    stores
      .audit()
      .query({ limit: 100 })
      .catch((): AuditPage => ({ records: [], next_cursor: null })),
    runtime.policy.active(),
  ]);
  const counters = await counterRows(runtime, recent, active, now);
  return {
    calls,
    approvals: day && week ? { day, week } : null,
    limits: counters.filter((r) => r.limit !== null),
  };
}

adminRoutes.get('/activity', async (c) => {
  const v = await adminViewer(c);
  const runtime = c.var.runtime;
  const figures = await activity(runtime, runtime.clock.now());
  return html(
    activityPage({
      viewer: v.identity.email ?? v.identity.userId,
      ...figures,
      auditOn: runtime.config.audit.enabled,
    }),
  );
});

/**
 * The same figures for scripts: to an administrator signed in here, or to a bearer token of an
 * administrator that carries policy:read (as /health's operator view).
 */
adminRoutes.get('/metrics.json', async (c) => {
  const runtime = c.var.runtime;
  const view = await healthView(runtime.config, oauthHelpers(c.env), runtime.stores.kv, c.req.raw);
  c.header('Cache-Control', 'private, no-store');
  if (view !== 'operator')
    return c.json(
      {
        error: 'forbidden',
        message:
          'Administrators only: sign in on /admin, or send a bearer token of an ADMIN_USERS / ADMIN_GROUPS member that carries policy:read.',
      },
      403,
    );
  const now = runtime.clock.now();
  const { calls, approvals, limits } = await activity(runtime, now);
  return c.json({
    at: now,
    audit: runtime.config.audit.enabled ? 'on' : 'off',
    calls: calls && { day: calls.day, week: calls.week },
    refusing: calls?.refusing ?? null,
    latency: calls?.latency ?? null,
    approvals,
    limits: limits.map((r) => ({
      counter: r.object,
      key: r.key,
      count: r.count,
      max: r.limit!.max,
      window: r.limit!.window,
      resets_at: r.resetsAt,
    })),
  });
});

adminRoutes.get('/audit', async (c) => {
  await adminViewer(c);
  const f = filters(c, 100);
  const format = c.req.query('format') === 'csv' ? 'csv' : 'jsonl';
  let result: AuditPage;
  try {
    result = await c.var.runtime.stores.audit().query(f);
  } catch (err) {
    return c.json(
      { error: 'invalid_query', message: err instanceof Error ? err.message : 'The query failed.' },
      400,
    );
  }
  const headers: Record<string, string> = {
    'Content-Type':
      format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    'Content-Disposition': `attachment; filename="audit.${format === 'csv' ? 'csv' : 'jsonl'}"`,
    'Cache-Control': 'no-store',
  };
  if (result.next_cursor) {
    const { cursor: _cursor, ...rest } = f;
    headers['X-Next-Cursor'] = result.next_cursor;
    headers.Link = `</admin/audit?${queryString(rest, { cursor: result.next_cursor, format })}>; rel="next"`;
  }
  const body = format === 'csv' ? toCsv(result.records, !f.cursor) : toJsonLines(result.records);
  return new Response(body, { headers });
});

/** Counters of the users, grants and guests seen in these records, plus the global ones. */
async function counterRows(
  runtime: Runtime,
  result: AuditPage,
  active: ActivePolicy,
  now: number,
): Promise<CounterRowView[]> {
  const names = new Set<string>(['global']);
  for (const r of result.records.slice(0, 100)) {
    if (r.user_id && r.user_id !== '(none)')
      names.add(
        counterObjectName('user', {
          userId: r.user_id,
          email: r.user_email ?? undefined,
          grantId: r.grant_id,
        }),
      );
    if (r.grant_id) names.add(`grant:${r.grant_id}`);
    // The guest a call acted on, as the tool names it (a clone's source, a task's guest...):
    // where a `guest` limit counts it.
    // (Of the cluster the record keeps, where the server reaches several: see guestKey.)
    const cluster = typeof r.args.cluster === 'string' ? r.args.cluster : undefined;
    const guest = guestKey(guestOfRecord(REPLAY_TOOLS.get(r.tool), r.args), cluster);
    if (guest !== undefined) names.add(guestCounterObject(guest));
  }
  const rows = await Promise.all(
    [...names].slice(0, 40).map(async (name) => {
      const list = await runtime.stores
        .counters(name)
        .list(now)
        .catch((): CounterRow[] => []);
      const scope = scopeOfObject(name);
      return list
        .filter((r) => r.count > 0)
        .map((r): CounterRowView => {
          const found = active.ok && scope ? limitOf(active.policy.doc, r.key, scope) : undefined;
          // A limit whose window changed since this counter started is not the one it counts for.
          const limit =
            found && windowEnd(found.window, r.windowStart) === r.expiresAt ? found : undefined;
          return {
            object: name,
            key: r.key,
            count: r.count,
            resetsAt: r.expiresAt,
            limit: limit ? { max: limit.max, window: limit.window } : null,
          };
        });
    }),
  );
  return rows.flat();
}
