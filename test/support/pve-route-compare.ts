// Compares one of the simulator's parameter schemas with the real PVE 9.1.3 definition of the
// same endpoint: the same names (indexed options as one family, `net[n]`), and for each the same
// type, optionality, enum, range, length, pattern, `requires` and format (named formats by name,
// property-string formats key by key). Returns every difference as a readable line.

type Schema = Readonly<Record<string, unknown>>;

/** The simulator's KeySchema, seen structurally (it lives in simulator/schema/schema-types.ts). */
export type SimSchema = Readonly<Record<string, unknown>>;

const isRecord = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const perlTrue = (value: unknown): boolean =>
  value !== undefined &&
  value !== null &&
  value !== false &&
  value !== '' &&
  value !== '0' &&
  value !== 0;

/** qr// patterns arrive stringified as (?^:...), the same regex as (?:...); Perl reads {,n} as {0,n}. */
const normalizePattern = (pattern: string) =>
  pattern.replace(/\(\?\^:/g, '(?:').replace(/\{,(\d+)\}/g, '{0,$1}');

function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

function sameScalar(real: unknown, sim: unknown): boolean {
  if (real === undefined || real === null) return sim === undefined;
  return sim !== undefined && Number(real) === Number(sim);
}

/** Collapse the simulator's expanded families (net0..net31) onto the real `net[n]` names. */
function collapse(realProps: Schema, sim: SimSchema): Map<string, unknown> {
  const res = new Map<string, unknown>();
  for (const [key, schema] of Object.entries(sim)) {
    const family = /^([a-z]+)(\d+)$/.exec(key)?.[1];
    const indexed =
      family !== undefined &&
      realProps[key] === undefined &&
      realProps[`${family}[n]`] !== undefined;
    const name = indexed ? `${family}[n]` : key;
    if (!res.has(name)) res.set(name, schema);
    else if (res.get(name) !== schema) res.set(name, { inconsistent: true });
  }
  return res;
}

function compareProp(at: string, real: unknown, sim: unknown, out: string[]): void {
  if (!isRecord(real) || !isRecord(sim)) return void out.push(`${at}: not comparable`);
  if (sim.inconsistent) return void out.push(`${at}: indexed options differ between indexes`);
  if (typeof real.alias === 'string' || typeof sim.alias === 'string') {
    if (real.alias !== sim.alias)
      out.push(`${at}: alias ${String(real.alias)} vs ${String(sim.alias)}`);
    return;
  }
  if (real.type !== sim.type) out.push(`${at}: type ${String(real.type)} vs ${String(sim.type)}`);
  if (perlTrue(real.optional) !== (sim.optional === true))
    out.push(`${at}: optional ${perlTrue(real.optional)} vs ${sim.optional === true}`);
  if (perlTrue(real.default_key) !== (sim.defaultKey === true))
    out.push(`${at}: default_key differs`);
  for (const key of ['minimum', 'maximum', 'minLength', 'maxLength'] as const) {
    if (!sameScalar(real[key], sim[key]))
      out.push(`${at}: ${key} ${String(real[key])} vs ${String(sim[key])}`);
  }
  const realEnum = Array.isArray(real.enum) ? real.enum.map(String) : undefined;
  const simEnum = Array.isArray(sim.enum) ? sim.enum.map(String) : undefined;
  if (JSON.stringify(realEnum) !== JSON.stringify(simEnum)) out.push(`${at}: enum differs`);
  const realPattern = typeof real.pattern === 'string' ? normalizePattern(real.pattern) : undefined;
  const simPattern = typeof sim.pattern === 'string' ? sim.pattern : undefined;
  // m/^(?:X)$/ matches what m/^X$/ does unless X has a top-level '|'
  const wrapped =
    simPattern !== undefined &&
    !hasTopLevelAlternation(simPattern) &&
    realPattern === `(?:${simPattern})`;
  if (realPattern !== simPattern && !wrapped) {
    out.push(`${at}: pattern ${String(realPattern)} vs ${String(simPattern)}`);
  }
  if ((real.requires ?? undefined) !== (sim.requires ?? undefined))
    out.push(`${at}: requires differs`);
  compareFormat(at, real.format, sim.format, out);
}

function compareFormat(at: string, real: unknown, sim: unknown, out: string[]): void {
  if (real === undefined || real === null) {
    if (sim !== undefined)
      out.push(`${at}: format ${JSON.stringify(sim).slice(0, 40)} where PVE has none`);
    return;
  }
  if (typeof real === 'string') {
    if (real !== sim)
      out.push(
        `${at}: format ${real} vs ${typeof sim === 'string' ? sim : sim === undefined ? 'none' : 'an inline format'}`,
      );
    return;
  }
  const keys = isRecord(sim) && isRecord(sim.keys) ? sim.keys : undefined;
  if (!isRecord(real) || !keys) return void out.push(`${at}: property-string format missing`);
  compareObject(`${at}.`, real, keys, out);
}

function compareObject(prefix: string, real: Schema, sim: SimSchema, out: string[]): void {
  const simProps = collapse(real, sim);
  for (const key of Object.keys(real)) {
    if (!simProps.has(key)) out.push(`${prefix}${key}: missing in the simulator`);
  }
  for (const [key, schema] of simProps) {
    if (real[key] === undefined) out.push(`${prefix}${key}: not in PVE's schema`);
    else compareProp(`${prefix}${key}`, real[key], schema, out);
  }
}

/** Every difference between the real `parameters` and the simulator's schema of a route. */
export function compareParameters(realParameters: unknown, sim: SimSchema): string[] {
  const props =
    isRecord(realParameters) && isRecord(realParameters.properties)
      ? realParameters.properties
      : {};
  const out: string[] = [];
  compareObject('', props, sim, out);
  return out;
}
