// GET /nodes/{node}/{qemu,lxc}/{vmid}/status/current: vmstatus for one guest plus its HA service
// status (get_service_status: {managed: 0}, or {managed: 1, state});
// for VMs the full variant with QMP's qmpstatus, the running machine and QEMU version, and
// `agent: 1` when the config enables the guest agent (qemu-server vm_status, pve-container).
import { perm } from '../access/permissions.ts';
import { agentEnabled, parseProps } from '../cluster/guest-config.ts';
import { haStatus } from '../cluster/ha.ts';
import { GUEST_PARAMS, type HandlerContext, type Route } from './handler-context.ts';
import { loadGuest } from './guest-helpers.ts';
import { vmstatus } from './views.ts';
import { runningMachine } from './vmstate.ts';

function qemuStatus(ctx: HandlerContext): unknown {
  const guest = loadGuest(ctx, 'qemu');
  const running = guest.status === 'running';
  const vga = parseProps(guest.config.vga ?? '', 'type');
  const spice = /^virtio/.test(vga.type ?? '') || /^qxl/.test(vga.type ?? '');
  const base = vmstatus(ctx.state, guest, ctx.now);
  return {
    ...base,
    qmpstatus: running ? guest.qmpstatus : 'stopped',
    ...(running
      ? {
          'running-machine': runningMachine(guest),
          'running-qemu': '10.0.2',
          'proxmox-support': {
            'pbs-dirty-bitmap': true,
            'query-bitmap-info': true,
            'pbs-library-version': '1.5.2',
          },
          balloon: base.maxmem,
        }
      : {}),
    ha: haStatus(ctx.state, guest),
    ...(spice ? { spice: 1 } : {}),
    ...(vga.clipboard !== undefined ? { clipboard: vga.clipboard } : {}),
    ...(agentEnabled(guest.config) ? { agent: 1 } : {}),
  };
}

function lxcStatus(ctx: HandlerContext): unknown {
  const guest = loadGuest(ctx, 'lxc');
  return { ...vmstatus(ctx.state, guest, ctx.now), ha: haStatus(ctx.state, guest) };
}

export const GUEST_STATUS_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/status/current',
    permissions: perm('/vms/{vmid}', ['VM.Audit']),
    schema: GUEST_PARAMS,
    handle: qemuStatus,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/lxc/{vmid}/status/current',
    permissions: perm('/vms/{vmid}', ['VM.Audit']),
    schema: GUEST_PARAMS,
    handle: lxcStatus,
  },
];
