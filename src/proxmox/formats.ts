// Proxmox's own value formats (pve-common JSONSchema.pm, pve-access-control, qemu-server),
// written as predicates. Each returns null when the value is valid, else what is allowed.

/** `pve-node`: one DNS label (pve_verify_node_name). Length capped like any DNS label. */
export const NODE_RE = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;
export const NODE_RULE =
  'a Proxmox node name: letters, digits and inner hyphens, at most 63 characters (e.g. pve1)';

/**
 * `localhost`, which Proxmox takes for a node: in a path, the node that serves the API; as a
 * clone's target, the source's node. A rule on a node argument, and the node a create's guest is
 * judged to be made on, would see `localhost` instead of the node: refused, for the node's name.
 */
export function isNodeAlias(node: string): boolean {
  return node.toLowerCase() === 'localhost';
}
export const NODE_ALIAS_RULE =
  'must name the node (e.g. pve1), not localhost: the policy judges nodes by name';

/** `pve-vmid`: 100–999999999 (`^[1-9][0-9]{2,8}$`). */
export const VMID_MIN = 100;
export const VMID_MAX = 999_999_999;

/** `dns-name`: dot-separated labels (pve_verify_dns_name), capped at DNS lengths. */
const DNS_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
export const DNS_NAME_RE = new RegExp(`^(?:${DNS_LABEL}\\.)*${DNS_LABEL}$`);
export const DNS_NAME_RULE =
  'a DNS name: labels of letters, digits and inner hyphens separated by dots (e.g. web-01)';

/** `pve-configid` (pve_verify_configid): snapshot names, config keys. */
export const CONFIGID_RE = /^[a-z][a-z0-9_]+$/i;

/** `pve-storage-id` (parse_id). */
export const STORAGE_ID_RE = /^[a-z][a-z0-9\-_.]*[a-z0-9]$/i;

/** `pve-bridge-id`; a Linux interface name, so at most 15 characters. */
export const BRIDGE_RE = /^[-_.A-Za-z0-9]{1,15}$/;

/** `mac-addr`: unicast only (the I/G bit must not be set). */
export const MAC_RE = /^[a-f0-9][02468ace](?::[a-f0-9]{2}){5}$/i;

/** `pve-tag` ($PVE_TAG_RE). */
export const TAG_RE = /^[A-Za-z0-9_][A-Za-z0-9_\-+.]*$/;
export const TAG_MAX = 64;

/** `pve-poolid`, including nested pools (PVE 8.1+: up to three levels). */
export const POOL_RE = /^[A-Za-z0-9.\-_]{1,64}(?:\/[A-Za-z0-9.\-_]{1,64}){0,2}$/;

/** `urlencoded` (pve_verify_urlencoded), used for drive serial and model. */
export const URLENCODED_RE = /^[-%a-zA-Z0-9_.!~*'()]*$/;

/** Any control character (C0, DEL, C1) or a Unicode line/paragraph separator. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds
export const CONTROL_CHAR_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Shortens a user value for an error message, so huge inputs do not come back whole. */
export function quote(value: string, max = 40): string {
  const shown = value.length > max ? `${value.slice(0, max)}…` : value;
  return JSON.stringify(shown);
}

export type TextResult = { ok: true; value: string } | { ok: false; error: string };

/**
 * A list Proxmox keeps space-separated (DNS servers, search domains): items separated by spaces,
 * commas or semicolons, 1 to `most` of them, each `valid`; written back with single spaces.
 */
export function parseSpacedList(
  text: string,
  most: number,
  what: { one: string; many: string },
  valid: (item: string) => boolean,
): TextResult {
  const items = text.split(/[\s,;]+/).filter(Boolean);
  if (items.length === 0 || items.length > most)
    return { ok: false, error: `give 1 to ${most} ${what.many} separated by spaces` };
  const bad = items.find((i) => !valid(i));
  if (bad !== undefined) return { ok: false, error: `${quote(bad)} is not ${what.one}` };
  return { ok: true, value: items.join(' ') };
}

/** A guest's tags as PVE keeps them: `;`-separated (it accepts `,` and spaces on input). */
export function tagList(tags: string | undefined): string[] {
  return tags ? tags.split(/[;, ]+/).filter(Boolean) : [];
}

/**
 * A guest's tags as rules judge them (`target.tags`, `new.tags`), lower-case and in one order, so
 * that tags read twice compare equal (an approval is bound to them).
 */
export function judgedTags(raw: string | undefined): string[] {
  return tagList(raw)
    .map((t) => t.toLowerCase())
    .sort();
}

/** `pve-tag-list`: tags separated by `;` (or `,` or spaces), each a `pve-tag`; kept lower-case, once each. */
export function parseTagList(
  value: string | readonly string[],
): { ok: true; value: string[] } | { ok: false; error: string } {
  const list = typeof value === 'string' ? value.split(/[;, ]+/).filter(Boolean) : value;
  if (list.length > 32) return { ok: false, error: 'at most 32 tags' };
  const bad = list.find((t) => !TAG_RE.test(t) || t.length > TAG_MAX);
  if (bad !== undefined)
    return { ok: false, error: `${quote(bad)} is not a tag (letters, digits, "_", "-", "+", ".")` };
  return { ok: true, value: [...new Set(list.map((t) => t.toLowerCase()))] };
}

/** A description (notes): at most 8192 characters, no control characters but newline and tab. */
export function checkDescription(value: string): string | null {
  if (value.length > 8192) return 'must be at most 8192 characters long';
  return CONTROL_CHAR_RE.test(value.replace(/[\n\t]/g, ' '))
    ? 'control characters other than newline and tab are not allowed'
    : null;
}
