// The disks a guest config holds, read leniently from what Proxmox stores: which key, which
// volume, how big, whether it is a CD-ROM; which one the VM boots from; whether it has a
// cloud-init drive. Pure: previews and refusals are built on it before anything is sent.

import { parsePropertyFields } from './config-view';
import { sizeBytes } from './disk-size';

export interface GuestDisk {
  key: string;
  volume: string;
  /** As the config writes it (32G), or null when it does not say. */
  size: string | null;
  bytes: number | null;
  cdrom: boolean;
  /** Detached: still on the storage, in no slot (unused0). */
  unused: boolean;
}

const QEMU_DISK_KEY =
  /^(?:ide\d|sata\d|scsi\d{1,2}|virtio\d{1,2}|efidisk0|tpmstate0|unused\d{1,3})$/;
const LXC_DISK_KEY = /^(?:rootfs|mp\d{1,3}|unused\d{1,3})$/;

/** The disk keys of a guest kind: what resize and the disk lists accept. */
export const DISK_KEY_RE = { qemu: QEMU_DISK_KEY, lxc: LXC_DISK_KEY } as const;

export function guestDisks(
  config: Readonly<Record<string, string | number>>,
  kind: 'qemu' | 'lxc',
): GuestDisk[] {
  const out: GuestDisk[] = [];
  for (const key of Object.keys(config).sort()) {
    const value = config[key];
    if (typeof value !== 'string' || !DISK_KEY_RE[kind].test(key)) continue;
    const fields = parsePropertyFields(key, value, kind);
    const volume = fields.volume ?? fields.file ?? '';
    const size = fields.size ?? null;
    out.push({
      key,
      volume,
      size,
      bytes: size === null ? null : sizeBytes(size),
      cdrom: fields.media === 'cdrom' || volume === 'none' || volume === 'cdrom',
      unused: key.startsWith('unused'),
    });
  }
  return out;
}

/** The disk a VM boots from: the first disk in its boot order, else the first disk slot in use. */
export function bootDisk(config: Readonly<Record<string, string | number>>): GuestDisk | null {
  const disks = guestDisks(config, 'qemu').filter(
    (d) => !d.cdrom && !d.unused && /^(ide|sata|scsi|virtio)\d/.test(d.key),
  );
  const boot =
    typeof config.boot === 'string' ? parsePropertyFields('boot', config.boot, 'qemu') : {};
  const order = (boot.order ?? (typeof config.bootdisk === 'string' ? config.bootdisk : '')).split(
    ';',
  );
  for (const key of order) {
    const disk = disks.find((d) => d.key === key);
    if (disk) return disk;
  }
  const bus = (d: GuestDisk) =>
    ['scsi', 'virtio', 'sata', 'ide'].indexOf(d.key.replace(/\d+$/, ''));
  return (
    [...disks].sort(
      (a, b) =>
        bus(a) - bus(b) || Number(a.key.replace(/\D/g, '')) - Number(b.key.replace(/\D/g, '')),
    )[0] ?? null
  );
}

/** Whether a VM has a cloud-init drive (without one, ci* settings have no effect). */
export function hasCloudInitDrive(config: Readonly<Record<string, string | number>>): boolean {
  return guestDisks(config, 'qemu').some((d) => /(?:^|[:/])(?:vm-\d+-)?cloudinit/.test(d.volume));
}
