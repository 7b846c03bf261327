// POST /nodes/{node}/qemu with `archive`: qemu-server's restore (API2/Qemu.pm create_vm,
// QemuServer.pm restore_vma_archive / restore_proxmox_backup_archive). At once: the archive must
// be a backup volume the caller may read (and a vzdump file must exist here), then
// create_and_lock_config: an existing VM needs force=1 (its config gets `lock: create`), a new one
// gets a config holding only that lock. The qmrestore task then refuses a protected or running
// VM, frees the old VM's disks that the backup replaces, allocates the backup's disks on
// `storage` (or where they were), writes the backup's config with the new volumes (a new
// vmgenid; new MACs and SMBIOS UUID with unique=1; given options override), adds volumes of the
// VMID it does not reference as unused[n], and starts the VM if asked. A failure leaves the VM's
// config behind without its lock, as PVE does ("state is NOT cleaned up").
import { blankGuest } from '../cluster/cluster-state.ts';
import { check } from '../access/permissions.ts';
import type { Guest } from '../cluster/cluster-state.ts';
import { agentEnabled, isCdrom, isQemuDriveKey, parseProps } from '../cluster/guest-config.ts';
import { bootGuest } from '../cluster/power.ts';
import { allocLines, freeLines } from '../cluster/storage-log.ts';
import type { TaskLog, WorkPlan } from '../cluster/tasks.ts';
import {
  allocateImage,
  findVolume,
  parseVolumeId,
  removeVolume,
  storageConfig,
} from '../cluster/volumes.ts';
import { dieError } from '../schema/pve-error.ts';
import { startGuestTask } from './guest-helpers.ts';
import type { HandlerContext } from './handler-context.ts';
import {
  archiveVolume,
  checkBackupAccess,
  pbsRepository,
  pbsSnapshot,
  type BackupArchive,
} from './restore-common.ts';
import {
  archiveError,
  progressLines,
  type RestoreRequest,
  restoreDisks,
  restoredConfig,
  vmaHeader,
} from './restore-vm-archive.ts';
import { volumePath } from './storage-volume.ts';

export type RestoreArchive = BackupArchive;
export type { RestoreRequest } from './restore-vm-archive.ts';

/** check_volume_access(..., 'backup') and $classify_restore_archive (a file must exist). */
export function checkRestoreArchive(
  ctx: HandlerContext,
  vmid: number,
  archive: string,
): RestoreArchive {
  const checked = checkBackupAccess(ctx, vmid, archive);
  if (!checked.pbs && !archiveVolume(ctx, checked, String(ctx.params.node))) {
    throw dieError(`can't find file '${archive}'`);
  }
  return checked;
}

/** create_and_lock_config($vmid, $force), then the qmrestore worker. */
export function spawnRestoreTask(ctx: HandlerContext, req: RestoreRequest): string {
  const { vmid, node } = req;
  const emsg = `unable to restore VM ${vmid} -`;
  const existing = ctx.state.guests.get(vmid);
  let guest: Guest;
  if (existing) {
    if (!req.force) {
      const kind = existing.type === 'qemu' ? 'VM' : 'CT';
      throw dieError(`${emsg} ${kind} ${vmid} already exists on node '${existing.node}'`);
    }
    if (existing.type !== 'qemu' || existing.node !== node.name) {
      throw dieError(
        `${emsg} close (rename) atomic file '/etc/pve/nodes/${node.name}/qemu-server/${vmid}.conf' failed: File exists`,
      );
    }
    if (existing.config.lock) throw dieError(`${emsg} VM is locked (${existing.config.lock})`);
    existing.config.lock = 'create';
    guest = existing;
  } else {
    guest = blankGuest(vmid, 'qemu', node.name);
    ctx.state.guests.set(vmid, guest);
  }
  return startGuestTask(ctx, 'qmrestore', vmid, (log) => restoreWork(ctx, req, guest, log), node);
}

