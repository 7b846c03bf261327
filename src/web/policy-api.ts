// The policy API under /admin/api/policy, for scripts, CI and the /admin console: read the
// versions, check a draft, replay it over recorded calls, add a version (and activate it or run
// it in shadow), activate any version (a rollback is one), start and stop the shadow.
//
// Who: an administrator or a policy editor reads; only an editor (POLICY_EDITORS) changes
// anything. Replays and the shadow's disagreements show an administrator every recorded call
// (they read them all on /admin/audit anyway); an editor who is not one sees only their own
// calls, so a draft's rules cannot be used to read other people's arguments. How: the admin web
// session's cookie, where a write must carry this server's own `Origin` (a page on another site
// cannot post with the cookie), or an access token this server issued, for this server, to a
// person still admitted, holding the scope `policy:read` (reads) or `policy:edit` (reads and
// changes) itself — the token's own scopes, not its grant's (`npm run policy`, CI; an MCP
// client's token never has either). With AUTH_MODE=none (loopback only) a change too must carry
// our own `Origin`, since the door lets the CORS_ORIGINS pages through. Answers are JSON; errors
// are `{error, message}` (and `problems` for a policy that fails its checks).

import { Hono, type Context } from 'hono';
import { bearerIdentity, bearerToken } from '../auth/bearer';
import { POLICY_EDIT_SCOPE, POLICY_READ_SCOPE } from '../core/scopes';
import { publicOrigin, stillAdmitted } from '../auth/config';
import { readSession } from '../auth/web-session';
import { type AppBindings, oauthHelpers } from '../compose/runtime';
import { ANONYMOUS, type Identity } from '../core/identity';
import { formatErrors } from '../policy/load';
import type { CheckedPolicy } from '../policy/text';
import { checkDraft } from '../tools/policy-reach';
import { Refusal } from '../http/refusal';
import {
  changePolicy,
  COMMENT_RULE,
  commentOf,
  MAX_REPLAY_LIMIT,
  notAReader,
  OWN_CALLS_NOTE,
  type PolicyChange,
  type PolicyRights,
  personName,
  policyRights,
  policyText,
  replayOver,
  SHADOW_READ_MAX,
  shadowDisagreements,
} from './policy-ops';

type Ctx = Context<AppBindings>;

interface Caller extends PolicyRights {
  identity: Identity;
}

export const policyApi = new Hono<AppBindings>();

/** The caller; anyone else is refused (a Refusal): 401 without a sign-in, 403 for a person who may not. */
async function caller(c: Ctx, write: boolean): Promise<Caller> {
  const { config, stores } = c.var.runtime;
  const request = c.req.raw;
  let identity: Identity;
  if (bearerToken(request)) {
    const bearer = await bearerIdentity(config, oauthHelpers(c.env), request);
    if (!bearer)
      throw Refusal.json(401, 'invalid_token', 'The access token is not valid for this server.');
    // An MCP client's token is for the tools, never for the policy that governs them: not even
    // to read it, since a replay judges drafts over recorded calls.
    const needed = write ? [POLICY_EDIT_SCOPE] : [POLICY_READ_SCOPE, POLICY_EDIT_SCOPE];
    if (!needed.some((scope) => bearer.scope.includes(scope)))
      throw Refusal.json(
        403,
        'insufficient_scope',
        write
          ? `A change needs a token granted the scope "${POLICY_EDIT_SCOPE}" (npm run token -- <user> '' ${POLICY_EDIT_SCOPE}); MCP clients' tokens have not.`
          : `The policy API needs a token granted the scope "${POLICY_READ_SCOPE}" or "${POLICY_EDIT_SCOPE}" (npm run token -- <user> '' ${POLICY_READ_SCOPE}); MCP clients' tokens have neither.`,
      );
    identity = bearer.identity;
  } else {
    // The cookie (or, with AUTH_MODE=none, the loopback door) goes along with any page's
    // request, another site's or an allowed CORS origin's: a change must come from our own page.
    if (write && c.req.header('origin') !== publicOrigin(config, request))
      throw Refusal.json(
        403,
        'cross_origin',
        'A change sent with the session cookie must come from this server’s own page (Origin).',
      );
    if (config.authMode === 'none') identity = ANONYMOUS;
    else {
      const session = await readSession(stores.kv, request);
      if (!session || !stillAdmitted(config, session.identity))
        throw Refusal.json(
          401,
          'unauthorized',
          'Sign in on /admin, or send an access token of this server (npm run token).',
        );
      identity = session.identity;
    }
  }
  const rights = policyRights(config, identity);
  if (write && !rights.editor)
    throw Refusal.json(
      403,
      'forbidden',
      `${personName(identity)} may not change the policy (POLICY_EDITORS).`,
    );
  if (!rights.reader) throw Refusal.json(403, 'forbidden', notAReader(identity));
  // The store takes in the deployed policy on its first check: before anything is read of it.
  await c.var.runtime.policy.active((work) => c.executionCtx.waitUntil(work));
  return { identity, ...rights };
}

