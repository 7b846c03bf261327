// Control endpoints for one guest, so tests can set up and assert state without the API under
// test: read its config, pending changes, snapshots and run state; set or clear its lock; make
// its QEMU guest agent answer or not; put a running VM's QMP status into paused/prelaunch/...
import type { Guest, GuestConfig, QmpStatus } from '../cluster/cluster-state.ts';
import { configDigest } from '../cluster/config-file.ts';
import type { Tenant } from '../tenant.ts';
import type { GuestView } from './guest-view.ts';

export interface ControlReply {
  readonly status: number;
  readonly body: unknown;
}

const ok = (body: unknown): ControlReply => ({ status: 200, body });
const fail = (status: number, error: string): ControlReply => ({ status, body: { error } });

/** The lock values each guest type's config schema allows. */
const LOCKS: Readonly<Record<Guest['type'], readonly string[]>> = {
  qemu: [
    'backup',
    'clone',
    'create',
    'migrate',
    'rollback',
    'snapshot',
    'snapshot-delete',
    'suspending',
    'suspended',
  ],
  lxc: [
    'backup',
    'create',
    'destroyed',
    'disk',
    'fstrim',
    'migrate',
    'mounted',
    'rollback',
    'snapshot',
    'snapshot-delete',
  ],
};
const QMP_STATUSES: readonly QmpStatus[] = ['running', 'paused', 'prelaunch', 'suspended'];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function describeGuest(guest: Guest): GuestView {
  const snapshots: Record<string, GuestConfig> = Object.fromEntries(guest.snapshots);
  return {
    vmid: guest.vmid,
    type: guest.type,
    node: guest.node,
    status: guest.status,
    qmpstatus: guest.status === 'running' ? guest.qmpstatus : 'stopped',
    agentRunning: guest.agentRunning,
    lock: guest.config.lock ?? null,
    pool: guest.pool ?? null,
    checkpointed: guest.checkpointed === true,
    config: guest.config,
    pending: { values: guest.pending, delete: guest.pendingDelete },
    snapshots,
    digest: configDigest(guest),
  };
}

/** Routes below /guests/<vmid>: '' (GET), '/lock' (POST, DELETE), '/agent', '/qmpstatus' (POST). */
export function handleGuestControl(
  tenant: Tenant,
  method: string,
  vmid: number,
  sub: string,
  input: unknown,
): ControlReply {
  const guest = tenant.state.guests.get(vmid);
  if (!guest) return fail(404, `no such guest ${vmid}`);
  const route = `${method} ${sub}`;
  if (route === 'GET ') return ok(describeGuest(guest));
  if (route === 'DELETE /lock') {
    delete guest.config.lock;
    return ok(describeGuest(guest));
  }
  if (!isRecord(input)) return fail(400, 'body must be a JSON object');
  if (route === 'POST /lock') {
    const lock = input.lock;
    if (typeof lock !== 'string' || !LOCKS[guest.type].includes(lock)) {
      return fail(400, `'lock' must be one of ${LOCKS[guest.type].join(', ')}`);
    }
    guest.config.lock = lock;
    return ok(describeGuest(guest));
  }
  if (route === 'POST /agent') {
    if (guest.type !== 'qemu') return fail(400, 'only VMs have a QEMU guest agent');
    if (typeof input.running !== 'boolean') return fail(400, "'running' must be a boolean");
    guest.agentRunning = input.running;
    return ok(describeGuest(guest));
  }
  if (route === 'POST /qmpstatus') {
    if (guest.type !== 'qemu' || guest.status !== 'running')
      return fail(400, 'only a running VM has a QMP status');
    const qmpstatus = input.qmpstatus;
    if (typeof qmpstatus !== 'string' || !QMP_STATUSES.includes(qmpstatus as QmpStatus)) {
      return fail(400, `'qmpstatus' must be one of ${QMP_STATUSES.join(', ')}`);
    }
    guest.qmpstatus = qmpstatus as QmpStatus;
    return ok(describeGuest(guest));
  }
  return fail(404, `no control endpoint '${method} /guests/${vmid}${sub}'`);
}