/** restore_cleanup_oldconf: free the old disks the backup replaces, and snapshot RAM states. */
function cleanupOldConfig(
  ctx: HandlerContext,
  old: Guest,
  replaced: ReadonlySet<string>,
  log: TaskLog,
): void {
  const free = (volid: string) => {
    const volume = findVolume(ctx.state, old.node, volid);
    if (!volume || volume.owner !== old.vmid) return;
    removeVolume(ctx.state, old.node, volid);
    log.info(...freeLines(storageConfig(ctx.state, volume.storage), volid));
  };
  for (const key of Object.keys(old.config).filter(isQemuDriveKey)) {
    const value = old.config[key] ?? '';
    if (isCdrom(value) || !replaced.has(key)) continue;
    free(parseProps(value, 'file').file ?? '');
  }
  for (const snap of old.snapshots.values()) if (snap.vmstate) free(snap.vmstate);
}

/** template_create after a restore of a template: its disks become base-<vmid>-disk-<n>. */
function convertToTemplate(ctx: HandlerContext, guest: Guest, log: TaskLog): void {
  log.info('Convert to template.');
  for (const key of Object.keys(guest.config).filter(isQemuDriveKey)) {
    const value = guest.config[key] ?? '';
    const volid = parseProps(value, 'file').file ?? '';
    const volume = findVolume(ctx.state, guest.node, volid);
    if (isCdrom(value) || !volume || !/(^|\/)vm-\d+-disk-/.test(volume.volname)) continue;
    const oldName = volume.volname.split('/').pop() ?? '';
    const volname = volume.volname.replace(/vm-(\d+)-disk-/, 'base-$1-disk-');
    const newName = volname.split('/').pop() ?? '';
    ctx.state.volumes = ctx.state.volumes.map((v) => (v === volume ? { ...v, volname } : v));
    guest.config[key] = value.replace(volid, `${volume.storage}:${volname}`);
    const storage = storageConfig(ctx.state, volume.storage);
    if (storage.type === 'lvmthin') {
      const vg = String(storage.extra.vgname);
      log.info(
        `  Renamed "${oldName}" to "${newName}" in volume group "${vg}"`,
        `  Logical volume ${vg}/${newName} changed.`,
      );
    }
  }
}

/** rescan: volumes of the VMID on reachable storages that the config does not use. */
function rescan(ctx: HandlerContext, guest: Guest, log: TaskLog): void {
  log.info('rescan volumes...');
  const used = new Set(
    Object.entries(guest.config)
      .filter(([key]) => isQemuDriveKey(key) || /^unused\d+$/.test(key))
      .map(([key, value]) =>
        /^unused/.test(key) ? value : (parseProps(value, 'file').file ?? ''),
      ),
  );
  const mine = ctx.state.volumes
    .filter((v) => v.vtype === 'images' && v.owner === guest.vmid)
    .filter((v) => v.node === undefined || v.node === guest.node)
    .map((v) => `${v.storage}:${v.volname}`)
    .filter((volid) => !used.has(volid) && !/vm-\d+-state-/.test(volid))
    .sort();
  for (const volid of mine) {
    let n = 0;
    while (guest.config[`unused${n}`] !== undefined) n++;
    guest.config[`unused${n}`] = volid;
    log.info(`VM ${guest.vmid} add unreferenced volume '${volid}' as 'unused${n}' to config`);
  }
}

