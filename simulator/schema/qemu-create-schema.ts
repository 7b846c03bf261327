// Parameters of POST /nodes/{node}/qemu as in PVE 9.1.3 (93 names; `net[n]` expands to net0..net31
// etc.). hostpci, smbios1, amd-sev and intel-tdx are accepted as plain strings: their inner keys
// are not checked here, a deliberate simplification.
import * as drives from './qemu-drive-formats.ts';
import * as devices from './qemu-device-formats.ts';
import type { KeySchema, PropSchema, SchemaType } from './schema-types.ts';

const opt = (type: SchemaType, extra: Omit<PropSchema, 'type'> = {}): PropSchema => ({
  type,
  optional: true,
  ...extra,
});
const bool = opt('boolean');
const str = opt('string');

/** Indexed parameter families: name → [count, schema]. */
const INDEXED: Readonly<Record<string, readonly [number, PropSchema]>> = {
  hostpci: [16, str],
  ide: [4, opt('string', { format: drives.IDE_FORMAT })],
  ipconfig: [32, opt('string', { format: 'pve-qm-ipconfig' })],
  net: [32, opt('string', { format: devices.NET_FORMAT })],
  numa: [8, opt('string', { format: devices.NUMA_FORMAT })],
  parallel: [3, opt('string', { pattern: '/dev/parport\\d+|/dev/usb/lp\\d+' })],
  sata: [6, opt('string', { format: drives.SATA_FORMAT })],
  scsi: [31, opt('string', { format: drives.SCSI_FORMAT })],
  serial: [4, opt('string', { pattern: '(/dev/.+|socket)' })],
  unused: [256, opt('string', { format: drives.UNUSED_FORMAT })],
  usb: [14, opt('string', { format: devices.USB_FORMAT })],
  virtio: [16, opt('string', { format: drives.VIRTIO_FORMAT })],
  virtiofs: [10, opt('string', { format: devices.VIRTIOFS_FORMAT })],
};

const KEYBOARDS =
  'de de-ch da en-gb en-us es fi fr fr-be fr-ca fr-ch hu is it ja lt mk nl no pl pt pt-br sv sl tr';

