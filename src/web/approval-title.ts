// What an approval asks, in words a person decides on: "Stop VM 100 on pve1", not a tool id. Pure.

type Args = Record<string, unknown>;

const GUEST = (a: Args): string => {
  const kind = a.vm_type === 'lxc' ? 'container' : 'VM';
  return a.vmid === undefined ? `a new ${kind}` : `${kind} ${String(a.vmid)}`;
};
const ON = (a: Args): string => (typeof a.node === 'string' ? ` on ${a.node}` : '');

/** Each tool's sentence; a tool not listed is named by its id. */
const TITLES: Record<string, (a: Args) => string> = {
  pve_start_vm: (a) => `Start ${GUEST(a)}${ON(a)}`,
  pve_stop_vm: (a) => `Stop ${GUEST(a)}${ON(a)} (hard stop)`,
  pve_shutdown_vm: (a) => `Shut down ${GUEST(a)}${ON(a)}`,
  pve_reboot_vm: (a) => `Reboot ${GUEST(a)}${ON(a)}`,
  pve_suspend_vm: (a) => `Suspend ${GUEST(a)}${ON(a)}`,
  pve_resume_vm: (a) => `Resume ${GUEST(a)}${ON(a)}`,
  pve_delete_vm: (a) => `Destroy ${GUEST(a)}${ON(a)}`,
  pve_create_qemu_vm: (a) =>
    `Create a VM${typeof a.name === 'string' ? ` "${a.name}"` : ''}${ON(a)}`,
  pve_create_lxc: (a) =>
    `Create a container${typeof a.hostname === 'string' ? ` "${a.hostname}"` : ''}${ON(a)}`,
  pve_clone_vm: (a) =>
    `Clone VM ${String(a.source_vmid ?? '?')}${typeof a.name === 'string' ? ` as "${a.name}"` : ''}${ON(a)}`,
  pve_set_vm_config: (a) => `Change the configuration of ${GUEST(a)}${ON(a)}`,
  pve_resize_disk: (a) =>
    `Grow disk ${String(a.disk ?? '?')} of ${GUEST(a)}${ON(a)} by ${String(a.size ?? '?')}`,
  pve_migrate_vm: (a) =>
    `Move ${GUEST(a)} from ${String(a.node ?? '?')} to ${String(a.target ?? '?')}`,
  pve_create_snapshot: (a) => `Snapshot ${GUEST(a)}${ON(a)} as "${String(a.snapname ?? '?')}"`,
  pve_delete_snapshot: (a) =>
    `Delete snapshot "${String(a.snapname ?? '?')}" of ${GUEST(a)}${ON(a)}`,
  pve_rollback_snapshot: (a) =>
    `Roll ${GUEST(a)}${ON(a)} back to snapshot "${String(a.snapname ?? '?')}"`,
  pve_api_request: (a) => `Raw API: ${String(a.method ?? '?')} ${String(a.path ?? '?')}`,
};

export function approvalTitle(tool: string, args: Args): string {
  const title = Object.hasOwn(TITLES, tool) ? TITLES[tool]!(args) : `Run ${tool}`;
  return title.length > 160 ? `${title.slice(0, 159)}…` : title;
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
