// The vzdump worker (pve-manager PVE/VZDump.pm new / exec_backup): the storage must exist and
// hold backups (else the task fails), VM.Backup is checked for every guest that exists, then each
// guest in turn: a missing one, stop mode on a started HA resource, the backup limits, or a lock
// make it fail ("ERROR: Backup of VM <id> failed - <why>"), the others are backed up (see
// vzdump-guest.ts). Any failure ends the task with "job errors".
import { check } from '../access/permissions.ts';
import { hasPrivilege } from '../access/tokens.ts';
import { backupGroup, compressor, logTime } from '../cluster/backups.ts';
import {
  findStorage,
  type Guest,
  type NodeState,
  type StorageDef,
} from '../cluster/cluster-state.ts';
import { guestSid } from '../cluster/ha.ts';
import { spawnTask, WorkerDie, type TaskLog, type WorkPlan } from '../cluster/tasks.ts';
import { parsePruneBackups } from '../schema/backup-formats.ts';
import { guestKind } from './guest-helpers.ts';
import type { HandlerContext } from './handler-context.ts';
import { type JobOptions, type Running, startGuestBackup } from './vzdump-guest.ts';

/** PVE::Tools::shellquote (String::ShellQuote). */
function shellquote(value: string): string {
  if (value === '') return "''";
  return /[^\w\-/.:@%=+,]/.test(value) ? `'${value.replace(/'/g, "'\\''")}'` : value;
}

/** VZDump::Common::command_line: `vzdump <vmids> --<key> <value>...`. */
function commandLine(p: Readonly<Record<string, string>>): string {
  let cmd = 'vzdump';
  if (p.vmid)
    cmd += ` ${p.vmid
      .split(/[,;\s]+/)
      .filter(Boolean)
      .join(' ')}`;
  for (const key of Object.keys(p).sort()) {
    if (['vmid', 'stdout', 'exclude-path'].includes(key)) continue;
    cmd += ` --${key} ${shellquote(p[key] ?? '')}`;
  }
  return cmd;
}

function pruneOptions(p: Readonly<Record<string, string>>, storage: StorageDef) {
  const text = p['prune-backups'] ?? String(storage.extra['prune-backups'] ?? 'keep-all=1');
  return parsePruneBackups(text);
}

/** get_max_protected_backups: unlimited for Datastore.Allocate holders, else 5. */
function maxProtected(ctx: HandlerContext, storage: StorageDef): number {
  return hasPrivilege(ctx.identity, `/storage/${storage.id}`, 'Datastore.Allocate') ? -1 : 5;
}

/** The backup limit checks of exec_backup_task; an error text or undefined. */
function limitError(
  ctx: HandlerContext,
  opts: JobOptions,
  guest: Guest,
  node: NodeState,
): string | undefined {
  const limit = opts.prune['keep-all']
    ? 0
    : Object.values(opts.prune).reduce((sum, keep) => sum + keep, 0);
  if (!((limit && !opts.remove) || opts.protect)) return undefined;
  const group = backupGroup(ctx.state, opts.storage.id, node.name, guest, opts.storage.shared);
  const protectedCount = group.filter((v) => v.protected).length;
  if (opts.protect) {
    const max = maxProtected(ctx, opts.storage);
    if (max > -1 && protectedCount >= max) {
      return `The number of protected backups per guest is limited to ${max} on storage '${opts.storage.id}'`;
    }
    return undefined;
  }
  if (group.length - protectedCount >= limit) {
    return `There is a max backup limit of ${limit} enforced by the target storage or the vzdump parameters. Either increase the limit or delete old backups.`;
  }
  return undefined;
}

/** Why a guest cannot be backed up before anything starts, or undefined. */
function guestError(
  ctx: HandlerContext,
  opts: JobOptions,
  vmid: number,
  node: NodeState,
): string | undefined {
  const guest = ctx.state.guests.get(vmid);
  if (!guest) return `unable to find VM '${vmid}'`;
  const ha = ctx.state.haResources.get(guestSid(guest));
  if (opts.mode === 'stop' && ha?.state === 'started') {
    return 'Cannot execute a backup with stop mode on a HA managed and enabled Service. Use snapshot mode or disable the Service.';
  }
  return limitError(ctx, opts, guest, node);
}

