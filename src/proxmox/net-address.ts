// IP addresses and networks as Proxmox checks them (pve-common's ipv4/ipv6/CIDR formats), and
// the IP settings of a NIC: an address with its prefix, or a keyword (dhcp, auto, manual).
// Predicates return null when the value is valid, else what is allowed.

import { parseSpacedList, quote, type TextResult } from './formats';

const IPV4_OCTET = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export function isIPv4(value: string): boolean {
  const parts = value.split('.');
  return parts.length === 4 && parts.every((p) => IPV4_OCTET.test(p));
}

/** Up to 8 hextets, at most one `::`, an IPv4 tail allowed; no zone (`%eth0`). */
export function isIPv6(value: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(value) || value.split('::').length > 2 || value.includes(':::'))
    return false;
  if (/^:[^:]/.test(value) || /[^:]:$/.test(value)) return false;
  const groups = value.split(':');
  const last = groups[groups.length - 1] ?? '';
  const v4 = last.includes('.');
  if (v4 && !isIPv4(last)) return false;
  const hextets = (v4 ? groups.slice(0, -1) : groups).filter((g) => g !== '');
  if (!hextets.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const count = hextets.length + (v4 ? 2 : 0);
  return value.includes('::') ? count < 8 : count === 8;
}

export const isIP = (value: string): boolean => isIPv4(value) || isIPv6(value);

/** ADDRESS/PREFIX of one family; PVE wants a prefix of at least 8 bits. */
export function isCidr(value: string, family: 4 | 6): boolean {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(value);
  if (!m) return false;
  const bits = Number(m[2]);
  return family === 4
    ? isIPv4(m[1]!) && bits >= 8 && bits <= 32
    : isIPv6(m[1]!) && bits >= 8 && bits <= 128;
}

export const checkIPv4 = (v: string): string | null =>
  isIPv4(v) ? null : `${quote(v)} is not an IPv4 address`;
export const checkIPv6 = (v: string): string | null =>
  isIPv6(v) ? null : `${quote(v)} is not an IPv6 address`;

/** An IPv4 setting: ADDRESS/PREFIX, or one of `keywords` (dhcp; manual for containers). */
export function ipv4Setting(keywords: readonly string[]): (v: string) => string | null {
  return (v) =>
    keywords.includes(v) || isCidr(v, 4)
      ? null
      : `${quote(v)} is not an IPv4 address with its prefix (e.g. 10.0.0.5/24) or ${keywords.join(', ')}`;
}

/** An IPv6 setting: ADDRESS/PREFIX, or one of `keywords` (dhcp, auto; manual for containers). */
export function ipv6Setting(keywords: readonly string[]): (v: string) => string | null {
  return (v) =>
    keywords.includes(v) || isCidr(v, 6)
      ? null
      : `${quote(v)} is not an IPv6 address with its prefix (e.g. 2001:db8::5/64) or ${keywords.join(', ')}`;
}

/** A list of IP addresses (DNS servers), separated by spaces, commas or semicolons. */
export function parseAddressList(text: string): TextResult {
  return parseSpacedList(text, 3, { one: 'an IP address', many: 'IP addresses' }, isIP);
}
