// Proxmox property strings (`key=value,key=value`, with one optional default key written
// bare), parsed key by key against the keys a format allows and printed back canonically.
// Mirrors pve-common's parse_property_string, but stricter: values can never contain the
// separators or control characters, so a parsed-then-printed string cannot carry a key the
// format does not know.

import { own } from '../core/own';
import { CONTROL_CHAR_RE, quote } from './formats';

export type KeyRule =
  | { type: 'boolean' }
  | { type: 'integer'; min?: number; max?: number }
  | { type: 'number'; min?: number; max?: number }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'string'; check: (value: string) => string | null };

export interface PropertyFormat {
  keys: Readonly<Record<string, KeyRule>>;
  /** The key whose value may be written without `key=` (e.g. `model` for net, `file` for disks). */
  defaultKey?: string;
  /** Old or alternative key names, mapped to the canonical key. */
  aliases?: Readonly<Record<string, string>>;
  /** Keys that name a value of another key (net: `virtio=MAC` means model=virtio, macaddr=MAC). */
  keyAliases?: { valueKey: string; setsKey: string; names: readonly string[] };
}

export type Parsed = Record<string, string>;
export type ParseResult = { ok: true; value: Parsed } | { ok: false; error: string };

const TRUE_WORDS = new Set(['1', 'on', 'yes', 'true']);
const FALSE_WORDS = new Set(['0', 'off', 'no', 'false']);
const NUMBER_RE = /^[+-]?(?:\d+\.\d+|\d+\.|\.\d+|\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER_RE = /^[+-]?\d+$/;

type Checked = { ok: true; text: string } | { ok: false; error: string };

/** Checks one value against its rule and returns its canonical text, or an error. */
function checkValue(key: string, raw: string, rule: KeyRule): Checked {
  switch (rule.type) {
    case 'boolean': {
      const lower = raw.toLowerCase();
      if (TRUE_WORDS.has(lower)) return { ok: true, text: '1' };
      if (FALSE_WORDS.has(lower)) return { ok: true, text: '0' };
      return { ok: false, error: `${key} must be 1 or 0, got ${quote(raw)}` };
    }
    case 'integer':
    case 'number': {
      const re = rule.type === 'integer' ? INTEGER_RE : NUMBER_RE;
      const n = Number(raw);
      const representable = rule.type === 'integer' ? Number.isSafeInteger(n) : Number.isFinite(n);
      if (!re.test(raw) || !representable) {
        return { ok: false, error: `${key} must be ${article(rule.type)}, got ${quote(raw)}` };
      }
      if (rule.min !== undefined && n < rule.min) {
        return { ok: false, error: `${key} must be at least ${rule.min}, got ${raw}` };
      }
      if (rule.max !== undefined && n > rule.max) {
        return { ok: false, error: `${key} must be at most ${rule.max}, got ${raw}` };
      }
      return { ok: true, text: String(n) };
    }
    case 'enum':
      if (!rule.values.includes(raw)) {
        return {
          ok: false,
          error: `${key} must be one of ${rule.values.join(', ')}; got ${quote(raw)}`,
        };
      }
      return { ok: true, text: raw };
    case 'string': {
      const problem = rule.check(raw);
      return problem === null
        ? { ok: true, text: raw }
        : { ok: false, error: `${key}: ${problem}` };
    }
  }
}

function article(type: 'integer' | 'number'): string {
  return type === 'integer' ? 'an integer' : 'a number';
}

export function parsePropertyString(text: string, format: PropertyFormat): ParseResult {
  if (CONTROL_CHAR_RE.test(text)) {
    return { ok: false, error: 'control characters and line breaks are not allowed' };
  }
  const out: Parsed = {};
  const parts = text.split(',');
  for (const part of parts) {
    if (part.trim() === '') {
      return { ok: false, error: 'empty entry (stray comma)' };
    }
    const eq = part.indexOf('=');
    let key: string;
    let raw: string;
    if (eq === -1) {
      if (!format.defaultKey) return { ok: false, error: `${quote(part)} needs a key (key=value)` };
      key = format.defaultKey;
      raw = part;
    } else {
      key = part.slice(0, eq);
      raw = part.slice(eq + 1);
      if (raw.includes('=')) {
        return { ok: false, error: `${key}: the value must not contain "="` };
      }
      if (raw === '') return { ok: false, error: `${key}: empty value` };
      const named = format.keyAliases;
      if (named?.names.includes(key)) {
        if (Object.hasOwn(out, named.setsKey)) {
          return { ok: false, error: `${named.setsKey} is given twice` };
        }
        out[named.setsKey] = key;
        key = named.valueKey;
      }
      key = own(format.aliases ?? {}, key) ?? key;
    }
    // Own entries only: the keys come from the caller, and every object has a `constructor`.
    const rule = own(format.keys, key);
    if (!rule) {
      return { ok: false, error: `unknown key ${quote(key)}; allowed: ${allowedKeys(format)}` };
    }
    if (Object.hasOwn(out, key)) return { ok: false, error: `${key} is given twice` };
    const checked = checkValue(key, raw, rule);
    if (!checked.ok) return checked;
    out[key] = checked.text;
  }
  return { ok: true, value: out };
}

export function allowedKeys(format: PropertyFormat): string {
  return Object.keys(format.keys).join(', ');
}

/** Prints like pve-common's print_property_string: the default key bare first, then the rest sorted. */
export function printPropertyString(value: Parsed, format: PropertyFormat): string {
  const parts: string[] = [];
  const first = format.defaultKey;
  if (first !== undefined && value[first] !== undefined) parts.push(value[first]);
  for (const key of Object.keys(value).sort()) {
    if (key !== first) parts.push(`${key}=${value[key]}`);
  }
  return parts.join(',');
}
