// Lookups by a key that comes from outside (a tool argument, a config key, a property-string
// key, a parameter name): only a table's own entries count, so a key named like an
// Object.prototype member (`constructor`, `toString`, `__proto__`) finds nothing, instead of a
// function inherited from Object.prototype that the caller would take for an entry.

/** `table[key]` when `key` is the table's own entry, else undefined. */
export function own<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
