// The config keys of QEMU VMs and LXC containers (PUT .../config in PVE 9.1): the ones a tool may
// set, with their rules, and the ones it refuses, with the reason. Refused: whatever reaches the
// host (raw QEMU args, hook scripts, PCI/USB/serial passthrough, host directories and devices,
// locks: mostly root@pam's alone in PVE anyway), whatever cannot be undone or is Proxmox's own
// (template, vmgenid), and the rest this server does not offer (set those in Proxmox itself).

import {
  CIUSER_RE,
  IPCONFIG_FORMAT,
  checkPassword,
  encodeSshKeysForVm,
  parseIpconfig,
  parseSearchDomains,
  parseSshKeys,
} from './cloud-init';
import type { ConfigRule, KeyTable } from './config-key-types';
import { DNS_NAME_RE, checkDescription, parseTagList, quote, type TextResult } from './formats';
import {
  LXC_NET_FORMAT,
  LXC_OSTYPES,
  MOUNT_DERIVED_FIELDS,
  MOUNT_POINT_FORMAT,
  ROOTFS_FORMAT,
  parseLxcNet,
  parseMountPoint,
  parseRootfs,
} from './lxc-options';
import { parseAddressList } from './net-address';
import { checkedText, fieldsOf, type OptionResult } from './option-rules';
import {
  AGENT_FORMAT,
  BOOT_FORMAT,
  CPU_FORMAT,
  DRIVE_DERIVED_FIELDS,
  IDE_FORMAT,
  NET_FORMAT,
  SATA_FORMAT,
  SCSI_FORMAT,
  VIRTIO_FORMAT,
  parseAgent,
  parseBoot,
  parseCpu,
  parseDrive,
  parseNet,
  QEMU_OSTYPES,
  QEMU_SCSI_HARDWARE,
} from './qemu-options';
import type { PropertyFormat } from './property-string';

const bool: ConfigRule = { kind: 'boolean' };
const int = (min: number, max: number): ConfigRule => ({ kind: 'integer', min, max });
const oneOf = (...values: string[]): ConfigRule => ({ kind: 'enum', values });
const prop = (
  parse: (v: string) => OptionResult,
  format: PropertyFormat,
  derived: readonly string[] = [],
): ConfigRule => ({
  kind: 'property',
  parse,
  fields: fieldsOf(format, derived),
});
const text = (parse: (v: string) => TextResult, send?: (v: string) => string): ConfigRule => ({
  kind: 'text',
  parse,
  ...(send ? { send } : {}),
});
const dnsName = (max: number) =>
  text(
    checkedText((v) =>
      v.length <= max && DNS_NAME_RE.test(v)
        ? null
        : `${quote(v)} is not a DNS name such as web-01`,
    ),
  );
const tags = text((v) => {
  const r = parseTagList(v);
  return r.ok ? { ok: true, value: r.value.join(';') } : r;
});
const drive = (format: PropertyFormat) =>
  prop((v) => parseDrive(v, format), format, DRIVE_DERIVED_FIELDS);
const MAX_MEMORY_MIB = 4_194_304;

/** Shared by both kinds. */
const COMMON: Record<string, ConfigRule> = {
  description: text(checkedText(checkDescription)),
  tags,
  onboot: bool,
  protection: bool,
  nameserver: text(parseAddressList),
  searchdomain: text(parseSearchDomains),
};

const NOT_OFFERED = 'not offered by this server: change it in Proxmox itself';
const ROOT_ONLY = 'only root@pam may set it in Proxmox';

