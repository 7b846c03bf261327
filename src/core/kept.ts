// One value per key, made the first time it is asked for and kept: the configuration and the
// Runtime per environment object, the sign-in per configuration.

/** The value kept under `key`, made (and kept) the first time. */
export function kept<K, V>(
  map: { get(key: K): V | undefined; set(key: K, value: V): unknown },
  key: K,
  make: () => V,
): V {
  const found = map.get(key);
  if (found !== undefined) return found;
  const made = make();
  map.set(key, made);
  return made;
}
