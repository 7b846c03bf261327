// POST /nodes/{node}/lxc/{vmid}/status/{start,stop,shutdown,reboot,suspend,resume}, following
// pve-container API2/LXC/Status.pm: unlike qemu, "already running" and "not running" are refused
// in the API call, and suspend/resume are lxc-checkpoint (the container stops while checkpointed).
import type { Guest } from '../cluster/cluster-state.ts';
import { isTemplateConfig, parseProps } from '../cluster/guest-config.ts';
import { bootGuest, haltGuest } from '../cluster/power.ts';
import { abortGuestTasks, type WorkPlan } from '../cluster/tasks.ts';
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

const vmidOf = (ctx: HandlerContext) => Number(ctx.params.vmid);

/** PVE::LXC::check_running looks at running containers only, not at config files. */
function isRunningHere(ctx: HandlerContext): boolean {
  const guest = ctx.state.guests.get(vmidOf(ctx));
  return guest?.type === 'lxc' && guest.node === ctx.params.node && guest.status === 'running';
}

/** Locks other than 'mounted' stop start/stop unless skiplock is given. */
function lockedPlan(guest: Guest, skiplock: boolean): WorkPlan | undefined {
  const error = lockError(guest);
  return error !== undefined && !skiplock && guest.config.lock !== 'mounted'
    ? { error }
    : undefined;
}

function startPlan(ctx: HandlerContext, guest: Guest): WorkPlan {
  if (isTemplateConfig(guest.config)) throw new Error("you can't start a CT if it's a template");
  const locked = lockedPlan(guest, false);
  if (locked) return locked;
  const quota = Object.entries(guest.config).some(
    ([key, value]) =>
      (key === 'rootfs' || /^mp\d+$/.test(key)) && parseProps(value, 'volume').quota === '1',
  );
  if (guest.config.unprivileged === '1' && quota) {
    return { error: 'Quotas are not supported by unprivileged containers.' };
  }
  return { commit: (_log, now) => bootGuest(ctx.state, guest, now) };
}

function start(ctx: HandlerContext): unknown {
  refuseRootOnly(ctx, 'skiplock');
  if (isRunningHere(ctx)) throw dieError(`CT ${vmidOf(ctx)} already running`);
  checkQuorum(ctx);
  return startGuestTask(
    ctx,
    'vzstart',
    vmidOf(ctx),
    onGuest(ctx, 'lxc', vmidOf(ctx), (ct) => startPlan(ctx, ct)),
  );
}

function stop(ctx: HandlerContext): unknown {
  refuseRootOnly(ctx, 'skiplock');
  if (!isRunningHere(ctx)) throw dieError(`CT ${vmidOf(ctx)} not running`);
  const overruled = flag(ctx, 'overrule-shutdown')
    ? abortGuestTasks(ctx.state, vmidOf(ctx), 'vzshutdown')
    : [];
  return startGuestTask(
    ctx,
    'vzstop',
    vmidOf(ctx),
    onGuest(ctx, 'lxc', vmidOf(ctx), (ct, log) => {
      if (overruled.length > 0) log.info(`overruled vzshutdown tasks: ${overruled.join(', ')}`);
      return lockedPlan(ct, false) ?? { commit: () => haltGuest(ct) };
    }),
  );
}

function shutdown(ctx: HandlerContext): unknown {
  if (!isRunningHere(ctx)) throw dieError(`CT ${vmidOf(ctx)} not running`);
  return startGuestTask(
    ctx,
    'vzshutdown',
    vmidOf(ctx),
    onGuest(ctx, 'lxc', vmidOf(ctx), (ct) => {
      const error = lockError(ct); // shutdown honours every lock, 'mounted' included
      return error !== undefined ? { error } : { commit: () => haltGuest(ct) };
    }),
  );
}

function reboot(ctx: HandlerContext): unknown {
  // pve-container's reboot says "VM", not "CT", here
  if (!isRunningHere(ctx)) throw dieError(`VM ${vmidOf(ctx)} not running`);
  return startGuestTask(
    ctx,
    'vzreboot',
    vmidOf(ctx),
    onGuest(ctx, 'lxc', vmidOf(ctx), (ct) => {
      if (ct.status !== 'running') return {};
      return {
        commit: (_log, now) => {
          haltGuest(ct);
          bootGuest(ctx.state, ct, now);
        },
      };
    }),
  );
}

const CHECKPOINT_DIR = '/var/lib/vz/dump';

function suspend(ctx: HandlerContext): unknown {
  if (!isRunningHere(ctx)) throw dieError(`CT ${vmidOf(ctx)} not running`);
  return startGuestTask(
    ctx,
    'vzsuspend',
    vmidOf(ctx),
    onGuest(ctx, 'lxc', vmidOf(ctx), (ct) => {
      const error = lockError(ct);
      if (error !== undefined) return { error };
      return {
        commit: () => {
          haltGuest(ct);
          ct.checkpointed = true;
        },
      };
    }),
  );
}

function resume(ctx: HandlerContext): unknown {
  if (isRunningHere(ctx)) throw dieError(`CT ${vmidOf(ctx)} already running`);
  const vmid = vmidOf(ctx);
  const node = requestNode(ctx);
  // no config lock here: lxc-checkpoint restores what suspend saved, or fails
  return startGuestTask(ctx, 'vzresume', vmid, () => {
    const ct = ctx.state.guests.get(vmid);
    if (!ct || ct.node !== node.name || !ct.checkpointed) {
      return {
        error: `command 'lxc-checkpoint -n ${vmid} -r --foreground -D ${CHECKPOINT_DIR}' failed: exit code 1`,
      };
    }
    return { commit: (_log, now) => bootGuest(ctx.state, ct, now) };
  });
}

export const LXC_POWER_ROUTES: readonly Route[] = [
  powerRoute('lxc', 'start', start, {
    skiplock: SKIPLOCK_PARAM,
    debug: optional({ type: 'boolean' }),
  }),
  powerRoute('lxc', 'stop', stop, {
    skiplock: SKIPLOCK_PARAM,
    'overrule-shutdown': optional({ type: 'boolean' }),
  }),
  powerRoute('lxc', 'shutdown', shutdown, {
    timeout: optional({ type: 'integer', minimum: 0 }),
    forceStop: optional({ type: 'boolean' }),
  }),
  powerRoute('lxc', 'reboot', reboot, { timeout: optional({ type: 'integer', minimum: 0 }) }),
  powerRoute('lxc', 'suspend', suspend),
  powerRoute('lxc', 'resume', resume),
];
