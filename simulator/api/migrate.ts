// POST /nodes/{node}/{qemu,lxc}/{vmid}/migrate (qmigrate / vzmigrate tasks): the API call checks
// target, quorum, lock and run state; the worker locks the guest 'migrate', checks its local
// volumes, and at the end the guest (and its node-local volumes) lives on the target node, still
// running for an online VM migration, restarted for a container migrated with restart=1.
import { check, checkVmPerm, perm } from '../access/permissions.ts';
import { findNode, type Guest, type NodeState } from '../cluster/cluster-state.ts';
import { bootGuest, haltGuest } from '../cluster/power.ts';
import type { TaskLog, WorkPlan } from '../cluster/tasks.ts';
import { splitList } from '../schema/formats.ts';
import { dieError, paramError } from '../schema/pve-error.ts';
import {
  checkQuorum,
  flag,
  lockError,
  loadGuest,
  onGuest,
  refuseRootOnly,
  requestNode,
  startGuestTask,
  str,
} from './guest-helpers.ts';
import { GUEST_PARAMS, type HandlerContext, type Route, optional } from './handler-context.ts';
import { moveLocalVolumes, replicatesTo, scanVolumes } from './migrate-volumes.ts';
import { guestJobs } from '../cluster/replication.ts';

const stamp = (now: number) => new Date(now).toISOString().replace('T', ' ').slice(0, 19);

/** Migration logs prefix every line with a timestamp, errors with ERROR:. */
function mlog(log: TaskLog, now: number, line: string, error = false): void {
  log.info(`${stamp(now)}${error ? ' ERROR:' : ''} ${line}`);
}

function targetNode(ctx: HandlerContext): NodeState {
  const local = requestNode(ctx);
  const name = String(ctx.params.target);
  if (name === local.name) throw paramError({ target: 'target is local node.' });
  checkQuorum(ctx);
  const target = findNode(ctx.state, name);
  if (!target) throw dieError(`no such cluster node '${name}'`);
  return target;
}

/** The target storages of a storage map must be usable there (check_storage_access_migrate). */
function checkStorageMap(ctx: HandlerContext, guest: Guest, key: string): void {
  const map = str(ctx, key);
  if (map === undefined) return;
  const entries = splitList(map);
  if (!entries.includes('1')) checkVmPerm(ctx.identity, guest.vmid, ['VM.Config.Disk']);
  for (const entry of entries.filter((e) => e !== '1')) {
    const storeid = entry.split(':').pop() ?? entry;
    const storage = ctx.state.storages.find((s) => s.id === storeid);
    if (!storage) throw dieError(`storage '${storeid}' does not exist`);
    check(ctx.identity, `/storage/${storeid}`, ['Datastore.AllocateSpace']);
    if (!storage.content.includes(guest.type === 'qemu' ? 'images' : 'rootdir')) {
      throw dieError(
        `storage '${storeid}' does not support content-type '${guest.type === 'qemu' ? 'images' : 'rootdir'}'`,
      );
    }
  }
}

