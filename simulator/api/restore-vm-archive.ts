// What qmrestore reads from a backup (QemuServer.pm $parse_backup_hints, restore_vma_archive,
// restore_proxmox_backup_archive, restore_update_config_line): the disks to allocate and where,
// the log of vma extract / pbs-restore, why an archive cannot become a VM, and the config the
// restored VM gets.
import { dataFraction, type BackupDisk } from '../cluster/backups.ts';
import type { ClusterState, GuestConfig, NodeState, Volume } from '../cluster/cluster-state.ts';
import {
  isCdrom,
  isQemuDriveKey,
  parseProps,
  parseSize,
  printProps,
  randomUuid,
} from '../cluster/guest-config.ts';
import { parseVolumeId, storageConfig } from '../cluster/volumes.ts';
import { printNet } from './net-config.ts';
import { type BackupArchive, ctimeText, pbsRepository, pbsSnapshot } from './restore-common.ts';
import { volumePath } from './storage-volume.ts';

export interface RestoreRequest {
  readonly vmid: number;
  readonly node: NodeState;
  readonly archive: BackupArchive;
  /** Options given besides the archive: they override the backup's config. */
  readonly params: Readonly<Record<string, string>>;
  readonly force: boolean;
  readonly unique: boolean;
  readonly start: boolean;
  readonly haManaged: boolean;
  readonly storage?: string;
  readonly pool?: string;
  readonly live?: boolean;
}

/** A disk of the backup and where the restore puts it ($parse_backup_hints). */
export interface RestoreDisk extends BackupDisk {
  readonly devname: string;
  readonly storeid: string;
  readonly cloudinit: boolean;
}

const CLOUDINIT_RE = /[:/](?:vm-\d+-)?cloudinit(?:\.(raw|qcow2|vmdk))?$/;

/** The backup's disks (not CD-ROMs, not backup=0), each on `storage` or where it was. */
export function restoreDisks(config: GuestConfig, storage: string | undefined): RestoreDisk[] {
  const disks: RestoreDisk[] = [];
  for (const key of Object.keys(config).filter(isQemuDriveKey).sort()) {
    const value = config[key] ?? '';
    const props = parseProps(value, 'file');
    const file = props.file ?? '';
    const cloudinit = CLOUDINIT_RE.test(file);
    if ((isCdrom(value) && !cloudinit) || props.backup === '0') continue;
    const own = parseVolumeId(file)?.storeid;
    const storeid = storage !== undefined ? storage || 'local' : (own ?? 'local');
    disks.push({
      key,
      volid: file,
      size: cloudinit ? 4 * 1024 ** 2 : (parseSize(props.size ?? '') ?? -1),
      included: true,
      devname: key === 'tpmstate0' ? 'drive-tpmstate0-backup' : `drive-${key}`,
      storeid,
      cloudinit,
    });
  }
  return disks;
}

/** The lines restore_vma_archive prints before it allocates (vma extract's header). */
export function vmaHeader(
  archive: BackupArchive,
  volume: Volume,
  disks: readonly RestoreDisk[],
  tmp: string,
): string[] {
  const comp = /\.(zst|gz|lzo)$/.exec(archive.volname)?.[1];
  const decompress =
    comp === 'zst'
      ? `zstd -q -d -c ${archive.path} | `
      : comp === 'gz'
        ? `zcat ${archive.path} | `
        : comp === 'lzo'
          ? `lzop -d -c ${archive.path} | `
          : '';
  const source = decompress ? '-' : archive.path;
  const conf = Object.entries(volume.backupConfig ?? {})
    .map(([k, v]) => `${k}: ${v}\n`)
    .join('');
  return [
    `restore vma archive: ${decompress}vma extract -v -r ${tmp}.fifo ${source} ${tmp}`,
    `CFG: size: ${conf.length} name: qemu-server.conf`,
    ...disks
      .filter((d) => !d.cloudinit)
      .map((d, i) => `DEV: dev_id=${i + 1} size: ${d.size} devname: ${d.devname}`),
    `CTIME: ${ctimeText(archiveTime(volume))}`,
  ];
}

/** archive_info's ctime: the time in a vzdump file name (else the volume's ctime). */
function archiveTime(volume: Volume): number {
  const m = /-(\d{4})_(\d\d)_(\d\d)-(\d\d)_(\d\d)_(\d\d)\./.exec(volume.volname);
  if (!m) return volume.ctime;
  const [, y, mo, d, h, mi, se] = m.map(Number) as number[];
  return Date.UTC(y ?? 0, (mo ?? 1) - 1, d, h, mi, se) / 1000;
}

