// A 403 from Proxmox whose text names no privilege ("Permission check failed", which PVE raises
// for its `or` checks and where a handler checks in code), explained from what the token holds:
// the ACL paths the refused request is about, read with that token (GET /access/permissions,
// kept briefly per cluster, token and path), and, for a request that makes a guest, the
// privilege it needs there. Only for the token PVE_IDENTITIES gives a person (their own, or the
// fallback's): what it holds is theirs to know, as they act with it.
// Pure but for the cache; the client (./client.ts) does the reading.

/** What the refused request is about, and what it is known to need there. */
export interface RefusalPaths {
  /** The ACL paths to read, at most three, the most specific first. */
  paths: string[];
  /** A privilege the request needs on any one of `paths` (PVE's documented check), if known. */
  needs?: string;
}

/** What a token holds on one path: its privileges, or null where that could not be read. */
export interface Held {
  path: string;
  privileges: string[] | null;
}

const GUEST_MADE = /^\/nodes\/[^/]+\/(?:qemu|lxc)$/;
const CLONE = /^\/nodes\/[^/]+\/(?:qemu|lxc)\/\d+\/clone$/;
const GUEST = /^\/nodes\/[^/]+\/(?:qemu|lxc)\/(\d+)(?:\/|$)/;
const STORAGE = /^\/nodes\/[^/]+\/storage\/([^/]+)(?:\/|$)/;
const NODE = /^\/nodes\/([^/]+)(?:\/|$)/;
const POOL = /^\/pools\/([^/]+)$/;

/** A value PVE would put in an ACL path: no slash, no space, nothing to smuggle. */
const segment = (value: string | null): string | null =>
  value !== null && /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value) ? value : null;

/**
 * The ACL paths a request to `path` (without its query) with `params` (its form body or query)
 * is checked on. Making a guest (create, restore, clone) needs VM.Allocate on the new guest's
 * /vms/<id> or its pool's /pool/<pool> (PVE raises a bare refusal when it has neither); a restore
 * over an existing guest may pass with VM.Backup instead, so nothing is said to be needed there.
 */
export function refusalPaths(method: string, path: string, params: URLSearchParams): RefusalPaths {
  const vmid = segment(params.get('vmid'));
  const pool = segment(params.get('pool'));
  const onPool = pool ? [`/pool/${pool}`] : [];
  // A restore over an existing guest may pass with VM.Backup instead: a VM's (archive and
  // force), a container's (restore and force).
  const yes = (name: string) => /^(1|true)$/.test(params.get(name) ?? '');
  const overExisting = (params.has('archive') || yes('restore')) && yes('force');
  if (method === 'POST' && (GUEST_MADE.test(path) || CLONE.test(path)) && !overExisting) {
    const id = CLONE.test(path) ? segment(params.get('newid')) : vmid;
    if (id) return { paths: [`/vms/${id}`, ...onPool], needs: 'VM.Allocate' };
  }
  const paths: string[] = [];
  const guest = GUEST.exec(path)?.[1] ?? vmid;
  if (guest) paths.push(`/vms/${guest}`);
  const storage = segment(STORAGE.exec(path)?.[1] ?? null);
  if (storage) paths.push(`/storage/${storage}`);
  const inPool =
    segment(POOL.exec(path)?.[1] ?? null) ??
    (path === '/pools' ? segment(params.get('poolid')) : null);
  if (inPool) paths.push(`/pool/${inPool}`);
  const node = segment(NODE.exec(path)?.[1] ?? null);
  if (!paths.length && node) paths.push(`/nodes/${node}`);
  if (!paths.length) paths.push('/');
  return { paths: paths.slice(0, 3) };
}

/** How long what a token holds on a path is kept: a grant takes effect within this long. */
export const HELD_TTL_MS = 10_000;
const MAX_KEPT = 500;
/**
 * Settled answers only: workerd lets no request wait on I/O another request started (it would
 * hang), so a read under way is never shared.
 */
const kept = new Map<string, { at: number; privileges: string[] }>();

/** What was read under `key` (cluster, token id and path) less than HELD_TTL_MS ago. */
export function keptHeld(key: string, now: number): string[] | undefined {
  const entry = kept.get(key);
  if (entry && now - entry.at < HELD_TTL_MS) return entry.privileges;
  kept.delete(key);
  return undefined;
}

export function keepHeld(key: string, privileges: string[], now: number): void {
  kept.delete(key);
  if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
  kept.set(key, { at: now, privileges });
}

/** Forgets every path's privileges (tests that change a token's grants). */
export function forgetHeld(): void {
  kept.clear();
}

/** The paths where the token lacks `needs`, when every path was read and none has it. */
export function lackingEverywhere(held: readonly Held[], needs: string | undefined): boolean {
  return (
    needs !== undefined &&
    held.length > 0 &&
    held.every((h) => h.privileges !== null && !h.privileges.includes(needs))
  );
}