policyApi.get('/', async (c) => {
  const me = await caller(c, false);
  const runtime = c.var.runtime;
  const store = runtime.stores.policies();
  const overview = await store.overview();
  const active = overview.active ? await store.get(overview.active.version) : null;
  return c.json({
    active: active
      ? {
          version: active.version,
          sha256: active.sha256,
          author: active.author,
          created: active.created,
          comment: active.comment,
          replaces: active.replaces,
          policy: JSON.parse(active.text) as unknown,
        }
      : null,
    shadow: overview.shadow ? await shadowSummary(c, me, overview.shadow) : null,
    versions: overview.versions,
    events: overview.events,
    deploy_problems: overview.deployProblems,
    editor: me.editor,
  });
});

policyApi.get('/shadow', async (c) => {
  const me = await caller(c, false);
  const overview = await c.var.runtime.stores.policies().overview();
  if (!overview.shadow) return c.json({ shadow: null, disagreements: [] });
  const limit = Number(c.req.query('limit') ?? 100);
  return c.json({
    shadow: await shadowSummary(c, me, overview.shadow),
    disagreements: await shadowDisagreements(
      c.var.runtime,
      overview.shadow.version,
      Number.isInteger(limit) ? limit : 100,
      me.sees,
    ),
  });
});

/**
 * The shadow as this caller may see it: how many calls it disagreed on, of all (an
 * administrator) or of their own among the newest kept (anyone else: a count over other
 * people's calls would still answer a draft's question about their arguments).
 */
async function shadowSummary(
  c: Ctx,
  me: Caller,
  shadow: { version: number; since: number; disagreements: number },
): Promise<Record<string, unknown>> {
  const { version, since } = shadow;
  if (me.sees.all)
    return { version, since, disagreements: shadow.disagreements, calls_seen: 'all' };
  const own = await shadowDisagreements(c.var.runtime, version, SHADOW_READ_MAX, me.sees);
  return { version, since, disagreements: own.length, calls_seen: 'own', note: OWN_CALLS_NOTE };
}

policyApi.get('/:version{[0-9]+}', async (c) => {
  await caller(c, false);
  const found = await c.var.runtime.stores.policies().get(Number(c.req.param('version')));
  if (!found) return refuse(c, 404, 'not_found', `There is no version ${c.req.param('version')}.`);
  const { text, ...meta } = found;
  return c.json({ ...meta, policy: JSON.parse(text) as unknown, text });
});

policyApi.post('/check', async (c) => {
  await caller(c, false);
  const draft = await draftOf(c);
  const { checked } = draft;
  return c.json(
    checked.ok
      ? { ok: true, problems: [], warnings: problems(checked.warnings) }
      : { ok: false, problems: problems(checked.errors), warnings: [] },
  );
});

policyApi.post('/replay', async (c) => {
  const me = await caller(c, false);
  const draft = await draftOf(c);
  const { body, checked } = draft;
  if (!checked.ok)
    return c.json(
      {
        error: 'invalid_policy',
        message: 'The policy fails its checks.',
        problems: problems(checked.errors),
      },
      400,
    );
  const replay = await replayOver(c.var.runtime, checked.policy, body, me.sees);
  if ('wrong' in replay)
    return refuse(
      c,
      400,
      'invalid_request',
      replay.wrong === 'since'
        ? 'since must be a duration (7d, 24h, 30m), an ISO 8601 time or epoch milliseconds.'
        : `limit must be a whole number from 1 to ${MAX_REPLAY_LIMIT}.`,
    );
  return c.json(replay);
});

