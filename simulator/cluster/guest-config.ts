// Reading and writing guest config values the way PVE does: property strings (print order of
// pve-common print_property_string), disk sizes (parse_size/format_size), MAC addresses, and the
// figures vmstatus derives from a config (name, cpus, memory, boot disk size).
import { randomUUID } from 'node:crypto';
import type { Guest, GuestConfig } from './cluster-state.ts';

/** Split `a,b=c,d=e` into keys; a bare part goes to `defaultKey`. No validation (configs are). */
export function parseProps(value: string, defaultKey?: string): Record<string, string> {
  const res: Record<string, string> = {};
  for (const part of value.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq < 0) {
      if (defaultKey !== undefined) res[defaultKey] = part;
    } else {
      res[part.slice(0, eq)] = part.slice(eq + 1);
    }
  }
  return res;
}

/** print_property_string: the default key bare, then required keys, then the rest, each sorted. */
export function printProps(
  props: Readonly<Record<string, string | undefined>>,
  options: { defaultKey?: string; required?: readonly string[] } = {},
): string {
  const { defaultKey, required = [] } = options;
  const parts: string[] = [];
  if (defaultKey !== undefined && props[defaultKey] !== undefined) parts.push(props[defaultKey]);
  const rest = Object.keys(props).filter((key) => key !== defaultKey && props[key] !== undefined);
  const ordered = [
    ...rest.filter((key) => required.includes(key)).sort(),
    ...rest.filter((key) => !required.includes(key)).sort(),
  ];
  for (const key of ordered) parts.push(`${key}=${props[key]}`);
  return parts.join(',');
}

const UNITS: Readonly<Record<string, number>> = { K: 1, M: 2, G: 3, T: 4 };

/** PVE::JSONSchema::parse_size: `<n>[KMGT]`, binary units, bare numbers are bytes. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([KMGT])?$/.exec(text);
  if (!match) return undefined;
  return Math.trunc(Number(match[1]) * 1024 ** (UNITS[match[2] ?? ''] ?? 0));
}

/** format_size: the largest binary unit that divides the size exactly. */
export function formatSize(bytes: number): string {
  let value = bytes;
  for (const unit of ['', 'K', 'M', 'G']) {
    if (value % 1024 !== 0 || value === 0) return `${value}${unit}`;
    value /= 1024;
  }
  return `${value}T`;
}

/** A random unicast MAC with Proxmox's OUI, like random_ether_addr('BC:24:11'). */
export function randomMac(): string {
  const byte = () =>
    Math.floor(Math.random() * 256)
      .toString(16)
      .toUpperCase()
      .padStart(2, '0');
  return `BC:24:11:${byte()}:${byte()}:${byte()}`;
}

/** generate_uuid: a fresh UUID for smbios1, vmgenid. */
export const randomUuid = (): string => randomUUID();

const QEMU_DRIVE_RE = /^(?:(ide|sata|scsi|virtio)(\d+)|efidisk0|tpmstate0)$/;
const BUS_ORDER = ['ide', 'sata', 'scsi', 'virtio'];

export function isQemuDriveKey(key: string): boolean {
  return QEMU_DRIVE_RE.test(key);
}

/** Volume-bearing keys of a guest type: qemu drives, or rootfs and mp[n] for containers. */
export function isVolumeKey(type: Guest['type'], key: string): boolean {
  return type === 'qemu' ? isQemuDriveKey(key) : key === 'rootfs' || /^mp\d+$/.test(key);
}

/** drive_is_cdrom: media=cdrom (which includes cloud-init drives). */
export function isCdrom(value: string): boolean {
  return parseProps(value, 'file').media === 'cdrom';
}

/** The volume of a drive or mount point value (`file` for qemu, `volume` for lxc). */
export function volumeOf(type: Guest['type'], value: string): string {
  return (
    parseProps(value, type === 'qemu' ? 'file' : 'volume')[type === 'qemu' ? 'file' : 'volume'] ??
    ''
  );
}

export interface ConfigVolume {
  readonly key: string;
  readonly volid: string;
  readonly cdrom: boolean;
}

