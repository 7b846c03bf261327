// A bound on how deeply tool arguments may nest, checked before anything walks them: schema
// validation, canonical JSON and redaction all recurse, and arguments 20,000 levels deep would
// overflow the stack and surface as an internal error instead of a clear refusal.

/** No tool argument needs more (a config object holding property-string fields is 3). */
export const MAX_ARG_DEPTH = 32;

/**
 * The top-level argument (its name) under which `value` nests deeper than `max` levels, or null.
 * Iterative, so a hostile depth cannot overflow the stack here either.
 */
export function tooDeep(value: unknown, max: number): string | null {
  if (value === null || typeof value !== 'object') return null;
  const stack: { value: unknown; depth: number; root: string }[] = Object.entries(value).map(
    ([k, v]) => ({ value: v, depth: 2, root: k }),
  );
  while (stack.length) {
    const item = stack.pop()!;
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth > max) return item.root;
    for (const child of Object.values(item.value))
      stack.push({ value: child, depth: item.depth + 1, root: item.root });
  }
  return null;
}
