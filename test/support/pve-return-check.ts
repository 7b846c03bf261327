// Checks a response's `data` against an endpoint's `returns` schema from the real PVE API dump,
// the way PVE's JSON output is shaped: required properties present, integers integral, booleans
// as 0/1 numbers (never JSON true/false), enums and minimums kept. Returns are not closed, so
// extra keys pass (real status/current carries many), but every declared key is checked.

type Schema = Readonly<Record<string, unknown>>;

const isRecord = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const perlTrue = (value: unknown): boolean =>
  value !== undefined &&
  value !== null &&
  value !== false &&
  value !== '' &&
  value !== '0' &&
  value !== 0;

function checkType(type: string, value: unknown, at: string, problems: string[]): boolean {
  const fail = (what: string): false => {
    problems.push(`${at}: expected ${what}, got ${JSON.stringify(value)}`);
    return false;
  };
  switch (type) {
    case 'object':
      return isRecord(value) || fail('an object');
    case 'array':
      return Array.isArray(value) || fail('an array');
    case 'string':
      return typeof value === 'string' || fail('a string');
    case 'integer':
      return (typeof value === 'number' && Number.isInteger(value)) || fail('an integer');
    case 'number':
      return typeof value === 'number' || fail('a number');
    case 'boolean':
      // PVE prints booleans as 0/1 integers
      return value === 0 || value === 1 || fail('0 or 1');
    case 'null':
      return value === null || fail('null');
    default:
      return true; // 'any' and unknown types
  }
}

export function checkReturns(schema: unknown, value: unknown, at = 'data'): string[] {
  const problems: string[] = [];
  walk(schema, value, at, problems);
  return problems;
}

function walk(schema: unknown, value: unknown, at: string, problems: string[]): void {
  if (!isRecord(schema)) return;
  if (value === null && perlTrue(schema.optional)) return; // e.g. a POST returning null
  const type = schema.type;
  if (typeof type === 'string' && !checkType(type, value, at, problems)) return;
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((choice) => String(choice) === String(value))
  ) {
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`);
  }
  if (schema.minimum !== undefined && typeof value === 'number' && value < Number(schema.minimum)) {
    problems.push(`${at}: ${value} is below the minimum ${String(schema.minimum)}`);
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) walk(schema.items, item, `${at}[${i}]`, problems);
    return;
  }
  if (!isRecord(value) || !isRecord(schema.properties)) return;
  for (const [key, sub] of Object.entries(schema.properties)) {
    if (key.endsWith('[n]')) {
      const family = key.slice(0, -3);
      for (const [k, v] of Object.entries(value))
        if (new RegExp(`^${family}\\d+$`).test(k)) walk(sub, v, `${at}.${k}`, problems);
      continue;
    }
    if (!(key in value)) {
      if (isRecord(sub) && !perlTrue(sub.optional))
        problems.push(`${at}.${key}: missing (not optional)`);
      continue;
    }
    walk(sub, value[key], `${at}.${key}`, problems);
  }
}
