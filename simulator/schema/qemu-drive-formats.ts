// Drive property strings for POST /nodes/{node}/qemu (ide/sata/scsi/virtio, efidisk0, tpmstate0,
// unused), written from the PVE 9.1.3 schema: every bus shares one key set plus a few of its own.
import type { KeySchema, PropertyStringFormat, PropSchema, SchemaType } from './schema-types.ts';

const opt = (type: SchemaType, extra: Omit<PropSchema, 'type'> = {}): PropSchema => ({
  type,
  optional: true,
  ...extra,
});

const FILE: PropSchema = { type: 'string', defaultKey: true, format: 'pve-volume-id-or-qm-path' };
const IMPORT_FROM = opt('string', { format: 'pve-volume-id-or-absolute-path' });
const SECONDS = opt('integer', { minimum: 1 });
const IMAGE_FORMATS = ['raw', 'qcow', 'qed', 'qcow2', 'vmdk', 'cloop'];

/** Throttling keys: bps/iops are integers, mbps numbers, *_length old aliases of *_max_length. */
function throttleKeys(): Record<string, KeySchema> {
  const keys: Record<string, KeySchema> = {};
  for (const dir of ['', '_rd', '_wr']) {
    keys[`bps${dir}`] = opt('integer');
    keys[`bps${dir}_max_length`] = SECONDS;
    keys[`iops${dir}`] = opt('integer');
    keys[`iops${dir}_max`] = opt('integer');
    keys[`iops${dir}_max_length`] = SECONDS;
    keys[`mbps${dir}`] = opt('number');
    keys[`mbps${dir}_max`] = opt('number');
    if (dir !== '') {
      keys[`bps${dir}_length`] = { alias: `bps${dir}_max_length` };
      keys[`iops${dir}_length`] = { alias: `iops${dir}_max_length` };
    }
  }
  return keys;
}

const COMMON_DRIVE_KEYS: Readonly<Record<string, KeySchema>> = {
  file: FILE,
  volume: { alias: 'file' },
  'import-from': IMPORT_FROM,
  media: opt('string', { enum: ['cdrom', 'disk'] }),
  cache: opt('string', { enum: ['none', 'writethrough', 'writeback', 'unsafe', 'directsync'] }),
  format: opt('string', { enum: IMAGE_FORMATS }),
  discard: opt('string', { enum: ['ignore', 'on'] }),
  detect_zeroes: opt('boolean'),
  aio: opt('string', { enum: ['native', 'threads', 'io_uring'] }),
  backup: opt('boolean'),
  replicate: opt('boolean'),
  rerror: opt('string', { enum: ['ignore', 'report', 'stop'] }),
  werror: opt('string', { enum: ['enospc', 'ignore', 'report', 'stop'] }),
  serial: opt('string', { format: 'urlencoded', maxLength: 60 }),
  shared: opt('boolean'),
  size: opt('string', { format: 'disk-size' }),
  snapshot: opt('boolean'),
  ...throttleKeys(),
};

const SSD = opt('boolean');
const WWN = opt('string', { pattern: '^(0x)[0-9a-fA-F]{16}' });
const IOTHREAD = opt('boolean');
const RO = opt('boolean');

export const IDE_FORMAT: PropertyStringFormat = {
  keys: {
    ...COMMON_DRIVE_KEYS,
    model: opt('string', { format: 'urlencoded', maxLength: 120 }),
    ssd: SSD,
    wwn: WWN,
  },
};

export const SATA_FORMAT: PropertyStringFormat = {
  keys: { ...COMMON_DRIVE_KEYS, ssd: SSD, wwn: WWN },
};

export const SCSI_FORMAT: PropertyStringFormat = {
  keys: {
    ...COMMON_DRIVE_KEYS,
    iothread: IOTHREAD,
    product: opt('string', { pattern: '[A-Za-z0-9\\-_\\s]{0,16}' }),
    queues: opt('integer', { minimum: 2 }),
    ro: RO,
    scsiblock: opt('boolean'),
    ssd: SSD,
    vendor: opt('string', { pattern: '[A-Za-z0-9\\-_\\s]{0,8}' }),
    wwn: WWN,
  },
};

export const VIRTIO_FORMAT: PropertyStringFormat = {
  keys: { ...COMMON_DRIVE_KEYS, iothread: IOTHREAD, ro: RO },
};

export const EFIDISK_FORMAT: PropertyStringFormat = {
  keys: {
    file: FILE,
    volume: { alias: 'file' },
    'import-from': IMPORT_FROM,
    efitype: opt('string', { enum: ['2m', '4m'] }),
    format: opt('string', { enum: IMAGE_FORMATS }),
    'ms-cert': opt('string', { enum: ['2011', '2023', '2023w', '2023k'] }),
    'pre-enrolled-keys': opt('boolean'),
    size: opt('string', { format: 'disk-size' }),
  },
};

export const TPMSTATE_FORMAT: PropertyStringFormat = {
  keys: {
    file: FILE,
    volume: { alias: 'file' },
    'import-from': IMPORT_FROM,
    format: opt('string', { enum: ['raw', 'qcow2', 'vmdk'] }),
    size: opt('string', { format: 'disk-size' }),
    version: opt('string', { enum: ['v1.2', 'v2.0'] }),
  },
};

export const UNUSED_FORMAT: PropertyStringFormat = {
  keys: {
    file: { type: 'string', defaultKey: true, format: 'pve-volume-id' },
    volume: { alias: 'file' },
  },
};

/** The drive format of a drive parameter name (scsi3 → SCSI_FORMAT), for later drive checks. */
export function driveFormatOf(name: string): PropertyStringFormat | undefined {
  if (name === 'efidisk0') return EFIDISK_FORMAT;
  if (name === 'tpmstate0') return TPMSTATE_FORMAT;
  const bus = /^(ide|sata|scsi|virtio)\d+$/.exec(name)?.[1];
  const formats: Record<string, PropertyStringFormat> = {
    ide: IDE_FORMAT,
    sata: SATA_FORMAT,
    scsi: SCSI_FORMAT,
    virtio: VIRTIO_FORMAT,
  };
  return bus ? formats[bus] : undefined;
}
