// The policy console on /admin/policy, for administrators and policy editors: see the active
// version, its history and diffs, the shadow and its disagreements; check and replay a draft;
// and, for editors only, save it (as is, in shadow, or active), activate any version (a rollback
// is one) and stop the shadow, each with a comment. Forms carry the session's CSRF token and
// must come from this origin (./common.ts); the store checks every policy again. A change that
// puts a version in force or in shadow carries the version the page showed as active (`base`):
// one activated since, or a form without it, is refused with a 409 naming the version in force.

import { type Context, Hono } from 'hono';
import { Refusal } from '../http/refusal';
import type { AppBindings } from '../compose/runtime';
import { locateProblems } from '../policy/locate';
import type { PolicyVersion } from '../policy-store/types';
import { checkDraft } from '../tools/policy-reach';
import { checkPost, html, page, viewer, type Viewer } from './common';
import { consolePage, type DraftState, versionPage } from './policy-console-page';
import {
  changePolicy,
  COMMENT_RULE,
  commentOf,
  DEFAULT_REPLAY_LIMIT,
  MAX_REPLAY_LIMIT,
  notAReader,
  personName,
  type PolicyChange,
  type PolicyRights,
  policyRights,
  replayOver,
  SHADOW_READ_MAX,
  shadowDisagreements,
} from './policy-ops';

type Ctx = Context<AppBindings>;

export const policyConsole = new Hono<AppBindings>();

interface Person extends Viewer, PolicyRights {}

async function person(c: Ctx): Promise<Person> {
  const v = await viewer(c);
  const rights = policyRights(c.var.runtime.config, v.identity);
  if (!rights.reader)
    throw Refusal.page(403, 'Administrators and policy editors only', notAReader(v.identity));
  // The store takes in the deployed policy on its first check: before anything is read of it.
  await c.var.runtime.policy.active((work) => c.executionCtx.waitUntil(work));
  return { ...v, ...rights };
}

/** The console with a draft (the active text unless one was submitted) and what became of it. */
async function render(
  c: Ctx,
  me: Person,
  draft: Partial<DraftState> = {},
  extra: { notice?: string; error?: string; status?: number } = {},
): Promise<Response> {
  const store = c.var.runtime.stores.policies();
  const overview = await store.overview();
  const active = overview.active ? await store.get(overview.active.version) : null;
  const [previous, seen] = await Promise.all([
    active?.replaces ? store.get(active.replaces) : null,
    overview.shadow
      ? shadowDisagreements(
          c.var.runtime,
          overview.shadow.version,
          me.sees.all ? 20 : SHADOW_READ_MAX,
          me.sees,
        )
      : [],
  ]);
  // An administrator sees the shadow's whole count; anyone else how many of their own calls.
  const shadowCount = me.sees.all ? (overview.shadow?.disagreements ?? 0) : seen.length;
  return html(
    consolePage({
      viewer: personName(me.identity),
      csrf: me.csrf,
      editor: me.editor,
      overview,
      active,
      previous,
      disagreements: seen.slice(0, 20),
      shadowCount,
      callsSeen: me.sees.all ? 'all' : 'own',
      draft: {
        text: active?.text ?? '',
        comment: '',
        since: '7d',
        limit: String(DEFAULT_REPLAY_LIMIT),
        ...draft,
      },
      ...extra,
    }),
    extra.status,
  );
}

policyConsole.get('/', async (c) => {
  const me = await person(c);
  const notice = noticeOf(c.req.query('done'), c.req.query('version'));
  return render(c, me, {}, notice ? { notice } : {});
});