/** Why the archive cannot be restored into a VM, checked when the worker starts. */
export function archiveError(req: RestoreRequest, volume: Volume | undefined): string | undefined {
  const { archive } = req;
  if (!archive.pbs && req.live) {
    return 'live-restore is only compatible with backup images from a Proxmox Backup Server';
  }
  if (!volume) {
    return archive.pbs
      ? `command '/usr/bin/proxmox-backup-client restore --crypt-mode=none ${pbsSnapshot(archive)} index.json /var/tmp/vzdumptmp${req.vmid}/index.json --repository ${pbsRepository(archive.storage)}' failed: exit code 255`
      : `ERROR: file '${archive.path}' does not exist`;
  }
  if (archive.pbs) {
    return volume.format === 'pbs-vm'
      ? undefined
      : `got unexpected backup format '${volume.format}'`;
  }
  if (/^tar/.test(volume.format)) {
    const keys = Object.keys(req.params);
    if (keys.length > 0) {
      return `cannot pass along options (${keys.join(' ')}) when restoring from tar archive`;
    }
    return `ERROR: file '${archive.path}' does not look like a QemuServer vzdump backup`;
  }
  return undefined;
}

/** The backup config as the restored VM gets it (restore_update_config_line + override). */
export function restoredConfig(
  backup: GuestConfig,
  map: Readonly<Record<string, string>>,
  req: RestoreRequest,
): GuestConfig {
  const config: GuestConfig = {};
  for (const [key, value] of Object.entries(backup)) {
    if (key === 'lock' || key === 'parent' || /^unused\d+$/.test(key)) continue;
    if (isQemuDriveKey(key)) {
      const { format: _format, ...props } = parseProps(value, 'file');
      if (props.backup === '0') continue;
      const target = map[key];
      config[key] = target ? printProps({ ...props, file: target }, { defaultKey: 'file' }) : value;
    } else if (/^net\d+$/.test(key) && req.unique) {
      config[key] = printNet(value, true);
    } else if (key === 'vmgenid') {
      config[key] = value === '0' ? value : randomUuid();
    } else if (key === 'smbios1' && req.unique) {
      config[key] = value.replace(/(^|,)uuid=[^,]*/, `$1uuid=${randomUuid()}`);
    } else {
      config[key] = value;
    }
  }
  return { ...config, ...req.params };
}

/** The restore's progress: vma extract's, or pbs-restore's per disk. */
export function progressLines(
  state: ClusterState,
  req: RestoreRequest,
  disks: readonly RestoreDisk[],
  map: Readonly<Record<string, string>>,
): string[] {
  const data = disks.filter((d) => !d.cloudinit);
  const total = data.reduce((sum, d) => sum + d.size, 0);
  const sparse = Math.round(total * (1 - dataFraction(req.vmid)));
  if (!req.archive.pbs) {
    return [
      `progress 1% (read ${Math.round(total / 100)} bytes, duration 0 sec)`,
      `progress 50% (read ${Math.round(total / 2)} bytes, duration 1 sec)`,
      `progress 100% (read ${total} bytes, duration 1 sec)`,
      `total bytes read ${total}, sparse bytes ${sparse} (${((sparse * 100) / Math.max(total, 1)).toFixed(3)}%)`,
      'space reduction due to 4K zero blocks 0.91%',
    ];
  }
  const repo = pbsRepository(req.archive.storage);
  const snapshot = pbsSnapshot(req.archive);
  return data.flatMap((d) => {
    const target = map[d.key] ?? '';
    const path = volumePath(storageConfig(state, d.storeid), parseVolumeId(target)?.volname ?? '');
    const zero = Math.round(d.size * (1 - dataFraction(req.vmid)));
    return [
      `restore proxmox backup image: /usr/bin/pbs-restore --repository ${repo} ${snapshot} ${d.devname}.img.fidx ${path} --verbose --format raw --skip-zero`,
      `connecting to repository '${repo}'`,
      `open block backend for target '${path}'`,
      `starting to restore snapshot '${snapshot}'`,
      'download and verify backup index',
      `progress 100% (read ${d.size} bytes, zeroes = ${Math.floor((zero * 100) / Math.max(d.size, 1))}% (${zero} bytes), duration 1 sec)`,
      `restore image complete (bytes=${d.size}, duration=1.00s, speed=${(d.size / 1024 ** 2).toFixed(2)}MB/s)`,
    ];
  });
}
