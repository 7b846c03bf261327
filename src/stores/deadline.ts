// Every call to a Durable Object (counters, approvals, audit, session ownership) gets a deadline:
// a hung or overloaded object must never hang a tool call or a page. Callers decide what a
// timeout means, and each fails closed (a denial, a refused page, a counted lost record).

/** How long one Durable Object call may take. Round trips take about 1 ms; a few seconds is a fault. */
export const STORE_DEADLINE_MS = 3_000;

export class StoreTimeout extends Error {
  override readonly name = 'StoreTimeout';
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what} did not answer within ${ms} ms`);
  }
}

/**
 * Settles like `work`, or rejects with StoreTimeout after `ms`. The work itself cannot be
 * cancelled: `onLate` gets its value if it still succeeds, so that a late effect (a counter slot
 * taken after the caller gave up) can be undone.
 */
export function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  onLate?: (value: T) => void,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new StoreTimeout(what, ms));
    }, ms);
  });
  const watched = work.then(
    (value) => {
      if (timedOut) onLate?.(value);
      return value;
    },
    (err: unknown) => {
      throw err;
    },
  );
  // A rejection after the deadline has nobody waiting for it; keep it from being reported as unhandled.
  watched.catch(() => undefined);
  return Promise.race([watched, deadline]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

/**
 * A Durable Object stub whose every method call has a deadline. RPC stubs answer any property
 * name, so only calls are wrapped and `then` is left alone (a stub must never look like a promise).
 */
export function timedStub<T extends object>(stub: T, what: string, ms = STORE_DEADLINE_MS): T {
  return new Proxy(stub, {
    get(target, prop) {
      if (prop === 'then') return undefined;
      const member = Reflect.get(target, prop) as unknown;
      if (typeof member !== 'function') return member;
      return (...args: unknown[]) => {
        const called = (target as Record<PropertyKey, (...a: unknown[]) => unknown>)[prop]!(
          ...args,
        );
        return withDeadline(Promise.resolve(called), ms, `${what}.${String(prop)}`);
      };
    },
  });
}
