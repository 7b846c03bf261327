// Durable Object stubs typed from the small interfaces of the env module (which index.ts checks the
// classes against). workers-types maps every RPC result through its serialisable types, which
// recurses forever on recursive JSON types (an approval's arguments) and turns `unknown` members
// into `never`; so callers see an object's methods with their declared signatures, each
// answering a promise, and every call gets the store deadline. The one cast that needs is here.

import { STORE_DEADLINE_MS, timedStub } from './deadline';

/** A Durable Object binding whose objects answer `T` (the interface its class implements). */
export type Bound<T> = DurableObjectNamespace<T & Rpc.DurableObjectBranded>;

/** The methods `K` of `T` as an RPC stub offers them. */
export type RpcOf<T, K extends keyof T> = {
  [P in K]: T[P] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/** The object named `name` of `ns`, as its methods `K`, each call with a deadline. */
export function objectPort<T, K extends keyof T>(
  ns: Bound<T>,
  name: string,
  what: string,
  ms = STORE_DEADLINE_MS,
): RpcOf<T, K> {
  return timedStub(ns.get(ns.idFromName(name)) as object, what, ms) as RpcOf<T, K>;
}
