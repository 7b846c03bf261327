// The QEMU property-string options the create tool accepts besides drives (net, agent, boot,
// cpu), with the keys PVE 9 allows for each. Parsing yields the canonical text to send and typed
// fields for checks and policy. Drives are in qemu-drives.ts; both are exported from here.

import { BRIDGE_RE, MAC_RE, quote } from './formats';
import { bool, int, matching, num, oneOf, parseWith, type OptionResult } from './option-rules';
import type { PropertyFormat } from './property-string';

export { fieldsOf, type FieldValue, type OptionResult, type PropertyValue } from './option-rules';
export {
  DRIVE_DERIVED_FIELDS,
  IDE_FORMAT,
  SATA_FORMAT,
  SCSI_FORMAT,
  VIRTIO_FORMAT,
  parseCdrom,
  parseDrive,
} from './qemu-drives';

const NET_MODELS = [
  'e1000',
  'e1000-82540em',
  'e1000-82544gc',
  'e1000-82545em',
  'e1000e',
  'i82551',
  'i82557b',
  'i82559er',
  'ne2k_isa',
  'ne2k_pci',
  'pcnet',
  'rtl8139',
  'virtio',
  'vmxnet3',
] as const;

const VLAN_LIST_RE = /^\d{1,4}(?:-\d{1,4})?(?:;\d{1,4}(?:-\d{1,4})?)*$/;
function checkTrunks(value: string): string | null {
  if (!VLAN_LIST_RE.test(value)) return `${quote(value)} is not a VLAN list such as 10;20-30`;
  const ids = value.split(/[;-]/).map(Number);
  return ids.every((id) => id >= 1 && id <= 4094) ? null : 'VLAN ids must be 1–4094';
}

export const NET_FORMAT: PropertyFormat = {
  defaultKey: 'model',
  keyAliases: { valueKey: 'macaddr', setsKey: 'model', names: NET_MODELS },
  keys: {
    model: oneOf(...NET_MODELS),
    bridge: matching(BRIDGE_RE, "a bridge name (letters, digits, '-', '_', '.'; at most 15)"),
    firewall: bool,
    link_down: bool,
    macaddr: matching(MAC_RE, 'a unicast MAC address XX:XX:XX:XX:XX:XX'),
    mtu: int(1, 65520),
    queues: int(0, 64),
    rate: num(0),
    tag: int(1, 4094),
    trunks: { type: 'string', check: checkTrunks },
  },
};

export const AGENT_FORMAT: PropertyFormat = {
  defaultKey: 'enabled',
  aliases: { 'freeze-fs-on-backup': 'freeze-fs', 'guest-fsfreeze': 'freeze-fs' },
  keys: {
    enabled: bool,
    'freeze-fs': bool,
    fstrim_cloned_disks: bool,
    type: oneOf('virtio', 'isa'),
  },
};

const BOOT_DEVICE_RE =
  /^(?:ide[0-3]|sata[0-5]|scsi(?:[0-9]|[12][0-9]|30)|virtio(?:[0-9]|1[0-5])|net(?:[0-9]|[12][0-9]|3[01])|hostpci(?:[0-9]|1[0-5])|usb(?:[0-9]|1[0-3]))$/;
function checkBootOrder(value: string): string | null {
  const devices = value.split(';');
  const bad = devices.find((d) => !BOOT_DEVICE_RE.test(d));
  if (bad !== undefined) return `${quote(bad)} is not a boot device such as scsi0, ide2 or net0`;
  if (new Set(devices).size !== devices.length) return 'a device is listed twice';
  return null;
}

export const BOOT_FORMAT: PropertyFormat = {
  keys: { order: { type: 'string', check: checkBootOrder } },
};

// VM-specific CPU flags PVE 9.1 accepts (qemu-server CPUConfig.pm); others need a custom model.
const CPU_FLAGS = [
  'pcid',
  'spec-ctrl',
  'ibpb',
  'ssbd',
  'virt-ssbd',
  'amd-ssbd',
  'amd-no-ssb',
  'pdpe1gb',
  'md-clear',
  'hv-tlbflush',
  'hv-evmcs',
  'aes',
  'nested-virt',
];
const CPU_FLAG_RE = new RegExp(`^[+-](?:${CPU_FLAGS.join('|')})$`);

export const CPU_FORMAT: PropertyFormat = {
  defaultKey: 'cputype',
  keys: {
    cputype: matching(
      /^(?:custom-)?[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/,
      'a CPU model such as host, x86-64-v2-AES or custom-<name>',
    ),
    flags: {
      type: 'string',
      check: (v) =>
        v.split(';').every((f) => CPU_FLAG_RE.test(f))
          ? null
          : `must be +FLAG or -FLAG separated by ";", FLAG one of ${CPU_FLAGS.join(', ')}`,
    },
    hidden: bool,
    'hv-vendor-id': matching(/^[a-zA-Z0-9]{1,12}$/, 'a vendor id of 1–12 letters or digits'),
    'phys-bits': matching(/^(?:[89]|[1-5][0-9]|6[0-4]|host)$/, '8–64 or host'),
    'guest-phys-bits': int(32, 64),
  },
};

export function parseNet(text: string): OptionResult {
  return parseWith(text, NET_FORMAT, (p) =>
    p.model === undefined ? 'a NIC model is required first, e.g. virtio,bridge=vmbr0' : null,
  );
}

export function parseAgent(text: string): OptionResult {
  return parseWith(text, AGENT_FORMAT, (p) =>
    p.enabled === undefined
      ? 'enabled (1 or 0) is required first, e.g. 1,fstrim_cloned_disks=1'
      : null,
  );
}

export function parseBoot(text: string): OptionResult {
  return parseWith(text, BOOT_FORMAT, (p) =>
    p.order === undefined ? 'write the boot order as order=scsi0;ide2;net0' : null,
  );
}

export function parseCpu(text: string): OptionResult {
  return parseWith(text, CPU_FORMAT, (p) =>
    p.cputype === undefined ? 'a CPU model is required first, e.g. host or x86-64-v2-AES' : null,
  );
}

/** A VM's `ostype`, as qemu-server takes it. */
export const QEMU_OSTYPES = [
  'other',
  'wxp',
  'w2k',
  'w2k3',
  'w2k8',
  'wvista',
  'win7',
  'win8',
  'win10',
  'win11',
  'l24',
  'l26',
  'solaris',
] as const;

/** A VM's SCSI controller (`scsihw`), as qemu-server takes it. */
export const QEMU_SCSI_HARDWARE = [
  'lsi',
  'lsi53c810',
  'virtio-scsi-pci',
  'virtio-scsi-single',
  'megasas',
  'pvscsi',
] as const;
