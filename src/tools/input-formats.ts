// Argument schemas several tools share, each validated to Proxmox's own format: property strings
// (parsed key by key into their canonical text and typed fields), guest names, tags, notes,
// pools, sizes and memory. What a value may not carry cannot reach Proxmox.

import { z } from 'zod';
import {
  DNS_NAME_RE,
  DNS_NAME_RULE,
  POOL_RE,
  VMID_MAX,
  VMID_MIN,
  checkDescription,
  parseTagList,
  type TextResult,
} from '../proxmox/formats';
import { checkPassword, parseSshKeys } from '../proxmox/cloud-init';
import { checkedText, type OptionResult, type PropertyValue } from '../proxmox/option-rules';
import { tagName } from './common';

/** 4 TiB, qemu-server's hotplug ceiling; far above any host we expect. */
export const MAX_MEMORY_MIB = 4_194_304;

/** A property-string argument: a bounded string, parsed into its canonical form. */
export function propertyString(parse: (text: string) => OptionResult, example: string) {
  return z
    .string()
    .max(1024)
    .transform((text, ctx): PropertyValue => {
      const result = parse(text.trim());
      if (result.ok) return result.value;
      ctx.addIssue({ code: 'custom', message: `${result.error} (e.g. ${example})` });
      return z.NEVER;
    });
}

/** A string argument checked (and made canonical) by one of Proxmox's format parsers. */
export function parsedString(parse: (text: string) => TextResult, max: number) {
  return z
    .string()
    .max(max)
    .transform((text, ctx): string => {
      const result = parse(text);
      if (result.ok) return result.value;
      ctx.addIssue({ code: 'custom', message: result.error });
      return z.NEVER;
    });
}

/**
 * A record argument whose raw keys are judged first. zod's record drops a `__proto__` key without
 * a word (assigning it would set the prototype of the copy it builds), so the call would go on
 * without it; a check on the record's output could never see it. `problem` says why a key is
 * refused, or null; a refused key is named (config.__proto__) and the record is not parsed.
 */
export function keysChecked<T extends z.ZodType>(
  problem: (key: string) => string | null,
  record: T,
) {
  return z.preprocess((raw, ctx) => {
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      for (const key of Object.keys(raw)) {
        const why = problem(key);
        if (why !== null) ctx.addIssue({ code: 'custom', path: [key], message: why });
      }
    }
    return raw;
  }, record);
}

export const optionalVmid = z.number().int().min(VMID_MIN).max(VMID_MAX).optional();

/** A guest name (`dns-name`): a VM's name, a container's hostname. */
export const dnsName = z
  .string()
  .max(253)
  .refine((v) => DNS_NAME_RE.test(v), { error: `must be ${DNS_NAME_RULE}` });

export const tags = z
  .union([z.array(tagName).max(32), z.string().max(1024)])
  .transform((value, ctx): string[] => {
    const result = parseTagList(value);
    if (result.ok) return result.value;
    ctx.addIssue({ code: 'custom', message: result.error });
    return z.NEVER;
  });

export const description = z
  .string()
  .max(8192)
  .superRefine((s, ctx) => {
    const problem = checkDescription(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const poolId = z
  .string()
  .max(200)
  .refine((v) => POOL_RE.test(v), {
    error: 'must be a pool id: letters, digits, ".", "-", "_" (nested with "/")',
  });

export const memoryMib = z.number().int().min(16).max(MAX_MEMORY_MIB);

/** CPU cores (per socket for a VM). */
export const cpuCores = z.number().int().min(1).max(1024);

/** A password set in a new guest (cloud-init's user, a container's root): never shown back. */
export const guestPassword = parsedString(checkedText(checkPassword), 128);

/** OpenSSH public keys, one per line. */
export const sshPublicKeys = parsedString(parseSshKeys, 32_768);

type FormValue = string | number | boolean | PropertyValue | undefined;

/**
 * Form parameters from parsed arguments, in the order given: booleans as 1/0 (pveproxy refuses
 * `true`), property strings by their canonical text; undefined ones left out.
 */
export function formParams(values: Readonly<Record<string, FormValue>>): Record<string, string> {
  // fromEntries defines each key as an own entry: pve_api_request's params are the caller's names.
  return Object.fromEntries(
    Object.entries(values).flatMap(([key, value]) =>
      value === undefined
        ? []
        : [
            [
              key,
              typeof value === 'boolean'
                ? value
                  ? '1'
                  : '0'
                : typeof value === 'object'
                  ? value.text
                  : String(value),
            ],
          ],
    ),
  );
}
