// What the policy API (./policy-api.ts) and the /admin policy console (./policy-console.ts)
// share: reading a draft and a comment, replaying a draft over the recorded calls a reader may
// see, the shadow's disagreements likewise, and what follows a change (the audit record, and
// this isolate asking the store again).
//
// Whose calls: a replay or a shadow answers, call by call, which rule of a draft fired, and a
// draft's rules can test any recorded value, a character at a time. So a reader sees through
// them only what they may read on /admin/audit: an administrator every call; an editor who is
// not one their own calls only, whose replay is judged over their own calls alone (counts too:
// nothing of another person's call enters it).

import type { Context } from 'hono';
import type { Config } from '../config';
import type { StoredAuditRecord } from '../audit/record';
import type { AppBindings, Runtime } from '../compose/runtime';
import type { Identity } from '../core/identity';
import type { CompiledPolicy } from '../policy/load';
import type { ShadowDisagreement } from '../policy/shadow';
import { POLICY_EVENT_TOOL } from '../audit/record';
import type { ChangeBy, PolicyEvent, StoreAnswer } from '../policy-store/types';
import { type ReplayReport, type ReplayTool, replayPolicy } from '../replay/replay';
import { TOOLS } from '../tools';
import { isAdmin, isEditor } from './admins';

/** Replay over the last 7 days by default, at most this many calls. */
const DEFAULT_SINCE_MS = 7 * 86_400_000;
export const DEFAULT_REPLAY_LIMIT = 1_000;
export const MAX_REPLAY_LIMIT = 10_000;
export const MAX_COMMENT = 500;

/** Each tool's input schema (to read recorded arguments again) and what makes a call a preview. */
export const REPLAY_TOOLS: ReadonlyMap<string, ReplayTool> = new Map(
  TOOLS.map((t) => [
    t.name,
    {
      input: t.input,
      dryRun: t.dryRun,
      target: t.target,
      makes: t.makes,
      inherits: t.inherits,
      newlyInherited: t.newlyInherited,
    },
  ]),
);

/** Whose recorded calls a reader sees in replays and the shadow: everyone's, or their own. */
export type CallsSeen = { all: true } | { all: false; own: Identity };

/** What a person may do with the policy: read it (administrators and policy editors), change it. */
export interface PolicyRights {
  reader: boolean;
  editor: boolean;
  /** Whose recorded calls replays and the shadow show them. */
  sees: CallsSeen;
}

/**
 * Administrators and policy editors read the policy; editors change it. Replays and the shadow
 * show an administrator every call (they read them all on /admin/audit), anyone else their own.
 */
export function policyRights(config: Config, identity: Identity): PolicyRights {
  const admin = isAdmin(config, identity);
  const editor = isEditor(config, identity);
  return {
    reader: admin || editor,
    editor,
    sees: admin ? { all: true } : { all: false, own: identity },
  };
}

/** Why a person who is neither may not read the policy. */
export const notAReader = (identity: Identity): string =>
  `${personName(identity)} is neither an administrator nor a policy editor of this server.`;

/** What an answer says of the calls it covers, for a reader who sees only their own. */
export const OWN_CALLS_NOTE =
  "Only your own recorded calls: you are not an administrator (ADMIN_USERS, ADMIN_GROUPS), who alone may read other people's calls. Limits shared with other people (scope user of another person, grant, global) count only your calls.";

export type ReplayAnswer = ReplayReport & {
  since: number;
  truncated: boolean;
  /** `all` recorded calls, or the reader's `own` only (then `note` says what that means). */
  calls_seen: 'all' | 'own';
  note?: string;
};

/**
 * A draft replayed over the calls recorded since `since` (at most `limit`, the newest) that the
 * reader may see: another person's call never enters a replay for someone who may not read it.
 */
async function replayDraft(
  runtime: Runtime,
  draft: CompiledPolicy,
  since: number,
  limit: number,
  sees: CallsSeen,
): Promise<ReplayAnswer> {
  const { records, truncated } = await recordedCalls(runtime, since, limit, sees);
  return {
    since,
    truncated,
    calls_seen: sees.all ? 'all' : 'own',
    ...(sees.all ? {} : { note: OWN_CALLS_NOTE }),
    ...replayPolicy(draft, records, REPLAY_TOOLS, runtime.clusters[0]),
  };
}

/** Disagreements the shadow kept that a reader sees at most (of the newest). */
export const SHADOW_READ_MAX = 1_000;

/** The shadow's newest disagreements the reader may see, at most `limit`, with how many. */
export async function shadowDisagreements(
  runtime: Runtime,
  version: number,
  limit: number,
  sees: CallsSeen,
): Promise<ShadowDisagreement[]> {
  const store = runtime.stores.policies();
  if (sees.all) return store.disagreements(version, limit);
  const own = (await store.disagreements(version, SHADOW_READ_MAX)).filter((d) =>
    isCallOf(d, sees.own),
  );
  return own.slice(0, limit);
}

/** A shadow disagreement of this person's call (by user id; older ones by the name recorded). */
function isCallOf(d: ShadowDisagreement, who: Identity): boolean {
  return d.user_id !== undefined ? d.user_id === who.userId : d.user === personName(who);
}

/**
 * Stored arguments a replay holds at most (about; a record's are at most 16 KiB): a Worker has
 * 128 MB, and a trail full of the largest records must not take a replay past it.
 */
const MAX_REPLAY_ARG_BYTES = 24 * 1024 * 1024;

