// Building blocks for the QEMU option formats: key rules (boolean, integer, enum, pattern...),
// the parsed value every option yields (its canonical text and typed fields), and the one parse
// step they share.

import { own } from '../core/own';
import { propertyValue, type FieldValue, type PropertyValue } from '../core/property-value';
import { type TextResult, URLENCODED_RE, quote } from './formats';
import {
  parsePropertyString,
  printPropertyString,
  type KeyRule,
  type Parsed,
  type PropertyFormat,
} from './property-string';

export type { FieldValue, PropertyValue } from '../core/property-value';
export type OptionResult = { ok: true; value: PropertyValue } | { ok: false; error: string };

export const bool: KeyRule = { type: 'boolean' };
export const int = (min?: number, max?: number): KeyRule => ({ type: 'integer', min, max });
export const num = (min?: number, max?: number): KeyRule => ({ type: 'number', min, max });
export const oneOf = (...values: string[]): KeyRule => ({ type: 'enum', values });
export const matching = (re: RegExp, rule: string): KeyRule => ({
  type: 'string',
  check: (v) => (re.test(v) ? null : `${quote(v)} is not ${rule}`),
});

/** PVE's `urlencoded` format with a length cap (drive serial and model). */
export const urlencoded = (what: string, max: number): KeyRule => ({
  type: 'string',
  check: (v) =>
    URLENCODED_RE.test(v) && v.length <= max
      ? null
      : `${quote(v)} is not a URL-encoded ${what} of at most ${max} characters`,
});

/** Every field a parsed property string of this format can have (its keys, plus derived ones). */
export function fieldsOf(format: PropertyFormat, derived: readonly string[] = []): string[] {
  return [...Object.keys(format.keys), ...derived];
}

/** Turns parsed strings into typed fields using the format's rules. */
function typed(parsed: Parsed, format: PropertyFormat): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const [key, text] of Object.entries(parsed)) {
    const rule = own(format.keys, key);
    if (rule?.type === 'boolean') out[key] = text === '1';
    else if (rule?.type === 'integer' || rule?.type === 'number') out[key] = Number(text);
    else out[key] = text;
  }
  return out;
}

export function parseWith(
  text: string,
  format: PropertyFormat,
  finish: (parsed: Parsed) => string | null = () => null,
  derive: (parsed: Parsed) => Record<string, FieldValue> = () => ({}),
): OptionResult {
  const result = parsePropertyString(text, format);
  if (!result.ok) return result;
  const problem = finish(result.value);
  if (problem !== null) return { ok: false, error: problem };
  const value = result.value;
  return {
    ok: true,
    value: propertyValue(printPropertyString(value, format), {
      ...typed(value, format),
      ...derive(value),
    }),
  };
}

/** A plain string checked by a predicate (null when valid), as a parser yielding it unchanged. */
export function checkedText(check: (value: string) => string | null) {
  return (value: string): TextResult => {
    const problem = check(value);
    return problem === null ? { ok: true, value } : { ok: false, error: problem };
  };
}
