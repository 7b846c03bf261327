// Drives: `STORAGE:SIZE_GiB` for a new disk, `STORAGE:VOLUME` for an existing one, ISO images
// for CD-ROMs; the keys PVE 9 allows on SCSI, VirtIO, SATA and IDE drives; and the derived fields (storage,
// size, whether it is a new disk or an ISO) that checks and policy rules look at.

import {
  bool,
  int,
  matching,
  num,
  oneOf,
  parseWith,
  urlencoded,
  type OptionResult,
} from './option-rules';
import type { KeyRule, PropertyFormat } from './property-string';
import { NEW_DISK_RE, checkVolumeId, volumeFields } from './volumes';

/** A drive's volume: a disk (new or existing), or a CD-ROM's ISO, `none` or `cdrom`. */
function checkVolume(value: string): string | null {
  if (value === 'none' || value === 'cdrom') return null;
  return checkVolumeId(
    value,
    'STORAGE:SIZE_GiB (e.g. local-lvm:32), STORAGE:VOLUME (e.g. local:iso/debian.iso), none or cdrom',
  );
}

const throttle = {
  bps: int(0),
  bps_rd: int(0),
  bps_wr: int(0),
  iops: int(0),
  iops_rd: int(0),
  iops_wr: int(0),
  iops_max: int(0),
  iops_rd_max: int(0),
  iops_wr_max: int(0),
  mbps: num(0),
  mbps_rd: num(0),
  mbps_wr: num(0),
  mbps_max: num(0),
  mbps_rd_max: num(0),
  mbps_wr_max: num(0),
  bps_max_length: int(1),
  bps_rd_max_length: int(1),
  bps_wr_max_length: int(1),
  iops_max_length: int(1),
  iops_rd_max_length: int(1),
  iops_wr_max_length: int(1),
};

const DRIVE_KEYS: Record<string, KeyRule> = {
  file: { type: 'string', check: checkVolume },
  media: oneOf('disk', 'cdrom'),
  aio: oneOf('native', 'threads', 'io_uring'),
  backup: bool,
  cache: oneOf('none', 'writethrough', 'writeback', 'unsafe', 'directsync'),
  detect_zeroes: bool,
  discard: oneOf('ignore', 'on'),
  format: oneOf('raw', 'qcow', 'qed', 'qcow2', 'vmdk', 'cloop'),
  'import-from': {
    type: 'string',
    check: (v) =>
      v.startsWith('/') || NEW_DISK_RE.test(v)
        ? 'must be an existing STORAGE:VOLUME'
        : checkVolume(v),
  },
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

export const SATA_FORMAT: PropertyFormat = {
  defaultKey: 'file',
  aliases: DRIVE_ALIASES,
  keys: DRIVE_KEYS,
};

const { ssd: _ssd, wwn: _wwn, ...VIRTIO_BASE } = DRIVE_KEYS;
export const VIRTIO_FORMAT: PropertyFormat = {
  defaultKey: 'file',
  aliases: DRIVE_ALIASES,
  keys: { ...VIRTIO_BASE, iothread: bool, ro: bool },
};

/** Fields a parsed drive carries besides its keys (see parseDrive). */
export const DRIVE_DERIVED_FIELDS = ['storage', 'size_gib', 'new_disk', 'volume', 'iso'] as const;

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
    (p) => ({ ...volumeFields(p.file ?? ''), iso: isIso(p.file ?? '') }),
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
    return {
      ok: false,
      error:
        'only a CD-ROM goes here: an ISO volume (STORAGE:iso/NAME.iso), none or cdrom; put disks on scsi0',
    };
  }
  if (fields.media !== 'cdrom') return { ok: false, error: 'a CD-ROM drive needs media=cdrom' };
  return result;
}

function isIso(file: string): boolean {
  const volname = file.slice(file.indexOf(':') + 1);
  return file.includes(':') && volname.startsWith('iso/');
}