/** The storage volumes a config references (drives or mount points, unused[n] too). */
export function configVolumes(type: Guest['type'], config: GuestConfig): ConfigVolume[] {
  const res: ConfigVolume[] = [];
  for (const [key, value] of Object.entries(config)) {
    const unused = /^unused\d+$/.test(key);
    if (!unused && !isVolumeKey(type, key)) continue;
    const volid = unused ? value : volumeOf(type, value);
    if (volid === '' || volid === 'none' || volid === 'cdrom' || volid.startsWith('/')) continue;
    res.push({ key, volid, cdrom: !unused && type === 'qemu' && isCdrom(value) });
  }
  return res;
}

/** add_unused_volume: record a volume as the first free unused[n], unless it already is one. */
export function addUnused(config: GuestConfig, volid: string): void {
  if (Object.entries(config).some(([key, value]) => /^unused\d+$/.test(key) && value === volid))
    return;
  let n = 0;
  while (config[`unused${n}`] !== undefined) n++;
  config[`unused${n}`] = volid;
}

/** Drive keys in bus order (ide0..3, sata0..5, scsi0..30, virtio0..15), then efidisk/tpmstate. */
export function sortedDriveKeys(config: GuestConfig): string[] {
  const rank = (key: string) => {
    const match = /^(ide|sata|scsi|virtio)(\d+)$/.exec(key);
    return match ? BUS_ORDER.indexOf(match[1] ?? '') * 100 + Number(match[2]) : 1000;
  };
  return Object.keys(config)
    .filter(isQemuDriveKey)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** get_default_bootdevices: the first disk, then CD-ROMs, then NICs. */
export function defaultBootOrder(config: GuestConfig): string {
  const drives = sortedDriveKeys(config).filter((key) => !/^(efidisk|tpmstate)/.test(key));
  const disk = drives.find((key) => !isCdrom(config[key] ?? ''));
  const cdroms = drives.filter((key) => isCdrom(config[key] ?? ''));
  const nets = Object.keys(config)
    .filter((key) => /^net\d+$/.test(key))
    .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)));
  return `order=${[...(disk ? [disk] : []), ...cdroms, ...nets].join(';')}`;
}

/** bootdisk_size: the size of the first boot device that is a disk with a volume. */
function qemuBootDiskSize(config: GuestConfig): number {
  const order = parseProps(config.boot ?? '', 'legacy').order?.split(';') ?? [];
  const candidates = order.length > 0 ? order : config.bootdisk ? [config.bootdisk] : [];
  for (const key of candidates) {
    const value = config[key];
    if (!isQemuDriveKey(key) || value === undefined || isCdrom(value)) continue;
    return parseSize(parseProps(value, 'file').size ?? '0') ?? 0;
  }
  return 0;
}

/** is_template: config option template=1. */
export const isTemplateConfig = (config: GuestConfig) => config.template === '1';

/** get_qga_key($conf, 'enabled'): whether a config enables the QEMU guest agent. */
export function agentEnabled(config: GuestConfig): boolean {
  if (config.agent === undefined) return false;
  return /^(1|on|yes|true)$/i.test(parseProps(config.agent, 'enabled').enabled ?? '0');
}

const MIB = 1024 ** 2;

/** The figures qemu-server / pve-container vmstatus derive from a config. */
export function guestFacts(guest: Guest, nodeCpus: number) {
  const { config, type, vmid } = guest;
  const memory = Number(/^(?:current=)?(\d+)/.exec(config.memory ?? '')?.[1] ?? 512);
  const qemuCpus = Math.min(Number(config.sockets ?? 1) * Number(config.cores ?? 1), nodeCpus);
  const lxcCpus = Number(config.cores ?? 0) || Number(config.cpulimit ?? 0) || nodeCpus;
  const rootfs = parseProps(config.rootfs ?? '', 'volume').size;
  return {
    name:
      type === 'qemu'
        ? config.name || `VM ${vmid}`
        : (config.hostname || `CT${vmid}`).replace(/\s/g, ''),
    cpus: type === 'qemu' ? Number(config.vcpus ?? 0) || qemuCpus : lxcCpus,
    maxmem: memory * MIB,
    maxswap: Number(config.swap ?? 512) * MIB,
    maxdisk: type === 'qemu' ? qemuBootDiskSize(config) : (parseSize(rootfs ?? '0') ?? 0),
    template: config.template === '1',
    ...(config.tags !== undefined ? { tags: config.tags } : {}),
    ...(config.lock !== undefined ? { lock: config.lock } : {}),
  };
}

export type GuestFacts = ReturnType<typeof guestFacts>;
