// What an audit record keeps of a call's arguments: a canonical JSON text to hash (so identical
// calls match whatever their key order), the hash itself, and a redacted copy of the values.
// Pure functions: no storage, no clock.

import { SECRET_PARAMS } from '../proxmox/secret-params';
import { isPropertyValue } from '../core/property-value';

/** Replaces the value of a sensitive argument. */
export const REDACTED = '[redacted]';
/** Replaces every argument of a call nested too deep to walk (see calls/arg-depth.ts). */
export const NOT_STORED_TOO_DEEP = '[not stored: nested too deep]';
/** Strings longer than this are cut: an audit trail records what was asked, not payloads. */
export const MAX_ARG_STRING = 1_000;
/**
 * Argument names redacted whatever the policy says: every Proxmox parameter that holds a secret
 * (src/proxmox/secret-params.ts), and the names that usually hold credentials. Not SSH public
 * keys (`sshkeys`, `ssh_public_keys`): they are no secret, and who gets in is what an approver
 * of a key change must read.
 */
export const BUILT_IN_SENSITIVE: readonly string[] = [...SECRET_PARAMS, 'api_key', 'apikey'];

/**
 * JSON text with object keys sorted (by UTF-16 code units, as RFC 8785 does), no whitespace,
 * `undefined`, function and symbol members dropped, arrays kept in order (such entries become
 * `null`, as in JSON.stringify). A top-level `undefined` gives `null`, so there is always a text
 * to hash. Throws a TypeError on a cycle or a BigInt, like JSON.stringify.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set()) ?? 'null';
}

function write(value: unknown, open: Set<object>): string | undefined {
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    // Dates and the like serialise as JSON.stringify would serialise them.
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      throw new TypeError('canonicalJson: a BigInt has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  const obj = value as object;
  if (open.has(obj)) throw new TypeError('canonicalJson: the value contains a cycle');
  open.add(obj);
  let text: string;
  if (Array.isArray(obj)) {
    text = `[${obj.map((item: unknown) => write(item, open) ?? 'null').join(',')}]`;
  } else {
    const record = obj as Record<string, unknown>;
    const members: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const member = write(record[key], open);
      if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
    }
    text = `{${members.join(',')}}`;
  }
  open.delete(obj);
  return text;
}

export { sha256Hex } from '../encoding';

/**
 * A copy of `args` fit for storage: each argument named in `sensitive` or in BUILT_IN_SENSITIVE
 * (case-insensitive) becomes "[redacted]", at the top level and inside object arguments too
 * (pve_set_vm_config's `config.cipassword`, pve_api_request's `params.password`: there the keys
 * are Proxmox parameters); a `sensitive` entry `<argument>.<key>` (`params.my-secret`) redacts
 * that key of that object argument only; a parsed property string inside an object is kept as
 * its text, as the top-level ones are; every string longer than MAX_ARG_STRING, at any depth, is
 * cut with a marker.
 */
export function redactArgs(
  args: Record<string, unknown>,
  sensitive: readonly string[],
): Record<string, unknown> {
  const names = new Set(
    [...BUILT_IN_SENSITIVE, ...sensitive.filter((s) => !s.includes('.'))].map((name) =>
      name.toLowerCase(),
    ),
  );
  const paths = new Set(sensitive.filter((s) => s.includes('.')).map((s) => s.toLowerCase()));
  return clean(args, names, paths, '') as Record<string, unknown>;
}

/**
 * The exact Proxmox parameters shown to an approver (flat, as `key` or `<step>.key`), redacted
 * like the arguments they come from. Upstream names are not always argument names
 * (`ssh_public_keys` is sent as `ssh-public-keys`; `params` and `config` are spread into their
 * keys), so a parameter is redacted when its name is a built-in secret or the last part of a
 * `sensitive` entry, when it is a key of an object argument named sensitive, or when its value is
 * the value of a sensitive argument.
 */