function restoreWork(
  ctx: HandlerContext,
  req: RestoreRequest,
  guest: Guest,
  log: TaskLog,
): WorkPlan {
  const { state } = ctx;
  const { vmid, node } = req;
  const emsg = `unable to restore VM ${vmid} -`;
  const fail = (error: string): WorkPlan => {
    if (guest.config.lock === 'create') delete guest.config.lock;
    log.info(
      `error before or during data restore, some or all disks were not completely restored. VM ${vmid} state is NOT cleaned up.`,
    );
    return { error };
  };
  if (state.guests.get(vmid) !== guest) return { error: `${emsg} VM ${vmid} vanished` };
  if (guest.config.protection === '1') return fail(`${emsg} - protection mode enabled`);
  if (guest.status === 'running') return fail(`${emsg} vm is running`);
  const volume = archiveVolume(ctx, req.archive, node.name);
  const archiveProblem = archiveError(req, volume);
  if (archiveProblem || !volume) return fail(archiveProblem ?? 'internal error');
  const backup = volume.backupConfig ?? {};
  const disks = restoreDisks(backup, req.storage);
  for (const disk of disks) {
    const storage = state.storages.find((s) => s.id === disk.storeid);
    if (!storage) return fail(`storage '${disk.storeid}' does not exist`);
    if (!storage.content.includes('images')) {
      return fail(`Content type 'images' is not available on storage '${disk.storeid}'`);
    }
    try {
      check(ctx.identity, `/storage/${disk.storeid}`, ['Datastore.AllocateSpace']);
    } catch (err) {
      return fail(err instanceof Error ? err.message.trim() : String(err));
    }
    if (disk.size < 0) return fail(`got no size for '${disk.key}'`);
  }
  const tmp = `/var/tmp/vzdumptmp${100_000 + ((vmid * 7919) % 900_000)}`;
  if (!req.archive.pbs) log.info(...vmaHeader(req.archive, volume, disks, tmp));
  const old = guest.config.lock === 'create' && Object.keys(guest.config).length > 1;
  const allocated: string[] = [];
  return {
    commit: (taskLog, now) => {
      if (old) cleanupOldConfig(ctx, guest, new Set(disks.map((d) => d.key)), taskLog);
      const map: Record<string, string> = {};
      for (const disk of disks) {
        const storage = storageConfig(state, disk.storeid);
        const volid = allocateImage(state, {
          storage,
          node: node.name,
          vmid,
          size: disk.size,
          now,
          ...(disk.cloudinit ? { name: `vm-${vmid}-cloudinit` } : {}),
        });
        allocated.push(volid);
        map[disk.key] = volid;
        taskLog.info(...allocLines(storage, volid, disk.size), `new volume ID is '${volid}'`);
        if (!req.archive.pbs && !disk.cloudinit) {
          const path = volumePath(storage, parseVolumeId(volid)?.volname ?? '');
          taskLog.info(`map '${disk.devname}' to '${path}' (write zeros = 0)`);
        }
      }
      taskLog.info(...progressLines(state, req, disks, map));
      guest.config = restoredConfig(backup, map, req);
      guest.pending = {};
      guest.pendingDelete = [];
      guest.snapshots = new Map();
      guest.agentRunning = agentEnabled(guest.config);
      rescan(ctx, guest, taskLog);
      if (req.pool !== undefined) guest.pool = req.pool;
      if (guest.config.template === '1') convertToTemplate(ctx, guest, taskLog);
      if (req.live) {
        taskLog.info(
          'starting VM for live-restore',
          `repository: '${pbsRepository(req.archive.storage)}', snapshot: '${pbsSnapshot(req.archive)}'`,
          'restore-drive jobs finished successfully, removing all tracking block devices',
        );
        bootGuest(state, guest, now);
      } else if (req.start) {
        taskLog.info('Execute autostart');
        bootGuest(state, guest, now);
      }
      if (req.haManaged) {
        const sid = `vm:${vmid}`;
        const verb = state.haResources.has(sid) ? 'Set' : 'Add';
        const wanted = req.start || req.live ? 'started' : 'stopped';
        taskLog.info(`${verb} HA resource with request-state '${wanted}'`);
        state.haResources.set(sid, {
          ...(state.haResources.get(sid) ?? { type: 'vm' }),
          state: wanted,
        });
      }
    },
    undo: () => {
      for (const volid of allocated) removeVolume(state, node.name, volid);
      if (guest.config.lock === 'create') delete guest.config.lock;
    },
  };
}
