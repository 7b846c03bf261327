// POST /nodes/{node}/qemu/{vmid}/status/{start,stop,shutdown,reboot,suspend,resume}, following
// qemu-server API2/Qemu.pm and QemuServer.pm: which checks run in the API call (500 at once) and
// which in the worker (a failed task), the task types (qmstart, qmstop, qmshutdown, qmreboot,
// qmpause or qmsuspend, qmresume), and the run state each leaves.
import { check, checkVmPerm, perm } from '../access/permissions.ts';
import type { Guest } from '../cluster/cluster-state.ts';
import { isTemplateConfig, parseProps } from '../cluster/guest-config.ts';
import { currentConfig } from '../cluster/pending.ts';
import { bootGuest, haltGuest } from '../cluster/power.ts';
import { abortGuestTasks, WorkerDie, type TaskLog } from '../cluster/tasks.ts';
import { removeVolume } from '../cluster/volumes.ts';
import { dieError } from '../schema/pve-error.ts';
import {
  GUEST_PARAMS,
  SKIPLOCK_PARAM,
  type HandlerContext,
  type Route,
  optional,
} from './handler-context.ts';
import {
  checkQuorum,
  flag,
  lockError,
  onGuest,
  refuseRootOnly,
  requestNode,
  startGuestTask,
  str,
} from './guest-helpers.ts';
import { MACHINE_PARAM, saveVmState, vmstateStorage } from './vmstate.ts';

const vmidOf = (ctx: HandlerContext) => Number(ctx.params.vmid);
const notFound = (ctx: HandlerContext) =>
  `unable to find configuration file for VM ${vmidOf(ctx)} on node '${String(ctx.params.node)}'`;

/** check_running with its config check: the VM must exist on this node (500 otherwise). */
function runningGuest(ctx: HandlerContext): Guest | undefined {
  const guest = ctx.state.guests.get(vmidOf(ctx));
  if (!guest || guest.type !== 'qemu' || guest.node !== ctx.params.node)
    throw dieError(notFound(ctx));
  return guest.status === 'running' ? guest : undefined;
}

/** vm_is_paused($vmid, 1): QMP reports paused, prelaunch or (guest-initiated) suspended. */
const isPaused = (guest: Guest | undefined) =>
  guest?.status === 'running' && guest.qmpstatus !== 'running';

/** The start a worker does (vm_start): template, lock and running checks, then boot. */
function startPlan(ctx: HandlerContext, guest: Guest, skiplock: boolean) {
  if (isTemplateConfig(guest.config)) throw new Error("you can't start a vm if it's a template");
  const resume = guest.config.lock === 'suspended' || guest.config.vmstate !== undefined;
  const locked = lockError(guest);
  if (locked && !skiplock && guest.config.lock !== 'suspended') return { error: locked };
  if (guest.status === 'running') return { error: `VM ${guest.vmid} already running` };
  const node = requestNode(ctx);
  return {
    commit: (log: TaskLog, now: number) => {
      const missing = Object.entries(currentConfig(guest, false))
        .filter(([key]) => /^net\d+$/.test(key))
        .map(([key, value]) => [key, parseProps(value, 'model').bridge] as const)
        .find(([, bridge]) => bridge !== undefined && !node.bridges.includes(bridge));
      if (missing) {
        log.info(`bridge '${missing[1]}' does not exist`);
        const tap = `tap${guest.vmid}i${missing[0].slice(3)}`;
        log.info(
          `kvm: -netdev type=tap,id=${missing[0]},ifname=${tap},script=/usr/libexec/qemu-server/pve-bridge,downscript=/usr/libexec/qemu-server/pve-bridgedown,vhost=on: network script /usr/libexec/qemu-server/pve-bridge failed with status 512`,
        );
        throw new WorkerDie('start failed: QEMU exited with code 1');
      }
      if (resume && guest.config.vmstate !== undefined) {
        log.info(`Resuming suspended VM`);
        removeVolume(ctx.state, guest.node, guest.config.vmstate);
        for (const key of ['vmstate', 'runningmachine', 'runningcpu', 'running-nets-host-mtu'])
          delete guest.config[key];
        if (guest.config.lock === 'suspended') delete guest.config.lock;
        log.info('resuming VM again');
      }
      bootGuest(ctx.state, guest, now);
    },
  };
}

