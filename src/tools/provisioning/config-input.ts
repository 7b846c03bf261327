// The `config` and `delete` arguments of pve_set_vm_config. Each key must be one Proxmox defines
// for a guest and one we accept (src/proxmox/config-keys.ts); each value is parsed to its
// canonical form as for create (property strings key by key), so rules see args.config.memory
// and args.config.net0.bridge. Arguments are parsed before the guest kind is known (a zod object
// with a cross-field check could not be extended by the seam), so `forKind` checks them again
// for the kind the call names, before anything is read or sent.

import { z } from 'zod';
import { ToolFailure } from '../../calls/tool-spec';
import { isObjectMemberName } from '../../proxmox/api-path';
import {
  lookupKey,
  parseConfigValue,
  type ConfigValue,
  type GuestKind,
} from '../../proxmox/config-keys';
import { keysChecked } from '../input-formats';

const KEY_RE = /^[a-z][a-z0-9_-]{0,31}$/;
const MAX_KEYS = 64;
const NOT_AN_OPTION = 'not a config option Proxmox defines for a VM or a container';

/**
 * A config key (also each entry of `delete`). Config keys are parameters of PUT .../config, and
 * none is named like a member of every object: `constructor` fits the pattern but is refused.
 */
export const configKey = z
  .string()
  .regex(KEY_RE, { error: 'must be a config key such as memory or net0' })
  .refine((key) => !isObjectMemberName(key), { error: NOT_AN_OPTION });

/** The raw value back from its parsed form, to parse it again for one kind. */
function rawOf(value: ConfigValue): string | number | boolean {
  return typeof value === 'object' ? value.text : value;
}

/** Parses a value as a VM option, else as a container option (checked for the call's kind later). */
function parseEither(
  key: string,
  raw: string | number | boolean,
): { ok: true; value: ConfigValue } | { ok: false; error: string } {
  const asVm = parseConfigValue('qemu', key, raw);
  if (asVm.ok) return asVm;
  const asCt = parseConfigValue('lxc', key, raw);
  if (asCt.ok) return asCt;
  const vm = lookupKey('qemu', key).kind !== 'unknown';
  const ct = lookupKey('lxc', key).kind !== 'unknown';
  if (vm && ct && asVm.error !== asCt.error)
    return { ok: false, error: `for a VM: ${asVm.error}; for a container: ${asCt.error}` };
  if (vm) return asVm;
  if (ct) return asCt;
  return { ok: false, error: NOT_AN_OPTION };
}

/** A key named like a member of every object is refused on the raw input (a record drops `__proto__`). */
const memberNamed = (key: string): string | null =>
  isObjectMemberName(key) ? NOT_AN_OPTION : null;

export const configArg = keysChecked(
  memberNamed,
  z
    .record(configKey, z.union([z.string().max(32_768), z.number(), z.boolean()]))
    .transform((raw, ctx): Record<string, ConfigValue> => {
      const keys = Object.keys(raw);
      if (keys.length > MAX_KEYS) {
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_KEYS} keys at once` });
        return z.NEVER;
      }
      const out: Record<string, ConfigValue> = {};
      for (const key of keys) {
        const parsed = parseEither(key, raw[key]!);
        if (parsed.ok) out[key] = parsed.value;
        else ctx.addIssue({ code: 'custom', path: [key], message: parsed.error });
      }
      return out;
    }),
);

export interface ConfigChange {
  config: Record<string, ConfigValue>;
  delete: string[];
}

/** The change checked for the guest's kind: every key valid for it; throws invalid_arguments. */
export function forKind(
  tool: string,
  kind: GuestKind,
  change: { config?: Record<string, ConfigValue>; delete?: string[] },
): ConfigChange {
  const config = change.config ?? {};
  const deletes = [...new Set(change.delete ?? [])];
  const fields: { field: string; message: string }[] = [];
  for (const [key, value] of Object.entries(config)) {
    const parsed = parseConfigValue(kind, key, rawOf(value));
    if (!parsed.ok) fields.push({ field: `config.${key}`, message: parsed.error });
  }
  for (const key of deletes) {
    const found = lookupKey(kind, key);
    if (found.kind !== 'accepted')
      fields.push({
        field: 'delete',
        message: `${key}: ${found.kind === 'refused' ? `refused: ${found.reason}` : `not a config option of ${kind === 'qemu' ? 'a VM' : 'a container'}`}`,
      });
    if (Object.hasOwn(config, key))
      fields.push({ field: 'delete', message: `${key} is both set and deleted` });
  }
  if (!Object.keys(config).length && !deletes.length)
    fields.push({
      field: 'config',
      message: 'give config (keys to set) or delete (keys to remove)',
    });
  if (fields.length)
    throw new ToolFailure('invalid_arguments', `Invalid arguments for ${tool}`, fields);
  return { config, delete: deletes };
}
