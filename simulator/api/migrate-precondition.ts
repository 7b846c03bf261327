// GET /nodes/{node}/qemu/{vmid}/migrate (migrate_vm_precondition): whether the VM runs, which nodes
// it may go to, its local disks (with size, CD-ROM and unused flags) and local resources.
import { perm } from '../access/permissions.ts';
import { isQuorate } from '../cluster/cluster-state.ts';
import { dieError } from '../schema/pve-error.ts';
import { checkLock, loadGuest, requestNode } from './guest-helpers.ts';
import { GUEST_PARAMS, type HandlerContext, type Route } from './handler-context.ts';
import { scanVolumes } from './migrate-volumes.ts';

/** Options that tie a VM to its node: passed-through PCI/USB host devices and real serial ports. */
function localResources(config: Record<string, string>): string[] {
  return Object.entries(config)
    .filter(
      ([key, value]) =>
        /^hostpci\d+$/.test(key) ||
        (/^usb\d+$/.test(key) && !/spice/i.test(value)) ||
        (/^serial\d+$/.test(key) && value !== 'socket'),
    )
    .map(([key]) => key)
    .sort();
}

function precondition(ctx: HandlerContext): unknown {
  if (!isQuorate(ctx.state)) throw dieError('cluster not ready - no quorum?');
  const guest = loadGuest(ctx, 'qemu');
  checkLock(guest);
  const local = requestNode(ctx);
  const running = guest.status === 'running';
  const disks = scanVolumes(ctx.state, guest, running).local.map((volume) => ({
    volid: volume.volid,
    size: volume.size,
    cdrom: volume.cdrom ? 1 : 0,
    is_unused: volume.ref === 'unused' ? 1 : 0,
    ...(volume.ref === 'attached' ? { is_attached: 1, drivename: volume.key } : {}),
    ...(volume.ref === 'vmstate' ? { is_vmstate: 1 } : {}),
  }));
  return {
    running: running ? 1 : 0,
    allowed_nodes: ctx.state.nodes
      .filter((node) => node.name !== local.name)
      .map((node) => node.name),
    not_allowed_nodes: {},
    local_disks: disks,
    local_resources: localResources(guest.config),
    'mapped-resources': [],
    'mapped-resource-info': {},
    'has-dbus-vmstate': 1,
  };
}

export const MIGRATE_PRECONDITION_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/migrate',
    permissions: perm('/vms/{vmid}', ['VM.Migrate']),
    schema: { ...GUEST_PARAMS, target: { type: 'string', optional: true, format: 'pve-node' } },
    handle: precondition,
  },
];
