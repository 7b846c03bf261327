// One guest's part of a vzdump job (PVE/VZDump.pm exec_backup_task with the QEMU and LXC plugins'
// log lines): it is locked ('backup') and backed up in the requested mode (a stopped guest always
// in 'stop' mode; a running container in stop mode is stopped now and started again at the end, a
// running VM gets a fresh QEMU process), and when the task ends the backup volume appears, holding
// the guest's config for restores, with notes (notes-template) and protection; then older backups
// are pruned when `remove` is set and the retention keeps less than all.
import { randomUUID } from 'node:crypto';
import {
  archivedConfig,
  archiveSize,
  backupDisks,
  backupGroup,
  dataFraction,
  dirBackupVolname,
  generateNotes,
  hms,
  logTime,
  pbsGroup,
  pbsSize,
  pbsTime,
  pruneMark,
  renderBytes,
  renderDuration,
  vzdumpSize,
  type BackupDisk,
  type Compressor,
  type PruneMark,
} from '../cluster/backups.ts';
import {
  findStorage,
  type Guest,
  type GuestConfig,
  type NodeState,
  type StorageDef,
  type Volume,
} from '../cluster/cluster-state.ts';
import { agentEnabled, formatSize, parseProps } from '../cluster/guest-config.ts';
import { bootGuest, haltGuest } from '../cluster/power.ts';
import type { TaskLog } from '../cluster/tasks.ts';
import type { HandlerContext } from './handler-context.ts';

export interface JobOptions {
  readonly storage: StorageDef;
  readonly mode: 'snapshot' | 'suspend' | 'stop';
  readonly comp: Compressor;
  readonly notesTemplate: string | undefined;
  readonly protect: boolean;
  readonly prune: Readonly<Record<string, number>>;
  readonly remove: boolean;
  readonly bwlimit: string | undefined;
  readonly ionice: string;
}

export /** A guest whose backup is under way: what the end of the task does for it. */
interface Running {
  readonly guest: Guest;
  readonly finish: (log: TaskLog, now: number) => void;
  readonly undo: () => void;
}

/** qga_fs_freeze: only with an agent configured (the raw value Perl-true) and answering. */
function freezeLines(guest: Guest): string[] {
  const agent = guest.config.agent;
  if (agent === undefined || agent === '' || agent === '0') return [];
  const answers = guest.agentRunning && agentEnabled(guest.config) && guest.qmpstatus === 'running';
  if (!answers)
    return ["INFO: skipping guest-agent 'fs-freeze', agent configured but not running?"];
  const props = parseProps(agent, 'enabled');
  if ((props['freeze-fs-on-backup'] ?? props['freeze-fs'] ?? '1') === '0') {
    return ["INFO: skipping guest-agent 'fs-freeze', disabled in VM options"];
  }
  return [
    "INFO: issuing guest-agent 'fs-freeze' command",
    "INFO: issuing guest-agent 'fs-thaw' command",
  ];
}

/** The dump directory of a directory storage. */
function storagePath(storage: StorageDef): string {
  return `${storage.path ?? '/var/lib/vz'}/dump`;
}

/** What the QEMU plugin's prepare logs: the VM's name and each disk it includes or skips. */
function qemuPrepareLines(guest: Guest, disks: readonly BackupDisk[]): string[] {
  const lines = guest.config.name !== undefined ? [`INFO: VM Name: ${guest.config.name}`] : [];
  for (const disk of disks) {
    lines.push(
      disk.included
        ? `INFO: include disk '${disk.key}' '${disk.volid}' ${formatSize(disk.size)}`
        : `INFO: exclude disk '${disk.key}' '${disk.volid}' (backup=no)`,
    );
  }
  return lines;
}

function lxcPrepareLines(guest: Guest, disks: readonly BackupDisk[]): string[] {
  const lines = [`INFO: CT Name: ${guest.config.hostname ?? `CT${guest.vmid}`}`];
  for (const disk of disks) {
    lines.push(
      disk.included
        ? `INFO: including mount point ${disk.key} ('${disk.mp}') in backup`
        : `INFO: excluding volume mount point ${disk.key} ('${disk.mp}') from backup (disabled)`,
    );
  }
  return lines;
}