policyApi.post('/', async (c) => {
  const me = await caller(c, true);
  const body = await jsonBody(c);
  const text = policyText(body.policy);
  const comment = commentOf(body.comment);
  if (text === null)
    return refuse(c, 400, 'invalid_request', 'Send {"policy": {...}, "comment": "..."}.');
  if (comment === null) return refuse(c, 400, 'invalid_request', COMMENT_RULE);
  if (body.activate !== undefined && typeof body.activate !== 'boolean')
    return refuse(c, 400, 'invalid_request', 'activate must be true or false.');
  if (body.shadow !== undefined && typeof body.shadow !== 'boolean')
    return refuse(c, 400, 'invalid_request', 'shadow must be true or false.');
  const against = againstOf(body);
  if (typeof against === 'string') return refuse(c, 400, 'invalid_request', against);
  const answer = await changePolicy(
    c,
    me.identity,
    { kind: 'store', text, activate: body.activate === true, shadow: body.shadow === true },
    { comment, ...against },
  );
  if (!answer.ok)
    return c.json(
      { error: 'invalid_policy', message: 'The policy was not stored.', problems: answer.problems },
      answer.status,
    );
  return c.json({ version: answer.value.version, action: answer.value.event.action }, 201);
});

policyApi.post('/:version{[0-9]+}/activate', (c) => {
  const version = Number(c.req.param('version'));
  return switchVersion(c, { active: version }, { kind: 'activate', version });
});

policyApi.post('/:version{[0-9]+}/shadow', (c) => {
  const version = Number(c.req.param('version'));
  return switchVersion(c, { shadow: version }, { kind: 'shadow', version });
});

policyApi.post('/shadow/stop', (c) =>
  switchVersion(c, { shadow: null }, { kind: 'shadow', version: null }),
);

/** An editor's change of which stored version is active or in shadow, with its comment. */
async function switchVersion(
  c: Ctx,
  done: Record<string, number | null>,
  change: PolicyChange,
): Promise<Response> {
  const me = await caller(c, true);
  const body = await jsonBody(c);
  const comment = commentOf(body.comment);
  if (comment === null) return refuse(c, 400, 'invalid_request', COMMENT_RULE);
  const against = againstOf(body);
  if (typeof against === 'string') return refuse(c, 400, 'invalid_request', against);
  const answer = await changePolicy(c, me.identity, change, { comment, ...against });
  if (!answer.ok) return refuse(c, answer.status, 'refused', answer.problems.join('; '));
  return c.json(done);
}

/** What a change was written against: the version active then, or nothing, on purpose. */
interface Against {
  base?: number;
  forced?: boolean;
}

/**
 * `base` (the version that was active when the change was written, 0 when none was) or
 * `force: true` (recorded on the change as forced). The store refuses an activation or a shadow
 * change that gives neither, or whose base is no longer active, with a 409 naming the version in
 * force (or saying none is): a CI push that silently undid a rollback made on /admin in the
 * meantime is what `base` is for. The console's forms always carry `base`.
 */
function againstOf(body: Record<string, unknown>): Against | string {
  const { base, force } = body;
  if (force !== undefined && force !== true) return 'force, when given, must be true.';
  if (base !== undefined) {
    if (force === true) return 'Send base or force, not both.';
    if (typeof base !== 'number' || !Number.isSafeInteger(base) || base < 0)
      return 'base is the version that was active when you wrote the change (a whole number; 0 when none was).';
    return { base };
  }
  return force === true ? { forced: true } : {};
}

/** The body's `policy`, checked (a check or a replay of a draft). */
async function draftOf(c: Ctx): Promise<{ body: Record<string, unknown>; checked: CheckedPolicy }> {
  const body = await jsonBody(c);
  const text = policyText(body.policy);
  if (text === null) throw Refusal.json(400, 'invalid_request', 'Send {"policy": {...}}.');
  return { body, checked: checkDraft(text, c.var.runtime.clusters) };
}

function problems(list: readonly { pointer: string; message: string }[]): string[] {
  return list.length ? formatErrors(list).split('\n') : [];
}

async function jsonBody(c: Ctx): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
    throw Refusal.json(
      415,
      'unsupported_media_type',
      'Send JSON (Content-Type: application/json).',
    );
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw Refusal.json(400, 'invalid_json', 'The body is not valid JSON.');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw Refusal.json(400, 'invalid_request', 'The body must be a JSON object.');
  return body as Record<string, unknown>;
}

function refuse(c: Ctx, status: 400 | 404 | 409, error: string, message: string): Response {
  return c.json({ error, message }, status);
}
