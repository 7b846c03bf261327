// Named formats of the guest-operation and storage endpoints for the request checker
// (pve-schema-check.ts): addresses and networks (pve-common), storage content types and storage
// maps (pve-storage), container mount/device paths, time zones and name servers (pve-container),
// and qemu-server's ipconfig/watchdog/rng/cicustom property strings. Each returns PVE's error
// text or null. Pure and import-free, like the checker, because it runs inside workerd too.

type Schema = Readonly<Record<string, unknown>>;

function isIPv4(value: string): boolean {
  const parts = value.split('.');
  return parts.length === 4 && parts.every((p) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(p));
}

/** An IPv6 address: up to 8 hextets, one '::' at most, an IPv4 tail allowed. */
function isIPv6(value: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(value) || value.split('::').length > 2) return false;
  const groups = value.split(':');
  const last = groups[groups.length - 1] ?? '';
  const v4 = last.includes('.');
  if (v4 && !isIPv4(last)) return false;
  if (/^:[^:]/.test(value) || /[^:]:$/.test(value)) return false; // a lone ':' at either end
  const hextets = (v4 ? groups.slice(0, -1) : groups).filter((g) => g !== '');
  if (!hextets.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const count = hextets.length + (v4 ? 2 : 0);
  return value.includes('::') ? count < 8 : count === 8;
}

const isIP = (value: string) => isIPv4(value) || isIPv6(value);

function isCidr(value: string, family: 4 | 6 | 0): boolean {
  const match = /^(.*)\/(\d+)$/.exec(value);
  if (!match) return false;
  const bits = Number(match[2]);
  const v4 = isIPv4(match[1] ?? '') && bits > 7 && bits <= 32;
  const v6 = isIPv6(match[1] ?? '') && bits > 7 && bits <= 128;
  return family === 4 ? v4 : family === 6 ? v6 : v4 || v6;
}

const DNS_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const DNS_NAME_RE = new RegExp(`^(?:${DNS_LABEL}\\.)*${DNS_LABEL}$`);
const STORAGE_ID_RE = /^[a-z][a-z0-9\-_.]*[a-z0-9]$/i;
const CONTENT_TYPES = ['images', 'rootdir', 'vztmpl', 'iso', 'backup', 'snippets', 'import'];

/** One entry of parse_idmap over storage ids: '1', 'target' or 'source:target'. */
function checkStoragePair(entry: string): string | null {
  if (entry === '1') return null;
  const ids = /^([^:]+):([^:]+)$/.exec(entry)?.slice(1) ?? [entry];
  const bad = ids.find((id) => !STORAGE_ID_RE.test(id));
  return bad === undefined
    ? null
    : `entry '${entry}' contains invalid ID - storage ID '${bad}' contains illegal characters`;
}

export const EXTRA_CODE_FORMATS: Readonly<Record<string, (value: string) => string | null>> = {
  ipv4: (v) => (isIPv4(v) ? null : 'value does not look like a valid IPv4 address'),
  ipv6: (v) => (isIPv6(v) ? null : 'value does not look like a valid IPv6 address'),
  address: (v) =>
    isIP(v) || DNS_NAME_RE.test(v) ? null : `value does not look like a valid address: ${v}`,
  CIDR: (v) => (isCidr(v, 0) ? null : 'value does not look like a valid CIDR network'),
  'pve-ipv4-config': (v) =>
    /^(?:dhcp|manual)$/.test(v) || isCidr(v, 4)
      ? null
      : 'value does not look like a valid ipv4 network configuration',
  'pve-ipv6-config': (v) =>
    /^(?:auto|dhcp|manual)$/.test(v) || isCidr(v, 6)
      ? null
      : 'value does not look like a valid ipv6 network configuration',
  'pve-storage-content': (v) => (CONTENT_TYPES.includes(v) ? null : `invalid content type '${v}'`),
  'storage-pair': checkStoragePair,
  'pve-lxc-mp-string': (v) =>
    /\/\.\.?\//.test(v) || /\/\.\.?$/.test(v) || /^\.\.\//.test(v)
      ? `${v} contains illegal character sequences`
      : null,
  'pve-lxc-dev-string': (v) =>
    /\/\.\.?(?:\/|$)/.test(v) || !v.startsWith('/dev/') ? `${v} is not a valid device path` : null,
  'lxc-ip-with-ll-iface': (v) => {
    const linkLocal = /^(fe80:[^%]+)%(.*)$/.exec(v);
    if (
      linkLocal &&
      isIPv6(linkLocal[1] ?? '') &&
      /^[a-z][a-z0-9_]{1,20}([:.]\d+)?$/i.test(linkLocal[2] ?? '')
    )
      return null;
    return isIP(v) ? null : 'value does not look like a valid IP address';
  },
  'pve-cpuset': (v) =>
    v.trim() !== '' && v.split(',').every((part) => /^\d+(-\d+)?$/.test(part.trim()))
      ? null
      : 'unable to parse cpuset option',
  'pve-hotplug-features': (v) => {
    if (v === '0' || v === '1') return null;
    const bad = v
      .split(/[,;\s]+/)
      .find((f) => f !== '' && !/^(network|disk|cpu|memory|usb|cloudinit)$/.test(f));
    return bad === undefined ? null : `invalid hotplug feature '${bad}'`;
  },
  // zone.tab lives on the node; 'host', 'UTC' and the Area/City shape are what can be told here
  'pve-ct-timezone': (v) =>
    v === 'host' || v === 'UTC' || /^[A-Z][A-Za-z_-]+(\/[A-Za-z0-9_+-]+){1,2}$/.test(v)
      ? null
      : `invalid time zone '${v}'`,
};

const opt = (type: string, extra: Schema = {}): Schema => ({ type, optional: 1, ...extra });

/** qemu-server's registered property-string formats used by the config endpoints. */
export const EXTRA_HASH_FORMATS: Readonly<Record<string, Schema>> = {
  'pve-qm-ipconfig': {
    ip: opt('string', { format: 'pve-ipv4-config' }),
    gw: opt('string', { format: 'ipv4', requires: 'ip' }),
    ip6: opt('string', { format: 'pve-ipv6-config' }),
    gw6: opt('string', { format: 'ipv6', requires: 'ip6' }),
  },
  'pve-qm-watchdog': {
    model: opt('string', { default_key: 1, enum: ['i6300esb', 'ib700'] }),
    action: opt('string', { enum: ['reset', 'shutdown', 'poweroff', 'pause', 'debug', 'none'] }),
  },
  'pve-qm-rng': {
    source: { type: 'string', default_key: 1, enum: ['/dev/urandom', '/dev/random', '/dev/hwrng'] },
    max_bytes: opt('integer'),
    period: opt('integer'),
  },
  'pve-qm-cicustom': {
    meta: opt('string', { format: 'pve-volume-id' }),
    network: opt('string', { format: 'pve-volume-id' }),
    user: opt('string', { format: 'pve-volume-id' }),
    vendor: opt('string', { format: 'pve-volume-id' }),
  },
};
