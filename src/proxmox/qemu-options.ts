// The QEMU property-string options the create tool accepts (net, scsi/ide drives, agent, boot,
// cpu), with the keys PVE 9 allows for each. Parsing yields the canonical text to send and typed
// fields (plus a few derived ones such as a disk's storage and size) for checks and policy.

import {
  BRIDGE_RE,
  MAC_RE,
  STORAGE_ID_RE,
  URLENCODED_RE,
  quote,
} from './formats';
import {
  parsePropertyString,
  printPropertyString,
  type KeyRule,
  type Parsed,
  type PropertyFormat,
} from './property-string';

export type FieldValue = string | number | boolean;
export interface PropertyValue {
  /** Canonical property string, exactly as it will be sent to Proxmox. */
  readonly text: string;
  /** Parsed keys with typed values, plus derived fields; what policy rules look at. */
  readonly fields: Readonly<Record<string, FieldValue>>;
}
export type OptionResult = { ok: true; value: PropertyValue } | { ok: false; error: string };

const bool: KeyRule = { type: 'boolean' };
const int = (min?: number, max?: number): KeyRule => ({ type: 'integer', min, max });
const num = (min?: number, max?: number): KeyRule => ({ type: 'number', min, max });
const oneOf = (...values: string[]): KeyRule => ({ type: 'enum', values });
const matching = (re: RegExp, rule: string): KeyRule => ({
  type: 'string',
  check: (v) => (re.test(v) ? null : `${quote(v)} is not ${rule}`),
});

/** PVE's `urlencoded` format with a length cap (drive serial and model). */
const urlencoded = (what: string, max: number): KeyRule => ({
  type: 'string',
  check: (v) =>
    URLENCODED_RE.test(v) && v.length <= max
      ? null
      : `${quote(v)} is not a URL-encoded ${what} of at most ${max} characters`,
});