/**
 * The recorded calls since `since`, oldest first, at most `limit` and MAX_REPLAY_ARG_BYTES of
 * arguments (the newest ones when there are more: `truncated` says so). Policy changes recorded
 * beside them are left out.
 */
async function recordedCalls(
  runtime: Runtime,
  since: number,
  limit: number,
  sees: CallsSeen,
): Promise<{ records: StoredAuditRecord[]; truncated: boolean }> {
  const audit = runtime.stores.audit('records', 10_000);
  const out: StoredAuditRecord[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  // The store's user filter also matches an email; the user id decides.
  const user = sees.all ? undefined : sees.own.userId;
  for (;;) {
    const page = await audit.query({ from: since, cursor, limit: 1_000, user });
    for (const r of page.records) {
      if (r.tool === POLICY_EVENT_TOOL) continue;
      if (user !== undefined && r.user_id !== user) continue;
      bytes += JSON.stringify(r.args).length;
      if (bytes > MAX_REPLAY_ARG_BYTES)
        return { records: out.slice(0, limit).reverse(), truncated: true };
      out.push(r);
    }
    if (out.length >= limit || !page.next_cursor) {
      const truncated = out.length > limit || (out.length === limit && page.next_cursor !== null);
      return { records: out.slice(0, limit).reverse(), truncated };
    }
    cursor = page.next_cursor;
  }
}

/**
 * A change an editor makes: a new version (stored, and perhaps made active or put in shadow), or
 * which stored version is active or in shadow (null: stop the shadow).
 */
export type PolicyChange =
  | { kind: 'store'; text: string; activate: boolean; shadow: boolean }
  | { kind: 'activate'; version: number }
  | { kind: 'shadow'; version: number | null };

/** Why (the editor's comment), and the active version the editor saw (`base`), or `forced`. */
export type ChangeReason = Pick<ChangeBy, 'comment' | 'base' | 'forced'>;

/**
 * The one way the console and the API change the policy: the store checks the change and
 * records it (its history, the audit trail); this isolate then asks the store again before its
 * next call. Answers the version the change is about.
 */
export async function changePolicy(
  c: Context<AppBindings>,
  editor: Identity,
  change: PolicyChange,
  why: ChangeReason,
): Promise<StoreAnswer<{ version: number | null; event: PolicyEvent }>> {
  const { runtime } = c.var;
  const store = runtime.stores.policies();
  const by: ChangeBy = { actor: personName(editor), now: runtime.clock.now(), ...why };
  let answer: StoreAnswer<{ version?: number; event: PolicyEvent }>;
  if (change.kind === 'store') {
    const { kind: _store, ...stored } = change;
    answer = await store.add({ ...stored, ...why, author: by.actor }, by.now);
  } else if (change.kind === 'activate') answer = await store.activate(change.version, by);
  else answer = await store.shadow(change.version, by);
  if (!answer.ok) return answer;
  runtime.policy.forget();
  const version = change.kind === 'store' ? (answer.value.version ?? null) : change.version;
  return { ok: true, value: { version, event: answer.value.event } };
}

/**
 * A draft replayed over the calls since `since` (default 7 days back), at most `limit` (default
 * DEFAULT_REPLAY_LIMIT); or which of the two is wrong, and nothing is read.
 */
export async function replayOver(
  runtime: Runtime,
  draft: CompiledPolicy,
  window: { since?: unknown; limit?: unknown },
  sees: CallsSeen,
): Promise<ReplayAnswer | { wrong: 'since' | 'limit' }> {
  const w = replayWindow(window.since, window.limit, runtime.clock.now());
  return 'wrong' in w ? w : replayDraft(runtime, draft, w.since, w.limit, sees);
}

/** The calls a replay reads: since when, and how many at most; or which of the two is wrong. */
function replayWindow(
  since: unknown,
  limit: unknown,
  now: number,
): { since: number; limit: number } | { wrong: 'since' | 'limit' } {
  const from = sinceOf(since, now);
  if (from === null) return { wrong: 'since' };
  const most = limit === undefined ? DEFAULT_REPLAY_LIMIT : limit;
  if (typeof most !== 'number' || !Number.isInteger(most) || most < 1 || most > MAX_REPLAY_LIMIT)
    return { wrong: 'limit' };
  return { since: from, limit: most };
}

/** `since`: a duration back from now (7d, 24h, 30m), an ISO 8601 time, or epoch ms; default 7 days. */
function sinceOf(value: unknown, now: number): number | null {
  if (value === undefined || value === null || value === '') return now - DEFAULT_SINCE_MS;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : null;
  if (typeof value !== 'string') return null;
  const duration = /^(\d{1,5})([dhm])$/.exec(value.trim());
  if (duration) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[duration[2] as 'd' | 'h' | 'm'];
    return now - Number(duration[1]) * unit;
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/** The policy as stored: a JSON object is written out (2-space JSON), a string is kept as sent. */
export function policyText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value))
    return JSON.stringify(value, null, 2);
  return null;
}

export const COMMENT_RULE = `Say why in "comment" (1 to ${MAX_COMMENT} characters): it goes into the history and the audit trail.`;

export function commentOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const comment = value.trim();
  return comment.length >= 1 && comment.length <= MAX_COMMENT ? comment : null;
}

/** How a person is named in the history and the audit trail. */
export function personName(identity: Identity): string {
  return identity.email ?? identity.userId;
}
