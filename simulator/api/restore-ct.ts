// POST /nodes/{node}/lxc with restore=1 and ostemplate=<backup volid> (pve-container API2/LXC.pm
// create_vm, LXC/Create.pm): the VMID must be free, unless force=1 names a container on this
// node, which must not run nor be protected (VM.Backup on it suffices then); the archive must be a
// backup the caller may read; the target storage (`storage`, default 'local') must hold container
// directories. The vzrestore task recovers the backed-up config ("recovering backed-up
// configuration from ..."), creates the mount points it lists on `storage` (unless rootfs/mp[n]
// are given), destroys the old container's volumes, extracts the archive, and merges the backed-up
// config with the given options (new MACs with unique=1). On failure the new volumes go, and the
// config too unless the old container was still untouched.
import { blankGuest } from '../cluster/cluster-state.ts';
import { check } from '../access/permissions.ts';
import { hasPrivilege } from '../access/tokens.ts';
import { dataFraction } from '../cluster/backups.ts';
import type { Guest, GuestConfig, NodeState } from '../cluster/cluster-state.ts';
import { parseProps, parseSize } from '../cluster/guest-config.ts';
import { bootGuest } from '../cluster/power.ts';
import { freeLines } from '../cluster/storage-log.ts';
import { WorkerDie, type TaskLog, type WorkPlan } from '../cluster/tasks.ts';
import { findVolume, removeVolume, storageConfig } from '../cluster/volumes.ts';
import { dieError, permError } from '../schema/pve-error.ts';
import { extract, startGuestTask } from './guest-helpers.ts';
import type { HandlerContext } from './handler-context.ts';
import { mountValue } from './lxc-config-update.ts';
import { checkRootdirStorage, checkVmidUnused } from './lxc-create.ts';
import { printLxcNet } from './net-config.ts';
import { uniqueTags } from './create-vm-task.ts';
import {
  archiveVolume,
  checkBackupAccess,
  pbsSnapshot,
  type BackupArchive,
} from './restore-common.ts';

interface RestoreFlags {
  readonly force: boolean;
  readonly unique: boolean;
}

const isMountKey = (key: string) => key === 'rootfs' || /^mp\d+$/.test(key);

/** The synchronous part of create_vm with restore=1; returns the vzrestore UPID. */
export function restoreCt(
  ctx: HandlerContext,
  node: NodeState,
  params: Record<string, string>,
  flags: RestoreFlags,
): string {
  const { state, identity } = ctx;
  const vmid = Number(extract(params, 'vmid'));
  const start = extract(params, 'start') === '1';
  const haManaged = extract(params, 'ha-managed') === '1';
  const unprivileged = extract(params, 'unprivileged');
  const existing = state.guests.get(vmid);
  const sameHere = existing?.type === 'lxc' && existing.node === node.name;
  if (!(sameHere && flags.force)) {
    checkVmidUnused(ctx, vmid);
  } else if (existing?.status === 'running') {
    throw dieError("can't overwrite running container");
  } else if (existing?.config.protection === '1') {
    throw dieError(`unable to restore CT ${vmid} - protection mode enabled`);
  }
  for (const key of ['password', 'ssh-public-keys']) extract(params, key);
  if (haManaged) check(identity, '/', ['Sys.Console']);
  const pool = extract(params, 'pool');
  if (pool !== undefined && !state.pools.has(pool))
    throw permError(`pool '${pool}' does not exist`);
  const mayAllocate =
    hasPrivilege(identity, `/vms/${vmid}`, 'VM.Allocate') ||
    (pool !== undefined && hasPrivilege(identity, `/pool/${pool}`, 'VM.Allocate')) ||
    (flags.force && sameHere && hasPrivilege(identity, `/vms/${vmid}`, 'VM.Backup'));
  if (!mayAllocate) throw permError();
  const ostemplate = extract(params, 'ostemplate') ?? '';
  const storage = extract(params, 'storage') ?? 'local';
  if (ostemplate === '-') throw dieError('pipe requires cli environment');
  const archive = checkBackupAccess(ctx, vmid, ostemplate);
  for (const key of Object.keys(params).filter((k) => /^unused\d+$/.test(k))) delete params[key];
  const mounts = Object.keys(params).filter(isMountKey);
  for (const key of mounts) {
    if (/^\d+(\.\d+)?$/.test(params[key] ?? '')) params[key] = `${storage}:${params[key]}`;
    const volume = (params[key] ?? '').split(',')[0] ?? '';
    if (volume.startsWith('/')) throw dieError('Only root can pass arbitrary filesystem paths.');
    checkRootdirStorage(ctx, volume.split(':')[0] ?? '');
  }
  if (mounts.length > 0 && params.rootfs === undefined) {
    throw dieError("mount points configured, but 'rootfs' not set - aborting");
  }
  if (mounts.length === 0) checkRootdirStorage(ctx, storage);
  // create_and_lock_config($vmid, $force)
  const emsg = `unable to restore CT ${vmid} -`;
  let guest: Guest;
  if (existing && sameHere && flags.force) {
    if (existing.config.lock) throw dieError(`${emsg} CT is locked (${existing.config.lock})`);
    existing.config.lock = 'create';
    guest = existing;
  } else {
    guest = blankGuest(vmid, 'lxc', node.name);
    state.guests.set(vmid, guest);
  }
  const req: CtRestore = {
    vmid,
    node,
    archive,
    storage,
    params,
    unique: flags.unique,
    start,
    haManaged,
    existed: guest === existing,
    ...(pool !== undefined ? { pool } : {}),
    ...(unprivileged !== undefined ? { unprivileged } : {}),
  };
  return startGuestTask(ctx, 'vzrestore', vmid, (log) => restoreWork(ctx, req, guest, log), node);
}