const NET_MODELS = [
  'e1000', 'e1000-82540em', 'e1000-82544gc', 'e1000-82545em', 'e1000e', 'i82551', 'i82557b',
  'i82559er', 'ne2k_isa', 'ne2k_pci', 'pcnet', 'rtl8139', 'virtio', 'vmxnet3',
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

// Volumes: `STORAGE:SIZE_GiB` allocates a new disk; `STORAGE:VOLNAME` attaches an existing
// volume (ISO images live under `iso/`). Absolute host paths are refused outright: only root
// may use them in PVE, and they would expose host block devices to an agent.
const NEW_DISK_RE = /^([A-Za-z][A-Za-z0-9\-_.]*[A-Za-z0-9]):(\d+(?:\.\d+)?)$/;
const VOLUME_RE = /^([A-Za-z][A-Za-z0-9\-_.]*[A-Za-z0-9]):([A-Za-z0-9][A-Za-z0-9._+\-/]{0,254})$/;
const MAX_DISK_GIB = 1_048_576;

function checkVolume(value: string): string | null {
  if (value === 'none' || value === 'cdrom') return null;
  if (value.startsWith('/')) return 'absolute paths are not allowed; use STORAGE:VOLUME';
  const fresh = NEW_DISK_RE.exec(value);
  if (fresh) return Number(fresh[2]) <= MAX_DISK_GIB ? null : `size must be at most ${MAX_DISK_GIB} GiB`;
  const vol = VOLUME_RE.exec(value);
  if (!vol || !STORAGE_ID_RE.test(vol[1] ?? '')) {
    return `${quote(value)} is not STORAGE:SIZE_GiB (e.g. local-lvm:32), STORAGE:VOLUME (e.g. local:iso/debian.iso), none or cdrom`;
  }
  const path = vol[2] ?? '';
  if (path.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) {
    return `${quote(value)}: volume names must not contain empty, "." or ".." path segments`;
  }
  return null;
}

const throttle = { bps: int(0), bps_rd: int(0), bps_wr: int(0), iops: int(0), iops_rd: int(0),
  iops_wr: int(0), iops_max: int(0), iops_rd_max: int(0), iops_wr_max: int(0), mbps: num(0),
  mbps_rd: num(0), mbps_wr: num(0), mbps_max: num(0), mbps_rd_max: num(0), mbps_wr_max: num(0),
  bps_max_length: int(1), bps_rd_max_length: int(1), bps_wr_max_length: int(1),
  iops_max_length: int(1), iops_rd_max_length: int(1), iops_wr_max_length: int(1) };

const DRIVE_KEYS: Record<string, KeyRule> = {
  file: { type: 'string', check: checkVolume },
  media: oneOf('disk', 'cdrom'),
  aio: oneOf('native', 'threads', 'io_uring'),
  backup: bool,
  cache: oneOf('none', 'writethrough', 'writeback', 'unsafe', 'directsync'),
  detect_zeroes: bool,
  discard: oneOf('ignore', 'on'),
  format: oneOf('raw', 'qcow', 'qed', 'qcow2', 'vmdk', 'cloop'),
  'import-from': { type: 'string', check: (v) => (v.startsWith('/') || NEW_DISK_RE.test(v) ? 'must be an existing STORAGE:VOLUME' : checkVolume(v)) },
  replicate: bool,
  rerror: oneOf('ignore', 'report', 'stop'),
  werror: oneOf('enospc', 'ignore', 'report', 'stop'),
  serial: urlencoded('serial', 60),
  shared: bool,
  size: matching(/^\d+(?:\.\d+)?[KMGT]?$/, 'a size such as 32G'),
  snapshot: bool,
  ssd: bool,
  wwn: matching(/^0x[0-9a-fA-F]{16}$/, 'a WWN such as 0x5000c50015ea71ad'),
  ...throttle,
};
const DRIVE_ALIASES = {
  volume: 'file',
  bps_rd_length: 'bps_rd_max_length',
  bps_wr_length: 'bps_wr_max_length',
  iops_rd_length: 'iops_rd_max_length',
  iops_wr_length: 'iops_wr_max_length',
};

export const SCSI_FORMAT: PropertyFormat = {
  defaultKey: 'file',
  aliases: DRIVE_ALIASES,
  keys: {
    ...DRIVE_KEYS,
    iothread: bool,
    product: matching(/^[A-Za-z0-9\-_ ]{0,16}$/, 'a product name of at most 16 characters'),
    vendor: matching(/^[A-Za-z0-9\-_ ]{0,8}$/, 'a vendor name of at most 8 characters'),
    queues: int(2),
    ro: bool,
    scsiblock: bool,
  },
};

export const IDE_FORMAT: PropertyFormat = {
  defaultKey: 'file',
  aliases: DRIVE_ALIASES,
  keys: {
    ...DRIVE_KEYS,
    model: urlencoded('model', 120),
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
const CPU_FLAGS = ['pcid', 'spec-ctrl', 'ibpb', 'ssbd', 'virt-ssbd', 'amd-ssbd', 'amd-no-ssb',
  'pdpe1gb', 'md-clear', 'hv-tlbflush', 'hv-evmcs', 'aes', 'nested-virt'];
const CPU_FLAG_RE = new RegExp(`^[+-](?:${CPU_FLAGS.join('|')})$`);

export const CPU_FORMAT: PropertyFormat = {
  defaultKey: 'cputype',
  keys: {
    cputype: matching(/^(?:custom-)?[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/, 'a CPU model such as host, x86-64-v2-AES or custom-<name>'),
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

/** Fields a parsed drive carries besides its keys (see parseDrive). */
export const DRIVE_DERIVED_FIELDS = ['storage', 'size_gib', 'new_disk', 'volume', 'iso'] as const;

/** Every field a parsed property string of this format can have (its keys, plus derived ones). */
export function fieldsOf(format: PropertyFormat, derived: readonly string[] = []): string[] {
  return [...Object.keys(format.keys), ...derived];
}

/** Turns parsed strings into typed fields using the format's rules. */
function typed(parsed: Parsed, format: PropertyFormat): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const [key, text] of Object.entries(parsed)) {
    const rule = format.keys[key];
    if (rule?.type === 'boolean') out[key] = text === '1';
    else if (rule?.type === 'integer' || rule?.type === 'number') out[key] = Number(text);
    else out[key] = text;
  }
  return out;
}

function parseWith(
  text: string,
  format: PropertyFormat,
  finish: (parsed: Parsed) => string | null = () => null,
  derive: (parsed: Parsed) => Record<string, FieldValue> = () => ({}),
): OptionResult {
  const result = parsePropertyString(text, format);
  if (!result.ok) return result;
  const problem = finish(result.value);
  if (problem !== null) return { ok: false, error: problem };
  const value = result.value;
  return {
    ok: true,
    value: { text: printPropertyString(value, format), fields: { ...typed(value, format), ...derive(value) } },
  };
}

export function parseNet(text: string): OptionResult {
  return parseWith(text, NET_FORMAT, (p) =>
    p.model === undefined ? 'a NIC model is required first, e.g. virtio,bridge=vmbr0' : null,
  );
}

/** Parses a drive; an ISO image gets `media=cdrom` added, as PVE insists on it explicitly. */
export function parseDrive(text: string, format: PropertyFormat): OptionResult {
  return parseWith(
    text,
    format,
    (p) => {
      const file = p.file;
      if (file === undefined) return 'a volume is required first, e.g. local-lvm:32';
      const fresh = NEW_DISK_RE.exec(file);
      if (fresh && Number(fresh[2]) === 0 && p['import-from'] === undefined) {
        return 'size 0 is only valid together with import-from';
      }
      if (p['import-from'] !== undefined && !(fresh && Number(fresh[2]) === 0)) {
        return 'import-from needs a new disk written STORAGE:0, e.g. local-lvm:0';
      }
      if (isIso(file)) {
        if (p.media === 'disk') return 'an ISO image must be attached with media=cdrom';
        p.media = 'cdrom';
      }
      return null;
    },
    (p) => {
      const file = p.file ?? '';
      const fresh = NEW_DISK_RE.exec(file);
      const storage = file.includes(':') ? file.slice(0, file.indexOf(':')) : '';
      return {
        storage,
        ...(fresh ? { size_gib: Number(fresh[2]), new_disk: true } : { new_disk: false }),
        ...(file.includes(':') && !fresh ? { volume: file } : {}),
        iso: isIso(file),
      };
    },
  );
}

/**
 * A CD-ROM drive (the installer ISO on ide2): `none`, `cdrom`, or an ISO volume, never a disk.
 * Disks belong on scsi0, where policy rules on storage, size and imports look for them.
 */
export function parseCdrom(text: string): OptionResult {
  let result = parseDrive(text, IDE_FORMAT);
  if (!result.ok) return result;
  const file = String(result.value.fields.file ?? '');
  if ((file === 'none' || file === 'cdrom') && result.value.fields.media === undefined) {
    result = parseDrive(`${text},media=cdrom`, IDE_FORMAT);
    if (!result.ok) return result;
  }
  const { fields } = result.value;
  if (file !== 'none' && file !== 'cdrom' && fields.iso !== true) {
    return { ok: false, error: 'only a CD-ROM goes here: an ISO volume (STORAGE:iso/NAME.iso), none or cdrom; put disks on scsi0' };
  }
  if (fields.media !== 'cdrom') return { ok: false, error: 'a CD-ROM drive needs media=cdrom' };
  return result;
}

function isIso(file: string): boolean {
  const volname = file.slice(file.indexOf(':') + 1);
  return file.includes(':') && volname.startsWith('iso/');
}

export function parseAgent(text: string): OptionResult {
  return parseWith(text, AGENT_FORMAT, (p) =>
    p.enabled === undefined ? 'enabled (1 or 0) is required first, e.g. 1,fstrim_cloned_disks=1' : null,
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
