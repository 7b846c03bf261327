// What runs inside a simulated VM, as its QEMU guest agent reports it: the distribution (Debian 13
// by default, Ubuntu 24.04 on 102 and 105, Windows 11 for win* ostypes), the agent's version, the
// host name and the mounted filesystems (the files inside are in guest-files.ts).
import type { Guest } from './cluster-state.ts';
import { parseProps, parseSize, sortedDriveKeys, isCdrom } from './guest-config.ts';

export type OsFamily = 'debian' | 'ubuntu' | 'windows';

export interface GuestOs {
  readonly family: OsFamily;
  readonly agentVersion: string;
  /** guest-get-osinfo's answer. */
  readonly osinfo: Readonly<Record<string, string>>;
}

const UBUNTU_VMIDS = new Set([102, 105]);

const DEBIAN: GuestOs = {
  family: 'debian',
  agentVersion: '10.0.2',
  osinfo: {
    id: 'debian',
    'kernel-release': '6.12.48+deb13-amd64',
    'kernel-version': '#1 SMP PREEMPT_DYNAMIC Debian 6.12.48-1 (2025-09-20)',
    machine: 'x86_64',
    name: 'Debian GNU/Linux',
    'pretty-name': 'Debian GNU/Linux 13 (trixie)',
    version: '13 (trixie)',
    'version-id': '13',
  },
};

const UBUNTU: GuestOs = {
  family: 'ubuntu',
  agentVersion: '8.2.2',
  osinfo: {
    id: 'ubuntu',
    'kernel-release': '6.8.0-85-generic',
    'kernel-version': '#85-Ubuntu SMP PREEMPT_DYNAMIC Thu Sep 18 15:26:59 UTC 2025',
    machine: 'x86_64',
    name: 'Ubuntu',
    'pretty-name': 'Ubuntu 24.04.3 LTS',
    version: '24.04.3 LTS (Noble Numbat)',
    'version-id': '24.04',
  },
};

const WINDOWS: GuestOs = {
  family: 'windows',
  agentVersion: '109.0.0',
  osinfo: {
    id: 'mswindows',
    'kernel-release': '26100',
    'kernel-version': '10.0',
    machine: 'x86_64',
    name: 'Microsoft Windows',
    'pretty-name': 'Windows 11 Pro',
    variant: 'client',
    'variant-id': 'client',
    version: 'Microsoft Windows 11',
    'version-id': '11',
  },
};

export function guestOs(guest: Guest): GuestOs {
  if (/^win/.test(guest.config.ostype ?? '')) return WINDOWS;
  return UBUNTU_VMIDS.has(guest.vmid) ? UBUNTU : DEBIAN;
}

/** The guest's host name: its config name (Windows shows NetBIOS names in capitals). */
export function guestHostname(guest: Guest): string {
  const name = guest.config.name || `vm${guest.vmid}`;
  return guestOs(guest).family === 'windows' ? name.toUpperCase().slice(0, 15) : name;
}

/** A stable address per VM and NIC in the seeded 10.10.<nic>.0/24 LANs. */
export function guestAddress(vmid: number, index: number): string {
  return `10.10.${index}.${(vmid % 200) + 20}`;
}

const MIB = 1024 ** 2;

/** A disk the guest sees: its device, drive key and size. */
interface GuestDisk {
  readonly key: string;
  readonly dev: string;
  readonly size: number;
  readonly bus: 'scsi' | 'virtio' | 'sata' | 'ide';
  readonly unit: number;
}

function guestDisks(guest: Guest): GuestDisk[] {
  let sd = 0;
  let vd = 0;
  const disks: GuestDisk[] = [];
  for (const key of sortedDriveKeys(guest.config)) {
    const value = guest.config[key] ?? '';
    if (/^(efidisk|tpmstate)/.test(key) || isCdrom(value)) continue;
    const bus = /^(scsi|virtio|sata|ide)/.exec(key)?.[1] as GuestDisk['bus'];
    const letter = (n: number) => String.fromCharCode(97 + n);
    const dev = bus === 'virtio' ? `/dev/vd${letter(vd++)}` : `/dev/sd${letter(sd++)}`;
    const size = parseSize(parseProps(value, 'file').size ?? '0') ?? 0;
    disks.push({ key, dev, size, bus, unit: Number(/\d+$/.exec(key)?.[0] ?? 0) });
  }
  return disks;
}

/** How full a guest's root filesystem is: stable per VM. */
const usedFraction = (vmid: number) => 0.09 + (vmid % 7) * 0.035;

export interface GuestFilesystem {
  readonly name: string;
  readonly dev: string;
  readonly mountpoint: string;
  readonly type: string;
  readonly total: number;
  readonly used: number;
  readonly disk: GuestDisk;
}

/** The mounted filesystems: / (and /boot/efi) on the first disk, one per further disk. */
export function guestFilesystems(guest: Guest): GuestFilesystem[] {
  const windows = guestOs(guest).family === 'windows';
  return guestDisks(guest).flatMap((disk, index): GuestFilesystem[] => {
    const part = (n: number) => `${disk.dev}${n}`;
    if (windows) {
      const total = disk.size - 600 * MIB;
      return [
        {
          name: `\\\\?\\Volume{${(guest.vmid * 7919 + index).toString(16).padStart(8, '0')}-0000-0000-0000-100000000000}\\`,
          dev: disk.dev,
          mountpoint: `${String.fromCharCode(67 + index)}:\\`,
          type: 'NTFS',
          total,
          used: Math.round(total * (usedFraction(guest.vmid) + 0.25)),
          disk,
        },
      ];
    }
    if (index === 0) {
      const total = disk.size - 128 * MIB;
      return [
        {
          name: part(1).slice(5),
          dev: part(1),
          mountpoint: '/',
          type: 'ext4',
          total,
          used: Math.round(total * usedFraction(guest.vmid)),
          disk,
        },
        {
          name: part(15).slice(5),
          dev: part(15),
          mountpoint: '/boot/efi',
          type: 'vfat',
          total: 124 * MIB,
          used: 12 * MIB,
          disk,
        },
      ];
    }
    const total = disk.size;
    const mountpoint = index === 1 ? '/srv' : `/srv/data${index}`;
    return [
      {
        name: disk.dev.slice(5),
        dev: disk.dev,
        mountpoint,
        type: 'xfs',
        total,
        used: Math.round(total * usedFraction(guest.vmid + index) * 2),
        disk,
      },
    ];
  });
}

/** guest-get-fsinfo: QGA's GuestFilesystemInfo list. */
export function fsinfo(guest: Guest): unknown[] {
  return guestFilesystems(guest).map((fs) => ({
    name: fs.name,
    mountpoint: fs.mountpoint,
    type: fs.type,
    'used-bytes': fs.used,
    'total-bytes': fs.total,
    disk: [
      {
        'bus-type': fs.disk.bus === 'virtio' ? 'virtio' : fs.disk.bus,
        bus: 0,
        target: fs.disk.bus === 'virtio' ? 0 : fs.disk.unit,
        unit: 0,
        'pci-controller': {
          domain: 0,
          bus: fs.disk.bus === 'virtio' ? 0 : 9,
          slot: 1 + fs.disk.unit,
          function: 0,
        },
        dev: fs.dev,
        ...(fs.disk.bus === 'virtio' ? {} : { serial: `0QEMU_QEMU_HARDDISK_drive-${fs.disk.key}` }),
      },
    ],
  }));
}
