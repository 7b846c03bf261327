// Cloud-init settings of a QEMU VM (qemu-server's ci* options) and the SSH keys and DNS settings
// containers share: each validated to what Proxmox accepts, and put in the form Proxmox wants
// (sshkeys URL-encoded for a VM, as qemu-server unescapes them before checking them).

import { CONTROL_CHAR_RE, DNS_NAME_RE, parseSpacedList, quote, type TextResult } from './formats';
import { checkIPv4, checkIPv6, ipv4Setting, ipv6Setting } from './net-address';
import { parseWith, type OptionResult } from './option-rules';
import type { PropertyFormat } from './property-string';

/** ipconfig[n]: `ip=CIDR|dhcp,gw=IPv4,ip6=CIDR|dhcp|auto,gw6=IPv6`. */
export const IPCONFIG_FORMAT: PropertyFormat = {
  keys: {
    ip: { type: 'string', check: ipv4Setting(['dhcp']) },
    gw: { type: 'string', check: checkIPv4 },
    ip6: { type: 'string', check: ipv6Setting(['dhcp', 'auto']) },
    gw6: { type: 'string', check: checkIPv6 },
  },
};

export function parseIpconfig(text: string): OptionResult {
  return parseWith(text, IPCONFIG_FORMAT, (p) => {
    if (p.ip === undefined && p.ip6 === undefined)
      return 'give ip (e.g. ip=10.0.0.5/24,gw=10.0.0.1 or ip=dhcp) or ip6';
    if (p.gw !== undefined && (p.ip === undefined || p.ip === 'dhcp'))
      return 'gw needs a static ip (with dhcp the gateway comes from DHCP)';
    if (p.gw6 !== undefined && (p.ip6 === undefined || p.ip6 === 'dhcp' || p.ip6 === 'auto'))
      return 'gw6 needs a static ip6';
    return null;
  });
}

// OpenSSH public key lines: type, base64 blob, optional comment (validate_ssh_public_keys).
const KEY_TYPES = [
  'ssh-ed25519',
  'ssh-rsa',
  'ssh-dss',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
];
const KEY_LINE_RE = new RegExp(
  `^(?:${KEY_TYPES.map((t) => t.replace(/[.]/g, '\\.')).join('|')}) [A-Za-z0-9+/]{16,16384}={0,3}(?: [^\\s].{0,254})?$`,
);
const MAX_KEYS = 32;

/** One or more OpenSSH public keys, one per line; canonical: trimmed lines joined by \n. */
export function parseSshKeys(text: string): TextResult {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0)
    return {
      ok: false,
      error: 'give at least one OpenSSH public key, e.g. ssh-ed25519 AAAA... user@host',
    };
  if (lines.length > MAX_KEYS) return { ok: false, error: `at most ${MAX_KEYS} keys` };
  for (const line of lines) {
    if (CONTROL_CHAR_RE.test(line) || !KEY_LINE_RE.test(line)) {
      return {
        ok: false,
        error: `${quote(line)} is not an OpenSSH public key (TYPE BASE64 [comment], e.g. ssh-ed25519 AAAA... user@host; never a private key)`,
      };
    }
  }
  return { ok: true, value: lines.join('\n') };
}

/**
 * How a VM's sshkeys travel: qemu-server's `urlencoded` format, which it unescapes before it
 * checks the keys (the form body encodes the result once more).
 */
export function encodeSshKeysForVm(keys: string): string {
  return encodeURIComponent(keys);
}

/** A search domain list: DNS names separated by spaces, commas or semicolons. */
export function parseSearchDomains(text: string): TextResult {
  const domain = { one: 'a DNS domain', many: 'DNS domains' };
  return parseSpacedList(text, 6, domain, (i) => i.length <= 253 && DNS_NAME_RE.test(i));
}

/** A user name cloud-init can create: a Unix login name. */
export const CIUSER_RE = /^[a-z_][a-z0-9_-]{0,31}$/;

/** A password: printable, no line breaks; Proxmox hashes it for Linux guests. */
export function checkPassword(value: string): string | null {
  if (value.length < 5 || value.length > 128) return 'must be 5 to 128 characters';
  return CONTROL_CHAR_RE.test(value) ? 'control characters and line breaks are not allowed' : null;
}
