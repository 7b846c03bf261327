// POST /nodes/{node}/qemu/{vmid}/status/{suspend,resume} (qemu-server vm_suspend, vm_resume):
// pause a running VM (qmpause; QMP status 'paused') or save its RAM to a state volume and stop it
// (qmsuspend, todisk=1; lock 'suspended'), and resume either (qmresume; from disk it starts).
import { check, checkVmPerm } from '../access/permissions.ts';
import { isTemplateConfig } from '../cluster/guest-config.ts';
import { haltGuest } from '../cluster/power.ts';
import { dieError } from '../schema/pve-error.ts';
import { SKIPLOCK_PARAM, type HandlerContext, type Route, optional } from './handler-context.ts';
import {
  flag,
  lockError,
  onGuest,
  refuseRootOnly,
  startGuestTask,
  str,
  powerRoute,
} from './guest-helpers.ts';
import { runningGuest, startPlan, vmidOf } from './qemu-power.ts';
import { saveVmState, vmstateStorage } from './vmstate.ts';

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

export const QEMU_SUSPEND_ROUTES: readonly Route[] = [
  powerRoute('qemu', 'suspend', suspend, {
    skiplock: SKIPLOCK_PARAM,
    todisk: optional({ type: 'boolean' }),
    statestorage: optional({ type: 'string', format: 'pve-storage-id', requires: 'todisk' }),
  }),
  powerRoute('qemu', 'resume', resume, {
    skiplock: SKIPLOCK_PARAM,
    nocheck: optional({ type: 'boolean' }),
  }),
];