const SINGLE: Readonly<Record<string, PropSchema>> = {
  acpi: bool,
  affinity: opt('string', { format: 'pve-cpuset' }),
  agent: opt('string', { format: devices.AGENT_FORMAT }),
  'allow-ksm': bool,
  'amd-sev': str,
  arch: opt('string', { enum: ['x86_64', 'aarch64'] }),
  archive: opt('string', { maxLength: 255 }),
  args: str,
  audio0: opt('string', { format: devices.AUDIO_FORMAT }),
  autostart: bool,
  balloon: opt('integer', { minimum: 0 }),
  bios: opt('string', { enum: ['seabios', 'ovmf'] }),
  boot: opt('string', { format: 'pve-qm-boot' }),
  bootdisk: opt('string', { format: 'pve-qm-bootdisk', pattern: '(ide|sata|scsi|virtio)\\d+' }),
  bwlimit: opt('integer', { minimum: 0 }),
  cdrom: opt('string', { format: 'pve-qm-ide' }),
  cicustom: opt('string', { format: 'pve-qm-cicustom' }),
  cipassword: str,
  citype: opt('string', { enum: ['configdrive2', 'nocloud', 'opennebula'] }),
  ciupgrade: bool,
  ciuser: str,
  cores: opt('integer', { minimum: 1 }),
  cpu: opt('string', { format: 'pve-vm-cpu-conf' }),
  cpulimit: opt('number', { minimum: 0, maximum: 128 }),
  cpuunits: opt('integer', { minimum: 1, maximum: 262144 }),
  description: opt('string', { maxLength: 8192 }),
  efidisk0: opt('string', { format: drives.EFIDISK_FORMAT }),
  force: opt('boolean', { requires: 'archive' }),
  freeze: bool,
  'ha-managed': bool,
  hookscript: opt('string', { format: 'pve-volume-id' }),
  hotplug: opt('string', { format: 'pve-hotplug-features' }),
  hugepages: opt('string', { enum: ['any', '2', '1024'] }),
  'import-working-storage': opt('string', { format: 'pve-storage-id' }),
  'intel-tdx': str,
  ivshmem: opt('string', { format: devices.IVSHMEM_FORMAT }),
  keephugepages: bool,
  keyboard: opt('string', { enum: KEYBOARDS.split(' ') }),
  kvm: bool,
  'live-restore': bool,
  localtime: bool,
  lock: opt('string', {
    enum: [
      'backup',
      'clone',
      'create',
      'migrate',
      'rollback',
      'snapshot',
      'snapshot-delete',
      'suspending',
      'suspended',
    ],
  }),
  machine: opt('string', { format: devices.MACHINE_FORMAT }),
  memory: opt('string', { format: devices.MEMORY_FORMAT }),
  migrate_downtime: opt('number', { minimum: 0 }),
  migrate_speed: opt('integer', { minimum: 0 }),
  name: opt('string', { format: 'dns-name' }),
  nameserver: opt('string', { format: 'address-list' }),
  node: { type: 'string', format: 'pve-node' },
  numa: bool,
  onboot: bool,
  ostype: opt('string', {
    enum: [
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
    ],
  }),
  pool: opt('string', { format: 'pve-poolid' }),
  protection: bool,
  reboot: bool,
  rng0: opt('string', { format: 'pve-qm-rng' }),
  scsihw: opt('string', {
    enum: ['lsi', 'lsi53c810', 'virtio-scsi-pci', 'virtio-scsi-single', 'megasas', 'pvscsi'],
  }),
  searchdomain: str,
  shares: opt('integer', { minimum: 0, maximum: 50000 }),
  smbios1: opt('string', { maxLength: 512 }),
  smp: opt('integer', { minimum: 1 }),
  sockets: opt('integer', { minimum: 1 }),
  spice_enhancements: opt('string', { format: devices.SPICE_FORMAT }),
  sshkeys: opt('string', { format: 'urlencoded' }),
  start: bool,
  startdate: opt('string', {
    pattern: '(now|\\d{4}-\\d{1,2}-\\d{1,2}(T\\d{1,2}:\\d{1,2}:\\d{1,2})?)',
  }),
  startup: opt('string', { format: 'pve-startup-order' }),
  storage: opt('string', { format: 'pve-storage-id' }),
  tablet: bool,
  tags: opt('string', { format: 'pve-tag-list' }),
  tdf: bool,
  template: bool,
  tpmstate0: opt('string', { format: drives.TPMSTATE_FORMAT }),
  unique: opt('boolean', { requires: 'archive' }),
  vcpus: opt('integer', { minimum: 1 }),
  vga: opt('string', { format: devices.VGA_FORMAT }),
  vmgenid: opt('string', {
    pattern: '(?:[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}|[01])',
  }),
  vmid: { type: 'integer', format: 'pve-vmid', minimum: 100, maximum: 999999999 },
  vmstatestorage: opt('string', { format: 'pve-storage-id' }),
  watchdog: opt('string', { format: 'pve-qm-watchdog' }),
};

/** The schema's own parameter names, with `[n]` for indexed families (for conformance tests). */
export const QEMU_CREATE_PARAM_NAMES: readonly string[] = [
  ...Object.keys(SINGLE),
  ...Object.keys(INDEXED).map((family) => `${family}[n]`),
].sort();

export const QEMU_CREATE_SCHEMA: Readonly<Record<string, KeySchema>> = (() => {
  const schema: Record<string, KeySchema> = { ...SINGLE };
  for (const [family, [count, prop]] of Object.entries(INDEXED)) {
    for (let i = 0; i < count; i++) schema[`${family}${i}`] = prop;
  }
  return schema;
})();
