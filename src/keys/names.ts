// The server's keys by name, and the name of the Durable Object that keeps them
// (./server-keys.ts): apart from the object's class, so that what only names a key imports no
// Durable Object code.

export const SERVER_KEY_NAMES = ['args_hmac', 'request_state'] as const;

/** `args_hmac` keys the argument HMAC; `request_state` signs a 2026-07-28 client's request state. */
export type ServerKeyName = (typeof SERVER_KEY_NAMES)[number];

export const SERVER_KEYS_OBJECT = 'keys';

/** The server's own secret keys, each made once (./server-keys.ts, which implements it). */
export interface KeysObject {
  key(name: ServerKeyName): Promise<string>;
}
