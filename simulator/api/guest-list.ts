// GET /nodes/{node}/qemu and /nodes/{node}/lxc: the node's guests of that type, each only if
// the caller has VM.Audit on it (qemu-server / pve-container vmlist).
import { guestsSorted } from '../cluster/cluster-state.ts';
import { NODE_PARAM, type HandlerContext, type Route } from './handler-context.ts';
import { hasPrivilege } from '../access/tokens.ts';
import { ALL_USERS } from '../access/permissions.ts';
import { vmstatus } from './views.ts';

function listGuests(type: 'qemu' | 'lxc') {
  return ({ state, identity, params, now }: HandlerContext): unknown =>
    guestsSorted(state)
      .filter((guest) => guest.type === type && guest.node === params.node)
      .filter((guest) => hasPrivilege(identity, `/vms/${guest.vmid}`, 'VM.Audit'))
      .map((guest) => vmstatus(state, guest, now));
}

export const GUEST_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/qemu',
    permissions: ALL_USERS,
    schema: { node: NODE_PARAM, full: { type: 'boolean', optional: true } },
    handle: listGuests('qemu'),
  },
  {
    method: 'GET',
    path: '/nodes/{node}/lxc',
    permissions: ALL_USERS,
    schema: { node: NODE_PARAM },
    handle: listGuests('lxc'),
  },
];