function start(ctx: HandlerContext): unknown {
  refuseRootOnly(
    ctx,
    'stateuri',
    'skiplock',
    'migratedfrom',
    'migration_type',
    'migration_network',
    'targetstorage',
    'force-cpu',
    'with-conntrack-state',
    'nets-host-mtu',
  );
  checkQuorum(ctx);
  return startGuestTask(
    ctx,
    'qmstart',
    vmidOf(ctx),
    onGuest(ctx, 'qemu', vmidOf(ctx), (guest) => startPlan(ctx, guest, false)),
  );
}

/** _do_vm_stop: a stopped VM is a no-op; a locked one fails; otherwise it ends stopped. */
function stopWork(ctx: HandlerContext, skiplock: boolean) {
  return (log: TaskLog) => {
    const guest = ctx.state.guests.get(vmidOf(ctx));
    if (!guest || guest.type !== 'qemu' || guest.node !== ctx.params.node)
      throw new Error(notFound(ctx));
    if (guest.status !== 'running') return {};
    const locked = lockError(guest);
    if (locked && !skiplock) return { error: locked };
    void log;
    return { commit: () => haltGuest(guest) };
  };
}

function stop(ctx: HandlerContext): unknown {
  refuseRootOnly(ctx, 'skiplock', 'keepActive', 'migratedfrom');
  const vmid = vmidOf(ctx);
  const overruled = flag(ctx, 'overrule-shutdown')
    ? abortGuestTasks(ctx.state, vmid, 'qmshutdown')
    : [];
  const work = stopWork(ctx, false);
  return startGuestTask(ctx, 'qmstop', vmid, (log) => {
    if (overruled.length > 0) log.info(`overruled qmshutdown tasks: ${overruled.join(', ')}`);
    return work(log);
  });
}

function shutdown(ctx: HandlerContext): unknown {
  refuseRootOnly(ctx, 'skiplock', 'keepActive');
  const guest = ctx.state.guests.get(vmidOf(ctx));
  const onNode = guest?.type === 'qemu' && guest.node === ctx.params.node ? guest : undefined;
  // paused VMs never see the ACPI event: refuse, or stop them instead with forceStop
  if (isPaused(onNode) && !flag(ctx, 'forceStop')) throw dieError('VM is paused - cannot shutdown');
  return startGuestTask(ctx, 'qmshutdown', vmidOf(ctx), stopWork(ctx, false));
}

function reboot(ctx: HandlerContext): unknown {
  const guest = ctx.state.guests.get(vmidOf(ctx));
  if (isPaused(guest) && guest?.node === ctx.params.node)
    throw dieError('VM is paused - cannot shutdown');
  if (!runningGuest(ctx)) throw dieError(`VM ${vmidOf(ctx)} not running`);
  return startGuestTask(
    ctx,
    'qmreboot',
    vmidOf(ctx),
    onGuest(ctx, 'qemu', vmidOf(ctx), (vm) => {
      if (vm.status !== 'running') return {};
      const locked = lockError(vm);
      if (locked) return { error: locked };
      return {
        commit: (_log, now) => {
          haltGuest(vm);
          bootGuest(ctx.state, vm, now);
        },
      };
    }),
  );
}

function suspend(ctx: HandlerContext): unknown {
  refuseRootOnly(ctx, 'skiplock');
  const guest = runningGuest(ctx);
  if (!guest) throw dieError(`VM ${vmidOf(ctx)} not running`);
  const todisk = flag(ctx, 'todisk');
  let statestorage = str(ctx, 'statestorage');
  if (todisk) {
    checkVmPerm(ctx.identity, guest.vmid, ['VM.Config.Disk']);
    if (Object.keys(guest.config).some((key) => /^hostpci\d+/.test(key))) {
      throw dieError(
        'cannot suspend VM to disk due to passed-through PCI device(s), which lack the possibility to save/restore their internal state',
      );
    }
    statestorage ??= vmstateStorage(ctx.state, guest);
    check(ctx.identity, `/storage/${statestorage}`, ['Datastore.AllocateSpace']);
  }
  return startGuestTask(
    ctx,
    todisk ? 'qmsuspend' : 'qmpause',
    guest.vmid,
    onGuest(ctx, 'qemu', guest.vmid, (vm, log) => {
      const locked = lockError(vm);
      if (locked) return { error: locked };
      if (!todisk)
        return {
          commit: () => {
            vm.qmpstatus = 'paused';
          },
        };
      vm.config.lock = 'suspending';
      return {
        commit: (_log, now) => {
          const date = new Date(now).toISOString().slice(0, 10);
          saveVmState(ctx, vm, vm.config, `suspend-${date}`, statestorage ?? 'local-lvm', log, now);
          log.info('State saved, quitting');
          vm.config.lock = 'suspended';
          haltGuest(vm);
        },
        undo: () => {
          delete vm.config.lock;
        },
      };
    }),
  );
}