export function redactUpstream(
  params: Record<string, string>,
  sensitive: readonly string[],
  args: Record<string, unknown>,
): Record<string, string> {
  const names = new Set(
    [...BUILT_IN_SENSITIVE, ...sensitive].map((name) =>
      (name.split('.').pop() ?? name).toLowerCase(),
    ),
  );
  const values = new Set<string>();
  for (const entry of sensitive) {
    const value = entry
      .split('.')
      .reduce<unknown>(
        (at, key) => (isRecord(at) && Object.hasOwn(at, key) ? at[key] : undefined),
        args,
      );
    if (isRecord(value) && !isPropertyValue(value))
      for (const key of Object.keys(value)) names.add(key.toLowerCase());
    else for (const leaf of leaves(value)) values.add(leaf);
  }
  return Object.fromEntries(
    Object.entries(params).map(([key, value]) => {
      const name = (key.split('.').pop() ?? key).toLowerCase();
      return [key, names.has(name) || values.has(value) ? REDACTED : cutString(value)];
    }),
  );
}

/** The texts a value is sent as (a list: each item, and joined as Proxmox lists are). */
function leaves(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (isPropertyValue(value)) return [value.text];
  if (Array.isArray(value))
    return [...value.flatMap(leaves), value.map(String).join(';'), value.map(String).join(',')];
  if (typeof value === 'boolean') return [value ? '1' : '0', String(value)];
  return typeof value === 'object' ? [] : [String(value)];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function clean(
  value: unknown,
  names: ReadonlySet<string>,
  paths: ReadonlySet<string>,
  at: string,
): unknown {
  if (typeof value === 'string') return cutString(value);
  if (Array.isArray(value)) return value.map((item) => clean(item, names, paths, at));
  if (value !== null && typeof value === 'object') {
    if (isPropertyValue(value)) return cutString(value.text);
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const path = at ? `${at}.${key}`.toLowerCase() : key.toLowerCase();
      const hidden = names.has(key.toLowerCase()) || paths.has(path);
      // defineProperty: a key named __proto__ stays a plain entry of the copy.
      Object.defineProperty(out, key, {
        value: hidden ? REDACTED : clean(item, names, paths, at ? `${at}.${key}` : key),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** Keeps the first MAX_ARG_STRING code units (never half a surrogate pair) and says how much went. */
export function cutString(text: string, max = MAX_ARG_STRING): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…[cut ${text.length - end} chars]`;
}

const CUT_RE = /…\[cut \d+ chars\]$/;

/** Whether a stored string is one cutString shortened (its end is the marker, not the value). */
export function wasCut(text: string): boolean {
  return CUT_RE.test(text);
}

/**
 * The values a redacted copy hid (each string, number and property string's text, at any depth
 * under a redacted key): what the rest of a call's output (its result, an echo in an error) must
 * not carry either. `redacted` is `source` as redactArgs or redactAll made it.
 */
export function hiddenValues(source: unknown, redacted: unknown, out: string[] = []): string[] {
  if (redacted === REDACTED && source !== REDACTED) return leafTexts(source, out);
  if (Array.isArray(source) && Array.isArray(redacted))
    for (const [i, item] of source.entries()) hiddenValues(item, redacted[i], out);
  else if (isRecord(source) && isRecord(redacted) && !isPropertyValue(source))
    for (const key of Object.keys(source))
      if (Object.hasOwn(redacted, key)) hiddenValues(source[key], redacted[key], out);
  return out;
}

function leafTexts(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' && Number.isFinite(value)) out.push(String(value));
  else if (isPropertyValue(value)) out.push(value.text);
  else if (Array.isArray(value)) for (const item of value) leafTexts(item, out);
  else if (isRecord(value)) for (const item of Object.values(value)) leafTexts(item, out);
  return out;
}

/** Every argument value replaced, keys kept: for when the list of sensitive names is unknown. */
export function redactAll(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(args).map((key) => [key, REDACTED]));
}