/** query-backup progress as the QEMU plugin logs it, for `total` bytes over `seconds`. */
function qemuProgressLines(guest: Guest, total: number, seconds: number, pbs: boolean): string[] {
  const secs = Math.max(seconds, 1);
  const zero = Math.round(total * (1 - dataFraction(guest.vmid) * 1.2));
  const rate = (bytes: number) => `${renderBytes(bytes / secs, 1)}/s`;
  const half = Math.round(total / 2);
  const lines = [
    `INFO:  50% (${renderBytes(half, 1)} of ${renderBytes(total, 1)}) in ${renderDuration(Math.floor(seconds / 2))}, read: ${rate(half)}, write: ${rate(half - zero / 2)}`,
    `INFO: 100% (${renderBytes(total, 1)} of ${renderBytes(total, 1)}) in ${renderDuration(seconds)}, read: ${rate(half)}, write: ${rate(half - zero / 2)}`,
    `INFO: backup is sparse: ${renderBytes(zero)} (${Math.floor((zero * 100) / Math.max(total, 1))}%) total zero data`,
  ];
  if (pbs)
    lines.push(
      `INFO: backup was done incrementally, reused ${renderBytes(zero)} (${Math.floor((zero * 100) / Math.max(total, 1))}%)`,
    );
  lines.push(
    seconds > 0
      ? `INFO: transferred ${renderBytes(total)} in ${seconds} seconds (${rate(total)})`
      : `INFO: transferred ${renderBytes(total)} in <1 seconds`,
  );
  return lines;
}

/** prune_backups after a backup: removes what the retention does not keep (never protected). */
function prune(ctx: HandlerContext, opts: JobOptions, guest: Guest, node: NodeState, log: TaskLog) {
  const keepText = Object.keys(opts.prune)
    .sort()
    .map((key) => `${key}=${opts.prune[key]}`)
    .join(', ');
  log.info(`INFO: prune older backups with retention: ${keepText}`);
  const group = backupGroup(ctx.state, opts.storage.id, node.name, guest, opts.storage.shared);
  const entries: { volume: Volume; ctime: number; mark?: PruneMark }[] = group.map((volume) => ({
    volume,
    ctime: volume.ctime,
    ...(volume.protected ? { mark: 'protected' as const } : {}),
  }));
  pruneMark(entries, opts.prune);
  const removed = entries.filter((e) => e.mark === 'remove').map((e) => e.volume);
  if (opts.storage.type === 'pbs') {
    log.info(`INFO: running 'proxmox-backup-client prune' for '${pbsGroup(guest)}'`);
  } else {
    for (const v of removed) log.info(`INFO: removing backup '${v.storage}:${v.volname}'`);
  }
  ctx.state.volumes = ctx.state.volumes.filter((v) => !removed.includes(v));
  const extra = removed.length > 0 ? ' not covered by keep-retention policy' : '';
  log.info(`INFO: pruned ${removed.length} backup(s)${extra}`);
}

function lvName(volid: string): string {
  return volid.slice(volid.indexOf(':') + 1);
}

/** What one guest's backup is: decided when the task starts. */
interface BackupPlan {
  readonly pbs: boolean;
  readonly running: boolean;
  readonly paused: boolean;
  readonly mode: JobOptions['mode'];
  readonly disks: readonly BackupDisk[];
  readonly config: GuestConfig;
  readonly pbsName: string;
  readonly volname: string;
  /** Thin LVM snapshots the LXC plugin takes in snapshot mode. */
  readonly lvmSnap: readonly string[];
}

function planBackup(
  ctx: HandlerContext,
  opts: JobOptions,
  guest: Guest,
  startedAt: number,
): BackupPlan {
  const pbs = opts.storage.type === 'pbs';
  const running = guest.status === 'running';
  const disks = backupDisks(guest.type, guest.config);
  const pbsName = `${pbsGroup(guest)}/${pbsTime(startedAt)}`;
  return {
    pbs,
    running,
    paused: running && guest.qmpstatus !== 'running',
    mode: running ? opts.mode : 'stop',
    disks,
    config: archivedConfig(guest.config),
    pbsName,
    volname: pbs ? `backup/${pbsName}` : dirBackupVolname(guest, startedAt, opts.comp),
    lvmSnap: disks
      .filter((d) => d.included)
      .filter((d) => findStorage(ctx.state, d.volid.split(':')[0] ?? '')?.type === 'lvmthin')
      .map((d) => `snap_${lvName(d.volid)}_vzdump`),
  };
}