interface CtRestore {
  readonly vmid: number;
  readonly node: NodeState;
  readonly archive: BackupArchive;
  readonly storage: string;
  /** Options besides the archive: rootfs/mp[n] and config keys that override the backup's. */
  readonly params: Readonly<Record<string, string>>;
  readonly unique: boolean;
  readonly start: boolean;
  readonly haManaged: boolean;
  /** The container existed (force=1): its config stays if the restore fails early. */
  readonly existed: boolean;
  readonly pool?: string;
  readonly unprivileged?: string;
}

/** recover_config: the archive's pct.conf, or why there is none. */
function recoverConfig(ctx: HandlerContext, req: CtRestore): GuestConfig | string {
  const volume = archiveVolume(ctx, req.archive, req.node.name);
  if (req.archive.pbs) {
    if (!volume) {
      return `proxmox-backup-client failed: Error: unable to load blob '"/mnt/datastore/${String(req.archive.storage.extra.datastore)}/${pbsSnapshot(req.archive)}/index.json.blob"' - No such file or directory (os error 2)`;
    }
    if (volume.format !== 'pbs-ct') return `got unexpected backup format '${volume.format}'`;
  } else {
    if (!volume) return `can't find file '${req.archive.volid}'`;
    if (!/^tar/.test(volume.format)) return 'ERROR: archive contains no configuration file';
  }
  return { ...(volume.backupConfig ?? {}) };
}

/** The mount points to create: the given ones, or the backup's as <storage>:<size in GiB>. */
function mountParams(req: CtRestore, backup: GuestConfig): Record<string, string> | string {
  const given = Object.keys(req.params).filter(isMountKey);
  if (given.length > 0) return Object.fromEntries(given.map((k) => [k, req.params[k] ?? '']));
  if (backup.rootfs === undefined) {
    return 'rootfs configuration could not be recovered, please check and specify manually!';
  }
  const res: Record<string, string> = {};
  for (const key of Object.keys(backup).filter(isMountKey).sort()) {
    const { volume: _volume, size, ...rest } = parseProps(backup[key] ?? '', 'volume');
    const bytes = parseSize(size ?? '');
    if (bytes === undefined) return `unable to detect disk size - please specify ${key} (size)`;
    const gib = bytes / 1024 ** 3;
    const props = Object.entries(rest)
      .map(([k, v]) => `,${k}=${v}`)
      .join('');
    res[key] = `${req.storage}:${gib}${props}`;
  }
  return res;
}

function mkfsLines(bytes: number): string[] {
  const blocks = Math.floor(bytes / 4096);
  return [
    `Creating filesystem with ${blocks} 4k blocks and ${Math.floor(blocks / 4)} inodes`,
    `Filesystem UUID: 7d1c3e52-${String(blocks % 10_000).padStart(4, '0')}-4b6e-9f0a-5c2d8e1b3a47`,
    'Superblock backups stored on blocks: ',
    '\t32768, 98304, 163840, 229376, 294912, 819200, 884736, 1605632',
  ];
}

/** sanitize_and_merge_config: the backed-up options, new mount points, given options on top. */
function mergedConfig(
  req: CtRestore,
  backup: GuestConfig,
  mounts: Readonly<Record<string, string>>,
): GuestConfig {
  const config: GuestConfig = {};
  for (const [key, value] of Object.entries(backup)) {
    if (['lock', 'digest', 'parent', 'template'].includes(key)) continue;
    if (isMountKey(key) || /^unused\d+$/.test(key)) continue;
    config[key] = /^net\d+$/.test(key) && req.unique ? printLxcNet(value, true) : value;
  }
  const overrides = Object.fromEntries(
    Object.entries(req.params).filter(([key]) => !isMountKey(key)),
  );
  for (const key of Object.keys(overrides).filter((k) => /^net\d+$/.test(k))) {
    overrides[key] = printLxcNet(overrides[key] ?? '');
  }
  if (overrides.tags !== undefined) overrides.tags = uniqueTags(overrides.tags);
  const merged: GuestConfig = { ...config, ...overrides, ...mounts };
  if (req.unprivileged !== undefined) {
    if (req.unprivileged === '1') merged.unprivileged = '1';
    else delete merged.unprivileged;
  }
  merged.hostname ||= `CT${req.vmid}`;
  merged.memory ||= '512';
  merged.swap ??= '512';
  return merged;
}

