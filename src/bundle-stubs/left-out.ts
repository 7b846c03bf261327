// The one error every stub in this folder throws. These modules stand in, through the [alias]
// table of wrangler.toml (and of every deploy/*.toml), for dependencies' code that this Worker
// never runs, to keep it out of the bundle. If a dependency update starts to run such code, it
// fails here, loudly and by name, instead of half-working.

/** An Error saying which left-out module was reached, and what to do about it. */
export function leftOut(module: string, stub: string): Error {
  return new Error(
    `${module} is not bundled into this Worker (src/bundle-stubs/${stub} stands in for it, ` +
      'because nothing here was meant to run it), yet it was called. Remove its entry from ' +
      '[alias] in wrangler.toml and deploy/*.toml, and update the bundle-size budget.',
  );
}