function migratePlan(ctx: HandlerContext, guest: Guest, target: NodeState, log: TaskLog): WorkPlan {
  const locked = lockError(guest);
  if (locked) return { error: locked };
  const running = guest.status === 'running';
  const online = guest.type === 'qemu' && running && flag(ctx, 'online');
  const restart = guest.type === 'lxc' && running && flag(ctx, 'restart');
  const fail = (reason: string): WorkPlan => {
    mlog(log, ctx.now, `migration aborted (duration 00:00:00): ${reason}`, true);
    return { error: 'migration aborted' };
  };
  if (guest.type === 'lxc' && running && flag(ctx, 'online'))
    return fail('lxc live migration is currently not implemented');
  if (guest.type === 'lxc' && running && !restart)
    return fail('running container can only be migrated in restart mode');
  if (!target.online) return fail("Can't connect to destination address using public key");
  mlog(
    log,
    ctx.now,
    `starting migration of ${guest.type === 'qemu' ? 'VM' : 'CT'} ${guest.vmid} to node '${target.name}' (${target.ip})`,
  );
  // (force, which would let it through with a warning, is root@pam's only)
  const replicated = guestJobs(ctx.state, guest.vmid).length > 0;
  if (online && replicated && !replicatesTo(ctx.state, guest, target.name)) {
    return fail(
      `Cannot live-migrate replicated VM to node '${target.name}' - not a replication target. Use 'force' to override.`,
    );
  }
  const scan = scanVolumes(ctx.state, guest, running, target.name);
  for (const volume of scan.local)
    mlog(
      log,
      ctx.now,
      `found ${volume.replicated ? 'local, replicated' : 'local'} disk '${volume.volid}' (${volume.ref === 'attached' ? 'attached' : volume.ref === 'unused' ? 'unused' : 'referenced by snapshot(s)'})`,
    );
  for (const [volid, reason] of scan.errors)
    mlog(log, ctx.now, `can't migrate local disk '${volid}': ${reason}`);
  if (scan.errors.length > 0)
    return fail(`can't migrate ${guest.type === 'qemu' ? 'VM' : 'CT'} - check log`);
  const attached = scan.local.filter((v) => v.ref === 'attached' && !v.cdrom);
  if (online && attached.length > 0 && !flag(ctx, 'with-local-disks')) {
    return fail("can't live migrate attached local disks without with-local-disks option");
  }
  guest.config.lock = 'migrate';
  if (restart) {
    mlog(log, ctx.now, `shutdown CT ${guest.vmid}`);
    haltGuest(guest);
  }
  return {
    commit: (taskLog, now) => {
      if (online) mlog(taskLog, now, `starting VM ${guest.vmid} on remote node '${target.name}'`);
      if (attached.length > 0)
        mlog(taskLog, now, online ? 'starting storage migration' : 'copying local disk images');
      if (online) {
        mlog(
          taskLog,
          now,
          `starting online/live migration on unix:/run/qemu-server/${guest.vmid}.migrate`,
        );
        mlog(taskLog, now, 'migration status: completed');
      }
      moveLocalVolumes(ctx.state, guest, target.name);
      guest.node = target.name;
      delete guest.config.lock;
      if (restart) {
        mlog(taskLog, now, `start final cleanup`);
        bootGuest(ctx.state, guest, now);
      }
      mlog(taskLog, now, 'migration finished successfully (duration 00:00:02)');
    },
    undo: () => {
      if (guest.config.lock === 'migrate') delete guest.config.lock;
    },
  };
}

function migrate(type: Guest['type']) {
  return (ctx: HandlerContext): unknown => {
    const target = targetNode(ctx);
    if (type === 'qemu') refuseRootOnly(ctx, 'force', 'migration_type', 'migration_network');
    const guest = loadGuest(ctx, type);
    if (type === 'qemu') {
      const locked = lockError(guest);
      if (locked) throw dieError(locked);
    }
    if (guest.status === 'running') {
      if (type === 'qemu' && !flag(ctx, 'online'))
        throw dieError("can't migrate running VM without --online");
      if (type === 'lxc' && !flag(ctx, 'online') && !flag(ctx, 'restart')) {
        throw dieError("can't migrate running container without --online or --restart");
      }
    }
    checkStorageMap(ctx, guest, type === 'qemu' ? 'targetstorage' : 'target-storage');
    return startGuestTask(
      ctx,
      type === 'qemu' ? 'qmigrate' : 'vzmigrate',
      guest.vmid,
      onGuest(ctx, type, guest.vmid, (g, log) => migratePlan(ctx, g, target, log)),
    );
  };
}

const TARGET = { type: 'string', format: 'pve-node' } as const;
const STORAGE_MAP = optional({ type: 'string', format: 'storage-pair-list' });

export const MIGRATE_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/migrate',
    permissions: perm('/vms/{vmid}', ['VM.Migrate']),
    schema: {
      ...GUEST_PARAMS,
      target: TARGET,
      online: optional({ type: 'boolean' }),
      force: optional({ type: 'boolean' }),
      migration_type: optional({ type: 'string', enum: ['secure', 'insecure'] }),
      migration_network: optional({ type: 'string', format: 'CIDR' }),
      'with-local-disks': optional({ type: 'boolean' }),
      targetstorage: STORAGE_MAP,
      bwlimit: optional({ type: 'integer', minimum: 0 }),
      'with-conntrack-state': optional({ type: 'boolean' }),
    },
    handle: migrate('qemu'),
  },
  {
    method: 'POST',
    path: '/nodes/{node}/lxc/{vmid}/migrate',
    permissions: perm('/vms/{vmid}', ['VM.Migrate']),
    schema: {
      ...GUEST_PARAMS,
      target: TARGET,
      online: optional({ type: 'boolean' }),
      restart: optional({ type: 'boolean' }),
      timeout: optional({ type: 'integer' }),
      'target-storage': STORAGE_MAP,
      bwlimit: optional({ type: 'number', minimum: 0 }),
    },
    handle: migrate('lxc'),
  },
];
