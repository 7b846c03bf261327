// Guest config keys as a tool may set them: for each guest kind, the keys Proxmox defines that we
// accept (each with its value rule) and the ones we refuse (each with the reason). A value is
// parsed to its canonical form: property strings key by key, as for create. The tables are in
// config-key-tables.ts; test/proxmox/config-keys.node.test.ts checks them against the real PVE schema.

import { own } from '../core/own';
import type { PropertyValue } from './option-rules';
import { LXC_TABLE, QEMU_TABLE } from './config-key-tables';

export type { ConfigRule, GuestKind, KeyTable } from './config-key-types';
import type { ConfigRule, GuestKind, KeyTable } from './config-key-types';

export const CONFIG_TABLES: Readonly<Record<GuestKind, KeyTable>> = {
  qemu: QEMU_TABLE,
  lxc: LXC_TABLE,
};

/** A value as it is kept after parsing (and as policy rules see it, property strings as fields). */
export type ConfigValue = boolean | number | string | PropertyValue;

export type KeyLookup =
  | { kind: 'accepted'; rule: ConfigRule }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown' };

/**
 * The table entry for a concrete key (net3 → net[n], if 3 is within Proxmox's range). Own
 * entries only: `constructor` is no rule, though every object has one.
 */
export function lookupKey(kind: GuestKind, key: string): KeyLookup {
  const table = CONFIG_TABLES[kind];
  const m = /^([a-z]+)(0|[1-9]\d{0,2})$/.exec(key);
  const count = m ? own(table.counts, m[1]!) : undefined;
  const name = count !== undefined ? (Number(m![2]) < count ? `${m![1]}[n]` : null) : key;
  if (name === null) return { kind: 'unknown' };
  const rule = own(table.accepted, name);
  if (rule) return { kind: 'accepted', rule };
  const reason = own(table.refused, name);
  return reason ? { kind: 'refused', reason } : { kind: 'unknown' };
}

const describeKind = (kind: GuestKind): string => (kind === 'qemu' ? 'a VM' : 'a container');

/** Parses one value for one guest kind: the canonical value, or why it is refused. */
export function parseConfigValue(
  kind: GuestKind,
  key: string,
  raw: string | number | boolean,
): { ok: true; value: ConfigValue } | { ok: false; error: string } {
  const found = lookupKey(kind, key);
  if (found.kind === 'unknown')
    return { ok: false, error: `not a config option of ${describeKind(kind)}` };
  if (found.kind === 'refused') return { ok: false, error: `refused: ${found.reason}` };
  const rule = found.rule;
  const text = typeof raw === 'boolean' ? (raw ? '1' : '0') : String(raw);
  switch (rule.kind) {
    case 'boolean':
      return text === '1' || text === '0'
        ? { ok: true, value: text === '1' }
        : { ok: false, error: 'must be true or false' };
    case 'integer':
    case 'number': {
      const n = typeof raw === 'number' ? raw : /^-?\d+(?:\.\d+)?$/.test(text) ? Number(text) : NaN;
      if (!Number.isFinite(n) || (rule.kind === 'integer' && !Number.isInteger(n)))
        return {
          ok: false,
          error: `must be ${rule.kind === 'integer' ? 'an integer' : 'a number'}`,
        };
      return n < rule.min || n > rule.max
        ? { ok: false, error: `must be ${rule.min}–${rule.max}` }
        : { ok: true, value: n };
    }
    case 'enum':
      return rule.values.includes(text)
        ? { ok: true, value: text }
        : { ok: false, error: `must be one of ${rule.values.join(', ')}` };
    case 'text':
    case 'property':
      if (typeof raw !== 'string') return { ok: false, error: 'must be a string' };
      return rule.parse(raw.trim());
  }
}

/** The form value Proxmox gets for a parsed value. */
export function sendConfigValue(kind: GuestKind, key: string, value: ConfigValue): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'object') return value.text;
  const found = lookupKey(kind, key);
  return found.kind === 'accepted' && found.rule.kind === 'text' && found.rule.send
    ? found.rule.send(String(value))
    : String(value);
}

/** Every concrete key a table accepts (indexed ones expanded). */
export function acceptedKeys(kind: GuestKind): string[] {
  const table = CONFIG_TABLES[kind];
  return Object.keys(table.accepted).flatMap((name) => {
    const base = /^([a-z]+)\[n\]$/.exec(name)?.[1];
    return base === undefined
      ? [name]
      : Array.from({ length: table.counts[base] ?? 0 }, (_, i) => `${base}${i}`);
  });
}

/** The fields of an accepted property-string key (net0 → model, bridge, ...); throws for any other. */
export function keyFields(kind: GuestKind, key: string): readonly string[] {
  const found = lookupKey(kind, key);
  if (found.kind === 'accepted' && found.rule.kind === 'property') return found.rule.fields;
  throw new Error(`${key} is not a property-string key of the ${kind} config table`);
}

/**
 * What policy rules may reach inside `config` (args.config.memory, args.config.net0.bridge): each
 * accepted key of either kind, and each field of its property string.
 */
export function configPolicyFields(): string[] {
  const out = new Set<string>();
  for (const kind of ['qemu', 'lxc'] as const) {
    for (const key of acceptedKeys(kind)) {
      out.add(key);
      const found = lookupKey(kind, key);
      if (found.kind === 'accepted' && found.rule.kind === 'property')
        for (const f of found.rule.fields) out.add(`${key}.${f}`);
    }
  }
  return [...out];
}