/** The log of the backup's start: status, prepare, mode, the archive, the guest's handling. */
function logStart(plan: BackupPlan, opts: JobOptions, guest: Guest, log: TaskLog): void {
  const { mode, running, paused, pbs } = plan;
  const target = pbs
    ? plan.pbsName
    : `${storagePath(opts.storage)}/${plan.volname.slice('backup/'.length)}`;
  const archiveLine = pbs
    ? `INFO: creating Proxmox Backup Server archive '${target}'`
    : `INFO: creating vzdump archive '${target}'`;
  const prepare =
    guest.type === 'qemu'
      ? qemuPrepareLines(guest, plan.disks)
      : lxcPrepareLines(guest, plan.disks);
  const modeLines = [
    `INFO: backup mode: ${mode}`,
    ...(opts.bwlimit ? [`INFO: bandwidth limit: ${opts.bwlimit} KiB/s`] : []),
    `INFO: ionice priority: ${opts.ionice}`,
  ];
  // snapshot mode prepares before it names the mode, the others after
  if (mode === 'snapshot') log.info(...prepare, ...modeLines);
  else log.info(...modeLines, ...prepare);
  if (guest.type === 'lxc') {
    if (mode === 'stop' && running) log.info('INFO: stopping virtual guest');
    if (mode === 'snapshot') {
      log.info("INFO: create storage snapshot 'vzdump'");
      log.info(...plan.lvmSnap.map((name) => `  Logical volume "${name}" created.`));
    }
    log.info(archiveLine);
    return;
  }
  if (mode === 'stop' && running) log.info('INFO: stopping virtual guest');
  if (mode === 'suspend') log.info('INFO: suspending guest');
  log.info(archiveLine);
  // a stopped (or just stopped) VM is started paused for the backup
  if (mode === 'stop') log.info('INFO: starting kvm to execute backup task');
  if (mode === 'snapshot' && !paused) log.info(...freezeLines(guest));
  log.info(`INFO: started backup task '${randomUUID()}'`);
  if (running && !paused) {
    log.info(
      mode === 'snapshot' ? 'INFO: resuming VM again' : 'INFO: resuming VM again after 1 seconds',
    );
  }
  if (pbs && guest.config.template !== '1') {
    for (const disk of plan.disks.filter((d) => d.included)) {
      log.info(`INFO: ${disk.key}: dirty-bitmap status: created new`);
    }
  }
}

/** The archiving's end as the plugins log it: transfer figures, tar/PBS client output. */
function transferLines(
  plan: BackupPlan,
  opts: JobOptions,
  guest: Guest,
  node: NodeState,
  seconds: number,
): string[] {
  const total = plan.disks.filter((d) => d.included).reduce((sum, d) => sum + d.size, 0);
  const secs = Math.max(seconds, 1);
  if (guest.type === 'qemu') {
    const lines = qemuProgressLines(guest, total, seconds, plan.pbs);
    return plan.running ? lines : [...lines, 'INFO: stopping kvm after backup task'];
  }
  const data = Math.round(total * dataFraction(guest.vmid));
  if (!plan.pbs) {
    const rate = Math.round(data / secs / 1024 ** 2);
    return [
      `INFO: Total bytes written: ${data} (${(data / 1024 ** 3).toFixed(1)}GiB, ${rate}MiB/s)`,
    ];
  }
  return [
    `INFO: Starting backup: ${plan.pbsName}`,
    `INFO: Client name: ${node.name}`,
    `INFO: Upload directory '/mnt/vzsnap0' to '${pbsRepository(opts.storage)}' as root.pxar.didx`,
    `INFO: root.pxar: had to backup ${renderBytes(data * 0.08)} of ${renderBytes(data)} (compressed ${renderBytes(data * 0.03)}) in ${secs}.00 s (average ${renderBytes((data * 0.08) / secs)}/s)`,
    `INFO: Duration: ${secs}.00s`,
  ];
}

