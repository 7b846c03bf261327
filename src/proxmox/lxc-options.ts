// Container options as pve-container defines them: the NIC (`name=eth0,bridge=vmbr0,ip=...`), the
// root file system and mount points (`STORAGE:SIZE_GiB` or an existing volume, with `mp=` the
// path inside), and the OS template a container is made from. Parsing yields the canonical text
// to send and typed fields for checks and policy (as for QEMU options).

import { BRIDGE_RE, MAC_RE, STORAGE_ID_RE, quote } from './formats';
import { propertyValue } from '../core/property-value';
import { checkIPv4, checkIPv6, ipv4Setting, ipv6Setting } from './net-address';
import { bool, int, matching, num, oneOf, parseWith, type OptionResult } from './option-rules';
import type { KeyRule, PropertyFormat } from './property-string';
import { checkVolumeId, volumeFields } from './volumes';

function checkVlanIds(value: string): string | null {
  if (!/^\d{1,4}(?:;\d{1,4})*$/.test(value))
    return `${quote(value)} is not a VLAN list such as 10;20`;
  return value.split(';').every((id) => Number(id) >= 1 && Number(id) <= 4094)
    ? null
    : 'VLAN ids must be 1–4094';
}

export const LXC_NET_FORMAT: PropertyFormat = {
  keys: {
    name: matching(/^[-_.A-Za-z0-9]{1,15}$/, 'an interface name such as eth0'),
    bridge: matching(BRIDGE_RE, "a bridge name (letters, digits, '-', '_', '.'; at most 15)"),
    firewall: bool,
    gw: { type: 'string', check: checkIPv4 },
    gw6: { type: 'string', check: checkIPv6 },
    'host-managed': bool,
    hwaddr: matching(MAC_RE, 'a unicast MAC address XX:XX:XX:XX:XX:XX'),
    ip: { type: 'string', check: ipv4Setting(['dhcp', 'manual']) },
    ip6: { type: 'string', check: ipv6Setting(['dhcp', 'auto', 'manual']) },
    link_down: bool,
    mtu: int(64, 65535),
    rate: num(0),
    tag: int(1, 4094),
    trunks: { type: 'string', check: checkVlanIds },
    type: oneOf('veth'),
  },
};

export function parseLxcNet(text: string): OptionResult {
  if (!text.split(',')[0]!.includes('='))
    return {
      ok: false,
      error:
        'a container NIC is written name=eth0,bridge=vmbr0,ip=dhcp (a leading model such as virtio is for VMs)',
    };
  return parseWith(text, LXC_NET_FORMAT, (p) => {
    if (p.name === undefined)
      return 'name (the interface inside the container) is required, e.g. name=eth0,bridge=vmbr0,ip=dhcp';
    if (p.gw !== undefined && !/\//.test(p.ip ?? '')) return 'gw needs a static ip';
    if (p.gw6 !== undefined && !/\//.test(p.ip6 ?? '')) return 'gw6 needs a static ip6';
    return null;
  });
}

/** A path inside the container: absolute, no `.` or `..` segments (verify_lxc_mp_string). */
function checkMountPath(value: string): string | null {
  if (!/^\/[A-Za-z0-9._\-/]{0,254}$/.test(value))
    return `${quote(value)} is not an absolute path such as /srv/data`;
  return value.split('/').some((seg) => seg === '.' || seg === '..')
    ? 'the path must not contain "." or ".." segments'
    : null;
}

const MOUNT_OPTION = '(?:discard|lazytime|noatime|nodev|noexec|nosuid)';
const MOUNT_KEYS: Record<string, KeyRule> = {
  volume: {
    type: 'string',
    check: (v) => checkVolumeId(v, 'STORAGE:SIZE_GiB (e.g. local-lvm:8) or STORAGE:VOLUME'),
  },
  acl: bool,
  mountoptions: matching(
    new RegExp(`^${MOUNT_OPTION}(?:;${MOUNT_OPTION})*$`),
    'mount options such as noatime;nodev',
  ),
  quota: bool,
  replicate: bool,
  ro: bool,
  shared: bool,
  size: matching(/^\d+(?:\.\d+)?[KMGT]?$/, 'a size such as 8G'),
};

export const ROOTFS_FORMAT: PropertyFormat = { defaultKey: 'volume', keys: MOUNT_KEYS };
export const MOUNT_POINT_FORMAT: PropertyFormat = {
  defaultKey: 'volume',
  keys: {
    ...MOUNT_KEYS,
    mp: { type: 'string', check: checkMountPath },
    backup: bool,
    keepattrs: bool,
  },
};

/** Fields a parsed root file system or mount point carries besides its keys. */
export const MOUNT_DERIVED_FIELDS = ['storage', 'size_gib', 'new_disk'] as const;

/**
 * `volume` in the fields means an existing volume, as on QEMU drives (so a policy can forbid
 * attaching one); a new volume shows as storage and size_gib.
 */
function parseMount(text: string, format: PropertyFormat, needsPath: boolean): OptionResult {
  const result = parseWith(
    text,
    format,
    (p) => {
      if (p.volume === undefined) return 'a volume is required first, e.g. local-lvm:8';
      if (/:0(?:\.0+)?$/.test(p.volume)) return 'a new volume needs a size above 0';
      return needsPath && p.mp === undefined
        ? 'mp (the path inside the container) is required, e.g. local-lvm:8,mp=/srv/data'
        : null;
    },
    (p) => volumeFields(p.volume ?? ''),
  );
  if (!result.ok || result.value.fields.new_disk !== true) return result;
  const { volume: _new, ...fields } = result.value.fields;
  return { ok: true, value: propertyValue(result.value.text, fields) };
}

export const parseRootfs = (text: string): OptionResult => parseMount(text, ROOTFS_FORMAT, false);
export const parseMountPoint = (text: string): OptionResult =>
  parseMount(text, MOUNT_POINT_FORMAT, true);

/** A container template: `STORAGE:vztmpl/NAME.tar.*` (pve-container takes any vztmpl volume). */
const OSTEMPLATE_RE =
  /^([A-Za-z][A-Za-z0-9\-_.]*[A-Za-z0-9]):vztmpl\/([A-Za-z0-9][A-Za-z0-9._+-]{0,200}\.(?:tar|tar\.gz|tar\.xz|tar\.zst|tar\.bz2|tgz))$/;

export function checkOstemplate(value: string): string | null {
  const m = OSTEMPLATE_RE.exec(value);
  if (!m || !STORAGE_ID_RE.test(m[1] ?? '') || m[2]!.includes('..')) {
    return `${quote(value)} is not a container template volume such as local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst (list them with pve_list_storage_content, content vztmpl)`;
  }
  return null;
}

/** The OS types pve-container knows (its `ostype` enum). */
export const LXC_OSTYPES = [
  'debian',
  'devuan',
  'ubuntu',
  'centos',
  'fedora',
  'opensuse',
  'archlinux',
  'alpine',
  'gentoo',
  'nixos',
  'unmanaged',
] as const;
