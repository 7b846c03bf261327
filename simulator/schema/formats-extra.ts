// Named string formats of the guest-operation, storage and HA endpoints (pve-common, pve-storage,
// pve-container, pve-ha-manager register_format validators), with PVE's own error texts.
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { PveDie } from './schema-types.ts';

type FormatCheck = (value: string) => void;

function check(ok: boolean, message: string): void {
  if (!ok) throw new PveDie(`${message}\n`);
}

const STORAGE_ID_RE = /^[a-z][a-z0-9\-_.]*[a-z0-9]$/i;
const CONTENT_TYPES = ['images', 'rootdir', 'vztmpl', 'iso', 'backup', 'snippets', 'import'];

function checkCidr(value: string, family: 4 | 6 | 0): boolean {
  const match = /^(.*)\/(\d+)$/.exec(value);
  if (!match) return false;
  const ip = match[1] ?? '';
  const bits = Number(match[2]);
  const v4 = isIPv4(ip) && bits > 7 && bits <= 32;
  const v6 = isIPv6(ip) && bits > 7 && bits <= 128;
  return family === 4 ? v4 : family === 6 ? v6 : v4 || v6;
}

/** One entry of parse_idmap with pve-storage-id ids: '1', 'target' or 'source:target'. */
function checkStoragePair(entry: string): void {
  if (entry === '1') return;
  const ids = /^([^:]+):([^:]+)$/.exec(entry)?.slice(1) ?? [entry];
  for (const id of ids) {
    check(
      STORAGE_ID_RE.test(id),
      `entry '${entry}' contains invalid ID - storage ID '${id}' contains illegal characters`,
    );
  }
}

/** pve-lxc-mp-string: no /./, /../, trailing /. or /.., or leading ../ */
function checkMountPath(value: string): void {
  const bad = /\/\.\.?\//.test(value) || /\/\.\.?$/.test(value) || /^\.\.\//.test(value);
  check(!bad, `${value} contains illegal character sequences`);
}

/** lxc-ip-with-ll-iface: an IP, or a link-local IPv6 with %interface. */
function checkIpWithIface(value: string): void {
  const linkLocal = /^(fe80:[^%]+)%(.*)$/.exec(value);
  if (
    linkLocal &&
    isIPv6(linkLocal[1] ?? '') &&
    /^[a-z][a-z0-9_]{1,20}([:.]\d+)?$/i.test(linkLocal[2] ?? '')
  )
    return;
  check(isIP(value) !== 0, 'value does not look like a valid IP address');
}

/** PVE::ParseUtils $EMAIL_USER_RE and $EMAIL_RE. */
const EMAIL_USER_RE = '[\\w+\\-~]+(\\.[\\w+\\-~]+)*';
const EMAIL_RE = new RegExp(`^${EMAIL_USER_RE}@[a-zA-Z0-9-]+(\\.[a-zA-Z0-9-]+)*$`);

export const EXTRA_CODE_FORMATS: Readonly<Record<string, FormatCheck>> = {
  'email-or-username': (v) =>
    check(
      EMAIL_RE.test(v) || new RegExp(`^${EMAIL_USER_RE}$`).test(v),
      'value does not look like a valid email address or user name',
    ),
  'pve-storage-content': (v) => check(CONTENT_TYPES.includes(v), `invalid content type '${v}'`),
  'storage-pair': checkStoragePair,
  CIDR: (v) => check(checkCidr(v, 0), 'value does not look like a valid CIDR network'),
  'pve-lxc-mp-string': checkMountPath,
  'pve-lxc-dev-string': (v) =>
    check(!/\/\.\.?(?:\/|$)/.test(v) && v.startsWith('/dev/'), `${v} is not a valid device path`),
  'lxc-ip-with-ll-iface': checkIpWithIface,
  // PVE::HA::Tools pve_verify_ha_resource_or_vm_id: `<type>:<name>` or a bare VMID
  'pve-ha-resource-or-vm-id': (v) =>
    check(/^([a-z]+:\S+|\d+)$/.test(v), 'value does not look like a valid ha resource id'),
  // The zone list is /usr/share/zoneinfo/zone.tab on a node; Area/City is the shape of its names.
  'pve-ct-timezone': (v) =>
    check(
      v === 'host' || v === 'UTC' || /^[A-Z][A-Za-z_-]+(\/[A-Za-z0-9_+-]+){1,2}$/.test(v),
      `invalid time zone '${v}'`,
    ),
};
