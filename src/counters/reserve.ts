// Reserves the slots of every limit that applies to a call, across scopes: session counters in
// the session's own Durable Object, grant/user/global ones in a PolicyCounters object per scope
// key. Each object reserves its part atomically; if a later part is full or fails, the parts
// already taken are given back. Any store error is reported, and the caller denies.

import type { Identity } from '../core/identity';
import type { AppliedLimit, Decision, LimitedDecision } from '../policy/evaluate';
import type { GuestKey } from '../policy/conditions';
import type { Scope } from '../policy/schema';
import type { ReserveItem } from './window-counters';

/** One place counters live: reserve/release for the items of one scope key. */
export interface CounterTarget {
  reserve(
    items: ReserveItem[],
    now: number,
  ): Promise<LimitedDecision | null> | LimitedDecision | null;
  release(items: Pick<ReserveItem, 'key' | 'windowStart'>[]): Promise<void> | void;
}

export interface CounterBackend {
  /** `guest`: the guest a `guest` limit counts on. */
  target(scope: Scope, identity: Identity, guest?: GuestKey): CounterTarget;
}

export type Reservation =
  | { ok: true; release(): Promise<void> }
  | { ok: false; decision: Decision };

export async function reserveLimits(
  limits: readonly AppliedLimit[],
  identity: Identity,
  backend: CounterBackend,
  now: number,
): Promise<Reservation> {
  // One counters object per scope, and per guest for `guest` limits.
  const byObject = new Map<string, { scope: Scope; guest?: GuestKey; items: ReserveItem[] }>();
  for (const limit of limits) {
    const at = `${limit.scope}:${limit.guest ?? ''}`;
    const group = byObject.get(at) ?? { scope: limit.scope, guest: limit.guest, items: [] };
    group.items.push(limit);
    byObject.set(at, group);
  }
  const taken: { target: CounterTarget; items: ReserveItem[] }[] = [];
  const releaseTaken = async (): Promise<void> => {
    // Best effort: a release that fails leaves the slot used, which errs on the safe side.
    await Promise.allSettled(taken.map(({ target, items }) => target.release(items)));
  };
  try {
    for (const { scope, guest, items } of byObject.values()) {
      const target = backend.target(scope, identity, guest);
      const over = await target.reserve(items, now);
      if (over) {
        await releaseTaken();
        return { ok: false, decision: over };
      }
      taken.push({ target, items });
    }
  } catch (err) {
    await releaseTaken();
    throw err;
  }
  return { ok: true, release: releaseTaken };
}

/**
 * The Durable Object name holding a scope's counters for this identity. A person is counted by
 * their verified email when the sign-in carries one (the one rule for naming a person: the same
 * address in any case is the same person, under whatever id), else by their user id, so that
 * signing in under a second id does not give one person a second quota.
 */
export function counterObjectName(
  scope: Exclude<Scope, 'session'>,
  identity: Pick<Identity, 'userId' | 'email' | 'grantId'>,
  guest?: GuestKey,
): string {
  switch (scope) {
    case 'guest':
      return guestCounterObject(guest);
    case 'grant':
      return `grant:${identity.grantId}`;
    case 'user':
      return identity.email
        ? `user:email:${identity.email.toLowerCase()}`
        : `user:${identity.userId}`;
    case 'global':
      return 'global';
  }
}

/** A guest is counted by its id, unique in the cluster, whichever node it runs on. */
export function guestCounterObject(guest: GuestKey | undefined): string {
  return `guest:${guest ?? 'none'}`;
}

/** The scope of a counters object, from its name (the inverse of counterObjectName). */
export function scopeOfObject(name: string): Exclude<Scope, 'session'> | undefined {
  if (name === 'global') return 'global';
  if (name.startsWith('grant:')) return 'grant';
  if (name.startsWith('user:')) return 'user';
  if (name.startsWith('guest:')) return 'guest';
  return undefined;
}