policyConsole.post('/draft', async (c) => {
  const me = await person(c);
  const form = await checkPost(c, me);
  const action = form.action ?? 'check';
  const draft: Partial<DraftState> = {
    text: form.policy ?? '',
    comment: form.comment ?? '',
    since: form.since ?? '7d',
    limit: form.limit ?? String(DEFAULT_REPLAY_LIMIT),
  };
  const checked = checkDraft(draft.text ?? '', c.var.runtime.clusters);
  if (!checked.ok)
    return render(
      c,
      me,
      { ...draft, problems: locateProblems(draft.text ?? '', checked.errors) },
      { status: 400 },
    );
  const warnings = checked.warnings.map((w) => `${w.pointer}: ${w.message}`);
  const runtime = c.var.runtime;
  if (action === 'check') return render(c, me, { ...draft, valid: true, warnings });
  if (action === 'replay') {
    const window = { since: draft.since, limit: Number(draft.limit) };
    const replay = await replayOver(runtime, checked.policy, window, me.sees);
    if ('wrong' in replay)
      return render(c, me, draft, {
        status: 400,
        error: `Replay since a duration (7d, 24h, 30m) or an ISO time, at most 1 to ${MAX_REPLAY_LIMIT} calls.`,
      });
    return render(c, me, { ...draft, valid: true, warnings, replay });
  }
  if (!['save', 'activate', 'shadow'].includes(action))
    return render(c, me, draft, { status: 400, error: 'Unknown action.' });
  if (!me.editor) return notEditor(me);
  const comment = commentOf(draft.comment);
  if (comment === null) return render(c, me, draft, { status: 400, error: COMMENT_RULE });
  // The page asks for this box before activating (the browser, and here for any other client).
  if (action === 'activate' && form.confirm_activate !== 'yes')
    return render(c, me, draft, {
      status: 400,
      error:
        'Nothing was stored: tick the box that says the draft replaces the active version for every agent, then Save and activate.',
    });
  const answer = await changePolicy(
    c,
    me.identity,
    {
      kind: 'store',
      text: draft.text ?? '',
      activate: action === 'activate',
      shadow: action === 'shadow',
    },
    { comment, base: formBase(form.base) },
  );
  if (!answer.ok)
    return render(
      c,
      me,
      { ...draft, problems: answer.problems.map((text) => ({ text, line: null, column: null })) },
      { status: answer.status },
    );
  return done(
    c,
    action === 'save' ? 'stored' : (action as 'activate' | 'shadow'),
    answer.value.version,
  );
});

policyConsole.get('/version/:version{[0-9]+}', async (c) => {
  const me = await person(c);
  const store = c.var.runtime.stores.policies();
  const version = await store.get(Number(c.req.param('version')));
  if (!version) return page(404, 'No such version', 'There is no such version of the policy.');
  const [overview, replaced] = await Promise.all([
    store.overview(),
    version.replaces ? store.get(version.replaces) : (null as PolicyVersion | null),
  ]);
  const activeVersion = overview.active?.version ?? null;
  const activeText =
    activeVersion !== null && activeVersion !== version.version
      ? ((await store.get(activeVersion))?.text ?? null)
      : null;
  return html(
    versionPage({
      viewer: personName(me.identity),
      csrf: me.csrf,
      editor: me.editor,
      version,
      replaced,
      active: activeVersion === version.version,
      shadow: overview.shadow?.version === version.version,
      activeVersion,
      activeText,
    }),
  );
});

policyConsole.post('/version/:version{[0-9]+}/activate', (c) => {
  const version = Number(c.req.param('version'));
  return change(c, 'activate', { kind: 'activate', version });
});

policyConsole.post('/version/:version{[0-9]+}/shadow', (c) => {
  const version = Number(c.req.param('version'));
  return change(c, 'shadow', { kind: 'shadow', version });
});

policyConsole.post('/shadow/stop', (c) => change(c, 'stopped', { kind: 'shadow', version: null }));

/** An editor's change of which stored version is active or in shadow, from a version's page. */
async function change(
  c: Ctx,
  notice: Notice,
  what: Exclude<PolicyChange, { kind: 'store' }>,
): Promise<Response> {
  const me = await person(c);
  const form = await checkPost(c, me);
  if (!me.editor) return notEditor(me);
  const comment = commentOf(form.comment);
  if (comment === null) return render(c, me, {}, { status: 400, error: COMMENT_RULE });
  const answer = await changePolicy(c, me.identity, what, { comment, base: formBase(form.base) });
  if (!answer.ok)
    return render(c, me, {}, { status: answer.status, error: answer.problems.join('; ') });
  return done(c, notice, what.version);
}

/** What the page says after a change: one of these, never text taken from the URL. */
type Notice = 'stored' | 'activate' | 'shadow' | 'stopped';
const NOTICES: Record<Notice, (version: string) => string> = {
  stored: (v) => `Version ${v} stored.`,
  activate: (v) => `Version ${v} active.`,
  shadow: (v) => `Version ${v} in shadow.`,
  stopped: () => 'Shadow stopped.',
};

/** The active version the form was rendered with (its hidden `base`), if it carries one. */
function formBase(value: string | undefined): number | undefined {
  return value && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

function done(c: Ctx, notice: Notice, version: number | null): Response {
  const query = new URLSearchParams({ done: notice });
  if (version !== null) query.set('version', String(version));
  return c.redirect(`/admin/policy?${query}`, 303);
}

function noticeOf(code: string | undefined, version: string | undefined): string | undefined {
  if (!code || !Object.hasOwn(NOTICES, code)) return undefined;
  return NOTICES[code as Notice](/^\d{1,9}$/.test(version ?? '') ? version! : '?');
}

function notEditor(me: Person): Promise<Response> {
  return page(
    403,
    'Policy editors only',
    `${personName(me.identity)} may see the policy but not change it (POLICY_EDITORS).`,
  );
}
