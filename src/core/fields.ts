// Object schemas list many fields of one kind: the figures a Proxmox answer may carry, the
// columns of a read tool's rows. fieldsNamed names them in one string, in order, each key with
// the schema `make` gives it.

import type { z } from 'zod';

/** The keys of a space-separated list: 'cpu mem' is 'cpu' | 'mem'. */
type Words<S extends string> = S extends `${infer Head} ${infer Tail}` ? Head | Words<Tail> : S;

/** One field per key of `keys` (space-separated), in that order, each made by `make`. */
export function fieldsNamed<S extends string, T extends z.ZodType>(
  keys: S,
  make: () => T,
): { [K in Words<S>]: T } {
  return Object.fromEntries(keys.split(' ').map((key) => [key, make()])) as {
    [K in Words<S>]: T;
  };
}