function restoreWork(ctx: HandlerContext, req: CtRestore, guest: Guest, log: TaskLog): WorkPlan {
  const { state } = ctx;
  const emsg = `unable to restore CT ${req.vmid} -`;
  // until disks are created nothing changed: an existing container just loses the lock
  const failEarly = (error: string): WorkPlan => {
    if (req.existed) {
      if (guest.config.lock === 'create') delete guest.config.lock;
    } else {
      state.guests.delete(req.vmid);
    }
    return { error: `${emsg} ${error}` };
  };
  if (state.guests.get(req.vmid) !== guest) return { error: `${emsg} CT ${req.vmid} vanished` };
  if (guest.status === 'running') return failEarly("can't overwrite running container");
  log.info(`recovering backed-up configuration from '${req.archive.volid}'`);
  const backup = recoverConfig(ctx, req);
  if (typeof backup === 'string') return failEarly(backup);
  const mounts = mountParams(req, backup);
  if (typeof mounts === 'string') return failEarly(mounts);
  const job: RestoreJob = {
    backup,
    mounts,
    oldConfig: req.existed ? { ...guest.config } : undefined,
    allocated: [],
  };
  let changed = false;
  return {
    commit: (taskLog, now) => {
      changed = true;
      try {
        commitRestore(ctx, req, guest, job, taskLog, now);
      } catch (err) {
        const text = err instanceof Error ? err.message.trim() : String(err);
        throw new WorkerDie(`${emsg} ${text}`);
      }
    },
    undo: () => {
      for (const volid of job.allocated) removeVolume(state, req.node.name, volid);
      if (changed || !req.existed) state.guests.delete(req.vmid);
      else if (guest.config.lock === 'create') delete guest.config.lock;
    },
  };
}

/** What the worker's start worked out: the backed-up config and the mount points to create. */
interface RestoreJob {
  readonly backup: GuestConfig;
  readonly mounts: Readonly<Record<string, string>>;
  /** The replaced container's config (force=1). */
  readonly oldConfig: GuestConfig | undefined;
  /** Volumes created so far, for the cleanup on failure. */
  readonly allocated: string[];
}

/** Create the mount points, replace the old container, extract, merge the config. */
function commitRestore(
  ctx: HandlerContext,
  req: CtRestore,
  guest: Guest,
  job: RestoreJob,
  log: TaskLog,
  now: number,
): void {
  const { state } = ctx;
  const before = new Set(state.volumes);
  const created: Record<string, string> = {};
  try {
    for (const key of Object.keys(job.mounts).sort()) {
      const value = mountValue(ctx, guest, key, job.mounts[key] ?? '', log);
      created[key] = value;
      const props = parseProps(value, 'volume');
      if (!/^[^:]+:subvol-/.test(props.volume ?? '')) {
        log.info(...mkfsLines(parseSize(props.size ?? '') ?? 0));
      }
    }
  } finally {
    job.allocated.push(
      ...state.volumes.filter((v) => !before.has(v)).map((v) => `${v.storage}:${v.volname}`),
    );
  }
  if (job.oldConfig) destroyOldVolumes(ctx, guest, job.oldConfig, log);
  log.info(`restoring '${req.archive.volid}' now..`);
  if (!req.archive.pbs) {
    const rootfs = parseSize(parseProps(job.backup.rootfs ?? '', 'volume').size ?? '') ?? 0;
    const bytes = Math.round(rootfs * dataFraction(req.vmid));
    log.info(
      `extracting archive '${req.archive.path}'`,
      `Total bytes read: ${bytes} (${(bytes / 1024 ** 3).toFixed(1)}GiB, ${Math.round(bytes / 1024 ** 2)}MiB/s)`,
    );
  }
  log.info('merging backed-up and given configuration..');
  guest.config = mergedConfig(req, job.backup, created);
  guest.pending = {};
  guest.pendingDelete = [];
  guest.snapshots = new Map();
  if (job.backup.template === '1') {
    log.info('Convert restored container to template...');
    guest.config.template = '1';
  }
  if (req.pool !== undefined) guest.pool = req.pool;
  if (req.start) bootGuest(state, guest, now);
  if (req.haManaged) {
    log.info('Add as HA resource');
    state.haResources.set(`ct:${req.vmid}`, {
      type: 'ct',
      state: req.start ? 'started' : 'stopped',
    });
  }
}

/** destroy_lxc_container: every volume of the old config (unused ones too). */
function destroyOldVolumes(ctx: HandlerContext, guest: Guest, old: GuestConfig, log: TaskLog) {
  for (const [key, value] of Object.entries(old)) {
    if (!isMountKey(key) && !/^unused\d+$/.test(key)) continue;
    const volid = /^unused/.test(key) ? value : (parseProps(value, 'volume').volume ?? '');
    const volume = findVolume(ctx.state, guest.node, volid);
    if (!volume || volume.owner !== guest.vmid) continue;
    removeVolume(ctx.state, guest.node, volid);
    log.info(...freeLines(storageConfig(ctx.state, volume.storage), volid));
  }
}
