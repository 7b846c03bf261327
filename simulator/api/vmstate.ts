// Saving a running VM's RAM to a state volume, shared by snapshots with vmstate=1 and
// suspend-to-disk (QemuConfig __snapshot_save_vmstate): a raw volume vm-<vmid>-state-<name> of
// twice the memory plus 500 MiB on the chosen storage, recorded as `vmstate` with the machine.
import type { ClusterState, Guest, GuestConfig } from '../cluster/cluster-state.ts';
import { configVolumes, guestFacts } from '../cluster/guest-config.ts';
import type { TaskLog } from '../cluster/tasks.ts';
import { allocateImage, parseVolumeId, storageConfig } from '../cluster/volumes.ts';
import { MACHINE_FORMAT } from '../schema/qemu-device-formats.ts';
import type { KeySchema } from '../schema/schema-types.ts';
import type { HandlerContext } from './handler-context.ts';

const MIB = 1024 ** 2;

export const MACHINE_PARAM: KeySchema = { type: 'string', optional: true, format: MACHINE_FORMAT };

export function runningMachine(guest: Guest): string {
  return guest.config.machine?.startsWith('pc-q35') || guest.config.machine === 'q35'
    ? 'pc-q35-10.0+pve1'
    : 'pc-i440fx-10.0+pve1';
}

export function saveVmState(
  ctx: HandlerContext,
  guest: Guest,
  target: GuestConfig,
  name: string,
  storeid: string,
  log: TaskLog,
  now: number,
): void {
  const storage = storageConfig(ctx.state, storeid);
  const memory = guestFacts(guest, 1).maxmem;
  const volid = allocateImage(ctx.state, {
    storage,
    node: guest.node,
    vmid: guest.vmid,
    size: memory * 2 + 500 * MIB,
    now,
    name: `vm-${guest.vmid}-state-${name}`,
  });
  const saved = ((memory * 0.3) / MIB).toFixed(2);
  log.info(`saving VM state and RAM using storage '${storeid}'`, '1.51 MiB in 0s');
  log.info(`completed saving the VM state in 2s, saved ${saved} MiB`);
  target.vmstate = volid;
  target.runningmachine = runningMachine(guest);
  target.runningcpu =
    'qemu64,+aes,enforce,+kvm_pv_eoi,+kvm_pv_unhalt,+pni,+popcnt,+sse4.1,+sse4.2,+ssse3';
}

/** find_vmstate_storage: vmstatestorage, else a shared storage the VM uses, else a local one. */
export function vmstateStorage(state: ClusterState, guest: Guest): string {
  if (guest.config.vmstatestorage) return guest.config.vmstatestorage;
  const used = configVolumes('qemu', guest.config)
    .filter((volume) => !volume.cdrom)
    .flatMap((volume) =>
      state.storages.filter((s) => s.id === parseVolumeId(volume.volid)?.storeid),
    );
  return (used.find((s) => s.shared) ?? used[0])?.id ?? 'local';
}
