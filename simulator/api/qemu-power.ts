// POST /nodes/{node}/qemu/{vmid}/status/{start,stop,shutdown,reboot}, following qemu-server
// API2/Qemu.pm and QemuServer.pm: which checks run in the API call (500 at once) and which in the
// worker (a failed task), the task types (qmstart, qmstop, qmshutdown, qmreboot), and the run
// state each leaves. Suspend and resume are in qemu-suspend.ts.
import type { Guest } from '../cluster/cluster-state.ts';
import { isTemplateConfig, parseProps } from '../cluster/guest-config.ts';
import { currentConfig } from '../cluster/pending.ts';
import { bootGuest, haltGuest } from '../cluster/power.ts';
import { abortGuestTasks, WorkerDie, type TaskLog } from '../cluster/tasks.ts';
import { removeVolume } from '../cluster/volumes.ts';
import { dieError } from '../schema/pve-error.ts';
import { SKIPLOCK_PARAM, type HandlerContext, type Route, optional } from './handler-context.ts';
import {
  checkQuorum,
  flag,
  lockError,
  onGuest,
  refuseRootOnly,
  requestNode,
  startGuestTask,
  powerRoute,
} from './guest-helpers.ts';
import { MACHINE_PARAM } from './vmstate.ts';

export const vmidOf = (ctx: HandlerContext) => Number(ctx.params.vmid);
const notFound = (ctx: HandlerContext) =>
  `unable to find configuration file for VM ${vmidOf(ctx)} on node '${String(ctx.params.node)}'`;

/** check_running with its config check: the VM must exist on this node (500 otherwise). */
export function runningGuest(ctx: HandlerContext): Guest | undefined {
  const guest = ctx.state.guests.get(vmidOf(ctx));
  if (guest?.type !== 'qemu' || guest.node !== ctx.params.node) throw dieError(notFound(ctx));
  return guest.status === 'running' ? guest : undefined;
}

/** vm_is_paused($vmid, 1): QMP reports paused, prelaunch or (guest-initiated) suspended. */
const isPaused = (guest: Guest | undefined) =>
  guest?.status === 'running' && guest.qmpstatus !== 'running';

/** The start a worker does (vm_start): template, lock and running checks, then boot. */
export function startPlan(ctx: HandlerContext, guest: Guest, skiplock: boolean) {
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
      // the cloud-init drive is regenerated on every start
      if (Object.values(guest.config).some((value) => /:vm-\d+-cloudinit\b/.test(value))) {
        log.info('generating cloud-init ISO');
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
    if (guest?.type !== 'qemu' || guest.node !== ctx.params.node) throw new Error(notFound(ctx));
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

const TIMEOUT = optional({ type: 'integer', minimum: 0 });

export const QEMU_POWER_ROUTES: readonly Route[] = [
  powerRoute('qemu', 'start', start, {
    skiplock: SKIPLOCK_PARAM,
    stateuri: optional({ type: 'string', maxLength: 128 }),
    migratedfrom: optional({ type: 'string', format: 'pve-node' }),
    migration_type: optional({ type: 'string', enum: ['secure', 'insecure'] }),
    migration_network: optional({ type: 'string', format: 'CIDR' }),
    machine: MACHINE_PARAM,
    'force-cpu': optional({ type: 'string' }),
    targetstorage: optional({ type: 'string', format: 'storage-pair-list' }),
    timeout: TIMEOUT,
    'with-conntrack-state': optional({ type: 'boolean' }),
    'nets-host-mtu': optional({ type: 'string', pattern: 'net\\d+=\\d+(,net\\d+=\\d+)*' }),
  }),
  powerRoute('qemu', 'stop', stop, {
    skiplock: SKIPLOCK_PARAM,
    migratedfrom: optional({ type: 'string', format: 'pve-node' }),
    timeout: TIMEOUT,
    keepActive: optional({ type: 'boolean' }),
    'overrule-shutdown': optional({ type: 'boolean' }),
  }),
  powerRoute('qemu', 'shutdown', shutdown, {
    skiplock: SKIPLOCK_PARAM,
    timeout: TIMEOUT,
    forceStop: optional({ type: 'boolean' }),
    keepActive: optional({ type: 'boolean' }),
  }),
  powerRoute('qemu', 'reboot', reboot, { timeout: TIMEOUT }),
];
