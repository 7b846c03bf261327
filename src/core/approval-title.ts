// What an approval asks, in words a person decides on: "Stop VM 100 on pve1", not a tool id. Pure.

import { guestName } from './guest-name';

type Args = Record<string, unknown>;

/** "VM 104", "VM 104 (win11-lab)", "container 110", "a new VM". */
function guestWords(a: Args, name: string | null | undefined): string {
  if (a.vmid === undefined) return `a new ${a.vm_type === 'lxc' ? 'container' : 'VM'}`;
  return guestName(String(a.vm_type), String(a.vmid), name);
}
/** Where the server reaches several clusters, the call's (its `cluster`) goes before the node. */
const CLUSTER = (a: Args): string => (typeof a.cluster === 'string' ? `${a.cluster}/` : '');
const ON = (a: Args): string => (typeof a.node === 'string' ? ` on ${CLUSTER(a)}${a.node}` : '');

/** Each tool's sentence; a tool not listed is named by its id. */
const TITLES: Record<string, (a: Args, guest: string) => string> = {
  pve_start_vm: (a, g) => `Start ${g}${ON(a)}`,
  pve_stop_vm: (a, g) => `Stop ${g}${ON(a)} (hard stop)`,
  pve_shutdown_vm: (a, g) => `Shut down ${g}${ON(a)}`,
  pve_reboot_vm: (a, g) => `Reboot ${g}${ON(a)}`,
  pve_suspend_vm: (a, g) => `Suspend ${g}${ON(a)}`,
  pve_resume_vm: (a, g) => `Resume ${g}${ON(a)}`,
  pve_delete_vm: (a, g) => `Destroy ${g}${ON(a)}`,
  pve_create_qemu_vm: (a) =>
    `Create a VM${typeof a.name === 'string' ? ` "${a.name}"` : ''}${ON(a)}`,
  pve_create_lxc: (a) =>
    `Create a container${typeof a.hostname === 'string' ? ` "${a.hostname}"` : ''}${ON(a)}`,
  pve_clone_vm: (a) =>
    `Clone VM ${String(a.source_vmid ?? '?')}${typeof a.name === 'string' ? ` as "${a.name}"` : ''}${ON(a)}`,
  pve_set_vm_config: (a, g) => `Change the configuration of ${g}${ON(a)}`,
  pve_resize_disk: (a, g) =>
    `Grow disk ${String(a.disk ?? '?')} of ${g}${ON(a)} by ${String(a.size ?? '?')}`,
  pve_migrate_vm: (a, g) =>
    `Move ${g} from ${CLUSTER(a)}${String(a.node ?? '?')} to ${String(a.target ?? '?')}`,
  pve_create_snapshot: (a, g) => `Snapshot ${g}${ON(a)} as "${String(a.snapname ?? '?')}"`,
  pve_delete_snapshot: (a, g) => `Delete snapshot "${String(a.snapname ?? '?')}" of ${g}${ON(a)}`,
  pve_rollback_snapshot: (a, g) =>
    `Roll ${g}${ON(a)} back to snapshot "${String(a.snapname ?? '?')}"`,
  pve_guest_exec: (a, g) =>
    `Run ${Array.isArray(a.command) ? a.command.map((p) => JSON.stringify(String(p))).join(' ') : '?'} in ${g}${ON(a)}`,
  pve_guest_file_read: (a, g) => `Read ${String(a.file ?? '?')} in ${g}${ON(a)}`,
  pve_create_backup: (a, g) => `Back up ${g}${ON(a)} to ${String(a.storage ?? '?')}`,
  pve_restore_backup: (a, g) =>
    a.force === true
      ? `Restore ${String(a.volume ?? '?')} over ${g}${ON(a)}`
      : `Restore ${String(a.volume ?? '?')} as ${g}${ON(a)}`,
  pve_delete_backup: (a) => `Delete backup ${String(a.volume ?? '?')}`,
  pve_api_request: (a) => `Raw API: ${String(a.method ?? '?')} ${String(a.path ?? '?')}`,
};

const MAX_TITLE = 160;

/** The sentence for a call; with the guest's name when it is known ("Destroy VM 104 (win11-lab) on pve2"). */
export function approvalTitle(tool: string, args: Args, guestName?: string | null): string {
  let title = Object.hasOwn(TITLES, tool)
    ? TITLES[tool]!(args, guestWords(args, guestName))
    : `Run ${tool}`;
  // "Stop VM 104 on prod/pve2": a vmid is one guest only within its cluster.
  if (CLUSTER(args) && !title.includes(` ${CLUSTER(args)}`)) title += ` on cluster ${args.cluster}`;
  if (title.length <= MAX_TITLE) return title;
  // Cut, it still says the cluster: a long command or path must not hide where it runs.
  const kept = CLUSTER(args) ? ` on cluster ${args.cluster}` : '';
  const cut = title.slice(0, MAX_TITLE - 1 - kept.length);
  return `${cut}…${kept && !cut.includes(` ${CLUSTER(args)}`) ? kept : ''}`;
}

/** "in 14 minutes", "in 1 minute", "in under a minute", or "ago" for a past time. */
export function relativeTime(at: number, now: number): string {
  const minutes = Math.round(Math.abs(at - now) / 60_000);
  const span =
    minutes === 0
      ? 'under a minute'
      : minutes < 120
        ? `${minutes} minute${minutes === 1 ? '' : 's'}`
        : `${Math.round(minutes / 60)} hours`;
  return at >= now ? `in ${span}` : `${span} ago`;
}