/** The new backup volume, its notes and protection, then pruning. */
function storeBackup(
  ctx: HandlerContext,
  plan: BackupPlan,
  opts: JobOptions,
  guest: Guest,
  node: NodeState,
  startedAt: number,
  log: TaskLog,
): void {
  const { state } = ctx;
  const size = plan.pbs ? pbsSize(guest, plan.disks) : archiveSize(guest, plan.disks, opts.comp);
  if (!plan.pbs) log.info(`INFO: archive file size: ${vzdumpSize(size)}`);
  const kind = guest.type === 'qemu' ? 'vm' : 'ct';
  const ext = guest.type === 'qemu' ? 'vma' : 'tar';
  const volume: Volume = {
    storage: opts.storage.id,
    node: opts.storage.shared ? undefined : node.name,
    volname: plan.volname,
    vtype: 'backup',
    format: plan.pbs ? `pbs-${kind}` : `${ext}${opts.comp ? `.${opts.comp}` : ''}`,
    size,
    ctime: Math.floor(startedAt / 1000),
    owner: guest.vmid,
    subtype: guest.type,
    backupConfig: plan.config,
  };
  // a second backup in the same second writes the same file
  state.volumes = state.volumes.filter(
    (v) =>
      !(v.storage === volume.storage && v.volname === volume.volname && v.node === volume.node),
  );
  state.volumes.push(volume);
  if (opts.notesTemplate) {
    log.info('INFO: adding notes to backup');
    volume.notes = generateNotes(opts.notesTemplate, {
      cluster: state.name,
      // the QEMU plugin falls back to "VM <id>"; a container always has a hostname
      guestname:
        guest.type === 'qemu'
          ? (plan.config.name ?? `VM ${guest.vmid}`)
          : (plan.config.hostname ?? `CT${guest.vmid}`),
      node: node.name,
      vmid: String(guest.vmid),
    });
  }
  if (opts.protect) {
    log.info('INFO: marking backup as protected');
    volume.protected = true;
  }
  if (opts.remove && !opts.prune['keep-all']) prune(ctx, opts, guest, node, log);
}

/** Back up one guest: log its start, lock it, and return what the task's end does. */
export function startGuestBackup(
  ctx: HandlerContext,
  node: NodeState,
  opts: JobOptions,
  guest: Guest,
  log: TaskLog,
  startedAt: number,
): Running {
  const { state } = ctx;
  const plan = planBackup(ctx, opts, guest, startedAt);
  log.info(
    `INFO: Starting Backup of VM ${guest.vmid} (${guest.type})`,
    `INFO: Backup started at ${logTime(startedAt)}`,
    `INFO: status = ${plan.running ? 'running' : 'stopped'}`,
  );
  guest.config.lock = 'backup';
  logStart(plan, opts, guest, log);
  // a container backed up in stop mode is down while it runs
  let stopped = false;
  if (guest.type === 'lxc' && plan.mode === 'stop' && plan.running) {
    haltGuest(guest);
    stopped = true;
  }
  const finish = (taskLog: TaskLog, now: number) => {
    const seconds = Math.max(0, Math.floor((now - startedAt) / 1000));
    taskLog.info(...transferLines(plan, opts, guest, node, seconds));
    storeBackup(ctx, plan, opts, guest, node, startedAt, taskLog);
    if (guest.config.lock === 'backup') delete guest.config.lock;
    if (guest.type === 'lxc' && plan.mode === 'snapshot') {
      taskLog.info("INFO: cleanup temporary 'vzdump' snapshot");
      taskLog.info(
        ...plan.lvmSnap.map((name) => `  Logical volume "${name}" successfully removed.`),
      );
    }
    if (stopped) {
      taskLog.info('INFO: restarting vm');
      bootGuest(state, guest, now);
      stopped = false;
      taskLog.info(`INFO: guest is online again after ${Math.max(seconds, 1)} seconds`);
    } else if (guest.type === 'qemu' && plan.mode === 'stop' && plan.running) {
      // the VM ran on from a fresh QEMU process, started for the backup
      haltGuest(guest);
      bootGuest(state, guest, now);
    }
    taskLog.info(
      `INFO: Finished Backup of VM ${guest.vmid} (${hms(seconds)})`,
      `INFO: Backup finished at ${logTime(now)}`,
    );
  };
  const undo = () => {
    if (guest.config.lock === 'backup') delete guest.config.lock;
    if (stopped) {
      bootGuest(state, guest, Date.now());
      stopped = false;
    }
  };
  return { guest, finish, undo };
}

/** The repository as proxmox-backup-client prints it (with the port). */
function pbsRepository(storage: StorageDef): string {
  return `${String(storage.extra.username)}@${String(storage.extra.server)}:8007:${String(storage.extra.datastore)}`;
}