function resume(ctx: HandlerContext): unknown {
  refuseRootOnly(ctx, 'skiplock', 'nocheck');
  const guest = ctx.state.guests.get(vmidOf(ctx));
  const suspendedToDisk =
    guest?.type === 'qemu' && guest.node === ctx.params.node && guest.config.lock === 'suspended';
  if (!suspendedToDisk && !runningGuest(ctx)) throw dieError(`VM ${vmidOf(ctx)} not running`);
  return startGuestTask(
    ctx,
    'qmresume',
    vmidOf(ctx),
    onGuest(ctx, 'qemu', vmidOf(ctx), (vm) => {
      if (suspendedToDisk) return startPlan(ctx, vm, false);
      if (isTemplateConfig(vm.config))
        throw new Error(`VM ${vm.vmid} is a template and cannot be resumed!`);
      if (vm.qmpstatus === 'running') return {};
      const locked = lockError(vm);
      if (locked) return { error: locked };
      return {
        commit: () => {
          vm.qmpstatus = 'running';
        },
      };
    }),
  );
}

const POWER = perm('/vms/{vmid}', ['VM.PowerMgmt']);

export const QEMU_POWER_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/status/start',
    permissions: POWER,
    handle: start,
    schema: {
      ...GUEST_PARAMS,
      skiplock: SKIPLOCK_PARAM,
      stateuri: optional({ type: 'string', maxLength: 128 }),
      migratedfrom: optional({ type: 'string', format: 'pve-node' }),
      migration_type: optional({ type: 'string', enum: ['secure', 'insecure'] }),
      migration_network: optional({ type: 'string', format: 'CIDR' }),
      machine: MACHINE_PARAM,
      'force-cpu': optional({ type: 'string' }),
      targetstorage: optional({ type: 'string', format: 'storage-pair-list' }),
      timeout: optional({ type: 'integer', minimum: 0 }),
      'with-conntrack-state': optional({ type: 'boolean' }),
      'nets-host-mtu': optional({ type: 'string', pattern: 'net\\d+=\\d+(,net\\d+=\\d+)*' }),
    },
  },
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/status/stop',
    permissions: POWER,
    handle: stop,
    schema: {
      ...GUEST_PARAMS,
      skiplock: SKIPLOCK_PARAM,
      migratedfrom: optional({ type: 'string', format: 'pve-node' }),
      timeout: optional({ type: 'integer', minimum: 0 }),
      keepActive: optional({ type: 'boolean' }),
      'overrule-shutdown': optional({ type: 'boolean' }),
    },
  },
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/status/shutdown',
    permissions: POWER,
    handle: shutdown,
    schema: {
      ...GUEST_PARAMS,
      skiplock: SKIPLOCK_PARAM,
      timeout: optional({ type: 'integer', minimum: 0 }),
      forceStop: optional({ type: 'boolean' }),
      keepActive: optional({ type: 'boolean' }),
    },
  },
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/status/reboot',
    permissions: POWER,
    handle: reboot,
    schema: {
      ...GUEST_PARAMS,
      timeout: optional({ type: 'integer', minimum: 0 }),
    },
  },
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/status/suspend',
    permissions: POWER,
    handle: suspend,
    schema: {
      ...GUEST_PARAMS,
      skiplock: SKIPLOCK_PARAM,
      todisk: optional({ type: 'boolean' }),
      statestorage: optional({ type: 'string', format: 'pve-storage-id', requires: 'todisk' }),
    },
  },
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/status/resume',
    permissions: POWER,
    handle: resume,
    schema: {
      ...GUEST_PARAMS,
      skiplock: SKIPLOCK_PARAM,
      nocheck: optional({ type: 'boolean' }),
    },
  },
];
