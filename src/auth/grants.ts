// Grants as an administrator sees and ends them: who holds which grant, through which client,
// since when and last used when; and revocation, which deletes the grant and its tokens (the
// OAuth library's revokeGrant: the next request with them gets 401) and ends the MCP sessions
// the grant opened (their open streams close; the session ids are dead for everyone) and cancels
// the approvals it was still waiting for. Whether a grant still exists is read where the library
// keeps it, so that an approval of a grant gone any other way (expired) is never offered either.
//
// KV keys of ours beside the library's (`grant:<user>:<grant>` until the grant is revoked or
// expires, `token:...`, `client:...`):
//   grant-used:<grantId>                  epoch ms of the last MCP request (written at most once
//                                         a minute per isolate), expires after 31 days
//   grant-session:<grantId>:<session>     one per MCP session the grant opened (the session's
//                                         Durable Object name), expires after 31 days

import type { GrantSummary, OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { Stores } from '../compose/runtime';

const INDEX_TTL_S = 31 * 86_400;
const USE_WRITE_EVERY_MS = 60_000;
/** How many grants the admin page lists at most (KV lists 1,000 keys a page). */
const MAX_LISTED = 2_000;

export interface GrantRow {
  userId: string;
  grantId: string;
  clientId: string;
  clientName: string;
  /** What the person granted at consent (../core/scopes.ts, and policy:edit). */
  scopes: string[];
  createdAt: number;
  expiresAt: number | null;
  lastUsed: number | null;
  who: string;
}

const lastWritten = new Map<string, number>();

/** Notes that a grant was used now (for "last used"); cheap: one KV write a minute per isolate. */
export function noteGrantUse(
  kv: KVNamespace,
  grantId: string,
  waitUntil: (p: Promise<unknown>) => void,
  now: number,
): void {
  if (grantId === 'local' || now - (lastWritten.get(grantId) ?? 0) < USE_WRITE_EVERY_MS) return;
  if (lastWritten.size > 10_000) lastWritten.clear();
  lastWritten.set(grantId, now);
  waitUntil(
    kv
      .put(`grant-used:${grantId}`, String(now), { expirationTtl: INDEX_TTL_S })
      .catch(() => undefined),
  );
}

/** Remembers that a grant opened an MCP session, so revoking the grant can end it. */
export async function recordGrantSession(
  kv: KVNamespace,
  grantId: string,
  session: string,
): Promise<void> {
  if (grantId === 'local') return;
  await kv.put(`grant-session:${grantId}:${session}`, '1', {
    expirationTtl: INDEX_TTL_S,
  });
}

/** Every grant (up to MAX_LISTED), newest first, with its client's name and last use. */
export async function listGrants(
  stores: Pick<Stores, 'kv'>,
  oauth: OAuthHelpers,
): Promise<{ grants: GrantRow[]; more: boolean }> {
  const users = new Set<string>();
  let cursor: string | undefined;
  let seen = 0;
  do {
    const page = await stores.kv.list({ prefix: 'grant:', cursor });
    for (const key of page.keys) {
      // grant:<userId>:<grantId>; grant ids never contain ':', so the last one separates.
      const rest = key.name.slice('grant:'.length);
      const at = rest.lastIndexOf(':');
      if (at > 0) users.add(rest.slice(0, at));
    }
    seen += page.keys.length;
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor && seen < MAX_LISTED);
  const summaries = (await Promise.all([...users].map((u) => allGrantsOf(oauth, u)))).flat();
  const clients = new Map<string, string>();
  const rows = await Promise.all(summaries.map((g) => grantRow(stores, oauth, g, clients)));
  rows.sort((a, b) => b.createdAt - a.createdAt);
  return { grants: rows, more: cursor !== undefined };
}

/** One grant of a person, as the admin page lists it; null when it no longer exists. */
export async function findGrant(
  stores: Pick<Stores, 'kv'>,
  oauth: OAuthHelpers,
  userId: string,
  grantId: string,
): Promise<GrantRow | null> {
  const summary = (await allGrantsOf(oauth, userId)).find((g) => g.id === grantId);
  return summary ? grantRow(stores, oauth, summary, new Map()) : null;
}

/**
 * Whether a grant still exists, read where the OAuth library keeps it. The local person's
 * (AUTH_MODE=none) is always there: it is no grant of the library's and cannot be revoked.
 */
export async function grantExists(
  kv: KVNamespace,
  userId: string,
  grantId: string,
): Promise<boolean> {
  if (grantId === 'local') return true;
  return (await kv.get(`grant:${userId}:${grantId}`)) !== null;
}

/** The grant ids among these that no longer exist (each looked up once). */
export async function goneGrants(
  kv: KVNamespace,
  asked: readonly { user_id: string; grant_id: string }[],
): Promise<Set<string>> {
  const unique = new Map(asked.map((a) => [a.grant_id, a.user_id]));
  const gone = await Promise.all(
    [...unique].map(async ([grantId, userId]) =>
      (await grantExists(kv, userId, grantId)) ? [] : [grantId],
    ),
  );
  return new Set(gone.flat());
}

async function grantRow(
  stores: Pick<Stores, 'kv'>,
  oauth: OAuthHelpers,
  g: GrantSummary,
  clients: Map<string, string>,
): Promise<GrantRow> {
  if (!clients.has(g.clientId))
    clients.set(
      g.clientId,
      (await oauth.lookupClient(g.clientId).catch(() => null))?.clientName ?? '',
    );
  const used = await stores.kv.get(`grant-used:${g.id}`);
  const meta = (g.metadata ?? {}) as { email?: unknown; login?: unknown };
  return {
    userId: g.userId,
    grantId: g.id,
    clientId: g.clientId,
    clientName: clients.get(g.clientId) || '(unnamed client)',
    scopes: [...(g.scope ?? [])],
    createdAt: g.createdAt * 1000,
    expiresAt: g.expiresAt ? g.expiresAt * 1000 : null,
    lastUsed: used ? Number(used) : null,
    who: typeof meta.email === 'string' ? meta.email : g.userId,
  };
}

async function allGrantsOf(oauth: OAuthHelpers, userId: string): Promise<GrantSummary[]> {
  const out: GrantSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await oauth.listUserGrants(userId, { cursor });
    out.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/**
 * Revokes a grant: its tokens stop working at once, every MCP session it opened is ended, and
 * its pending approvals are cancelled (as `by`, at `now`). Returns how many sessions were ended
 * (and how many could not be reached: they are dead anyway, since every request needs a token,
 * but their open streams may stay until they idle out) and approvals cancelled (null when the
 * approvals store did not answer: the pages still refuse them, as the grant is gone).
 */
export async function revokeGrant(
  stores: Pick<Stores, 'kv' | 'session' | 'approvals'>,
  oauth: OAuthHelpers,
  userId: string,
  grantId: string,
  by: { who: string; now: number },
): Promise<{ ended: number; unreachable: number; cancelled: number | null }> {
  await oauth.revokeGrant(grantId, userId);
  const cancelling = stores
    .approvals()
    .cancelForGrant(grantId, by.who, by.now)
    .catch(() => null);
  const prefix = `grant-session:${grantId}:`;
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await stores.kv.list({ prefix, cursor });
    names.push(...page.keys.map((k) => k.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  const results = await Promise.allSettled(
    names.map(async (key) => {
      const session = key.slice(prefix.length);
      await stores.session(session).endSession();
      await stores.kv.delete(key);
    }),
  );
  const ended = results.filter((r) => r.status === 'fulfilled').length;
  return { ended, unreachable: results.length - ended, cancelled: await cancelling };
}