/** fork_worker('vzdump', <vmid if exactly one>, ...); returns the UPID. */
export function spawnVzdumpTask(
  ctx: HandlerContext,
  node: NodeState,
  vmids: readonly number[],
  p: Record<string, string>,
): string {
  const storeid = p.storage || 'local';
  const forced = ctx.takeTaskExitStatus();
  const single = vmids.length === 1 ? vmids[0] : undefined;
  return spawnTask(ctx.state, {
    node,
    type: 'vzdump',
    id: single === undefined ? '' : String(single),
    user: ctx.identity.tokenId,
    now: ctx.now,
    durationMs: ctx.taskDurationMs,
    ...(single !== undefined ? { vmid: single } : {}),
    ...(forced !== undefined ? { forcedExitStatus: forced } : {}),
    work: (log, startedAt) => vzdumpWork(ctx, node, vmids, p, storeid, log, startedAt),
  });
}

function vzdumpWork(
  ctx: HandlerContext,
  node: NodeState,
  vmids: readonly number[],
  p: Readonly<Record<string, string>>,
  storeid: string,
  log: TaskLog,
  startedAt: number,
): WorkPlan {
  const { state } = ctx;
  const storage = findStorage(state, storeid);
  // VZDump->new: activate_storage, then storage_info; the errors joined (fork_worker makes the
  // newline a space)
  if (!storage) {
    const missing = `storage '${storeid}' does not exist`;
    return {
      error: `could not activate storage '${storeid}': ${missing} could not get storage information for '${storeid}': ${missing}`,
    };
  }
  if (!storage.content.includes('backup')) {
    return {
      error: `could not get storage information for '${storeid}': can't use storage '${storeid}' for backups - wrong content type`,
    };
  }
  const prune = pruneOptions(p, storage);
  const opts: JobOptions = {
    storage,
    mode: (p.mode as JobOptions['mode'] | undefined) ?? 'snapshot',
    comp: storage.type === 'pbs' ? undefined : compressor(p.compress),
    notesTemplate: p['notes-template'],
    protect: p.protected === '1',
    prune,
    remove: prune['keep-all'] ? false : p.remove !== '0',
    bwlimit: p.bwlimit,
    ionice: p.ionice ?? '7',
  };
  log.info(`INFO: starting new backup job: ${commandLine(p)}`);
  for (const vmid of vmids) {
    if (state.guests.has(vmid)) check(ctx.identity, `/vms/${vmid}`, ['VM.Backup']);
  }
  const started: Running[] = [];
  let errors = 0;
  const fail = (vmid: number, error: string) => {
    errors++;
    log.info(
      `ERROR: Backup of VM ${vmid} failed - ${error}`,
      `INFO: Failed at ${logTime(startedAt)}`,
    );
  };
  for (const vmid of vmids) {
    const error = guestError(ctx, opts, vmid, node);
    if (error) {
      fail(vmid, error);
      continue;
    }
    const guest = state.guests.get(vmid) as Guest;
    if (guest.config.lock) {
      log.info(
        `INFO: Starting Backup of VM ${vmid} (${guest.type})`,
        `INFO: Backup started at ${logTime(startedAt)}`,
        `INFO: status = ${guest.status === 'running' ? 'running' : 'stopped'}`,
      );
      fail(vmid, `${guestKind(guest.type)} is locked (${guest.config.lock})`);
      continue;
    }
    started.push(startGuestBackup(ctx, node, opts, guest, log, startedAt));
  }
  const end = (taskLog: TaskLog) => {
    if (errors > 0) {
      taskLog.info('INFO: Backup job finished with errors');
      throw new WorkerDie('job errors');
    }
    taskLog.info('INFO: Backup job finished successfully');
  };
  if (started.length === 0) {
    log.info('INFO: Backup job finished with errors');
    return { error: 'job errors' };
  }
  return {
    commit: (taskLog, now) => {
      for (const run of started) run.finish(taskLog, now);
      end(taskLog);
    },
    undo: () => {
      for (const run of started) run.undo();
    },
  };
}