export const QEMU_TABLE: KeyTable = {
  accepted: {
    ...COMMON,
    acpi: bool,
    agent: prop(parseAgent, AGENT_FORMAT),
    balloon: int(0, MAX_MEMORY_MIB),
    bios: oneOf('seabios', 'ovmf'),
    boot: prop(parseBoot, BOOT_FORMAT),
    cores: int(1, 1024),
    cpu: prop(parseCpu, CPU_FORMAT),
    cpulimit: { kind: 'number', min: 0, max: 128 },
    cpuunits: int(1, 262_144),
    localtime: bool,
    memory: int(16, MAX_MEMORY_MIB),
    name: dnsName(253),
    numa: bool,
    ostype: oneOf(...QEMU_OSTYPES),
    scsihw: oneOf(...QEMU_SCSI_HARDWARE),
    shares: int(0, 50_000),
    sockets: int(1, 16),
    tablet: bool,
    vcpus: int(1, 16_384),
    ciuser: text(
      checkedText((v) =>
        CIUSER_RE.test(v)
          ? null
          : `${quote(v)} is not a user name (lower-case letters, digits, "_", "-"; at most 32)`,
      ),
    ),
    cipassword: text(checkedText(checkPassword)),
    citype: oneOf('configdrive2', 'nocloud', 'opennebula'),
    ciupgrade: bool,
    sshkeys: text(parseSshKeys, encodeSshKeysForVm),
    'ipconfig[n]': prop(parseIpconfig, IPCONFIG_FORMAT),
    'net[n]': prop(parseNet, NET_FORMAT),
    'scsi[n]': drive(SCSI_FORMAT),
    'virtio[n]': drive(VIRTIO_FORMAT),
    'sata[n]': drive(SATA_FORMAT),
    'ide[n]': drive(IDE_FORMAT),
  },
  counts: {
    ipconfig: 32,
    net: 32,
    scsi: 31,
    virtio: 16,
    sata: 6,
    ide: 4,
    hostpci: 16,
    usb: 14,
    serial: 4,
    parallel: 3,
    numa: 8,
    unused: 256,
    virtiofs: 10,
  },
  refused: {
    args: `raw QEMU arguments reach the host; ${ROOT_ONLY}`,
    hookscript: `a hook script runs on the host; ${ROOT_ONLY}`,
    'hostpci[n]': 'passes a host PCI device through to the guest',
    'usb[n]': 'passes a host USB device through to the guest',
    'serial[n]': 'connects a host serial device or socket to the guest',
    'parallel[n]': 'connects a host parallel port to the guest',
    'virtiofs[n]': 'shares a host directory with the guest',
    ivshmem: 'shares host memory with the guest',
    lock: `locks are Proxmox's own (backup, migrate, ...); ${ROOT_ONLY}`,
    template: 'turning a VM into a template cannot be undone here: do it in Proxmox',
    vmgenid: "the VM's generation id is Proxmox's own",
    smbios1: "the VM's identity toward its OS (uuid, serial): set it in Proxmox itself",
    affinity: `pins the VM to host CPUs; ${ROOT_ONLY}`,
    arch: ROOT_ONLY,
    hugepages: ROOT_ONLY,
    keephugepages: ROOT_ONLY,
    'amd-sev': ROOT_ONLY,
    'intel-tdx': ROOT_ONLY,
    'unused[n]': 'volumes no longer attached: reattach or remove them in Proxmox',
    ...Object.fromEntries(
      [
        'allow-ksm',
        'audio0',
        'autostart',
        'bootdisk',
        'cdrom',
        'cicustom',
        'efidisk0',
        'freeze',
        'hotplug',
        'keyboard',
        'kvm',
        'machine',
        'migrate_downtime',
        'migrate_speed',
        'numa[n]',
        'reboot',
        'rng0',
        'smp',
        'spice_enhancements',
        'startdate',
        'startup',
        'tdf',
        'tpmstate0',
        'vga',
        'vmstatestorage',
        'watchdog',
      ].map((k) => [k, NOT_OFFERED]),
    ),
  },
};

export const LXC_TABLE: KeyTable = {
  accepted: {
    ...COMMON,
    cmode: oneOf('shell', 'console', 'tty'),
    console: bool,
    cores: int(1, 8192),
    cpulimit: { kind: 'number', min: 0, max: 8192 },
    cpuunits: int(0, 500_000),
    hostname: dnsName(255),
    memory: int(16, MAX_MEMORY_MIB),
    swap: int(0, MAX_MEMORY_MIB),
    ostype: oneOf(...LXC_OSTYPES),
    tty: int(0, 6),
    'net[n]': prop(parseLxcNet, LXC_NET_FORMAT),
    rootfs: prop(parseRootfs, ROOTFS_FORMAT, MOUNT_DERIVED_FIELDS),
    'mp[n]': prop(parseMountPoint, MOUNT_POINT_FORMAT, MOUNT_DERIVED_FIELDS),
  },
  counts: { net: 32, mp: 256, unused: 256, dev: 256 },
  refused: {
    'dev[n]': 'passes a host device into the container',
    hookscript: `a hook script runs on the host; ${ROOT_ONLY}`,
    lock: `locks are Proxmox's own (backup, migrate, ...); ${ROOT_ONLY}`,
    features:
      "nesting, fuse, mknod and mount weaken the container's isolation from the host: set them in Proxmox",
    unprivileged: 'cannot be changed on an existing container',
    template: 'turning a container into a template cannot be undone here: do it in Proxmox',
    'unused[n]': 'volumes no longer mounted: reattach or remove them in Proxmox',
    ...Object.fromEntries(
      ['arch', 'debug', 'entrypoint', 'env', 'startup', 'timezone'].map((k) => [k, NOT_OFFERED]),
    ),
  },
};
