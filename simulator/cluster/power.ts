// Run-state transitions of a guest, as the end of a start/stop task leaves it: a started guest
// gets a pid, uptime and load, after its pending config is applied (vm_start does that first);
// a stopped guest loses them. Pure state changes, no checks.
import { findNode, type ClusterState, type Guest } from './cluster-state.ts';
import { guestFacts } from './guest-config.ts';
import { applyStaged } from './pending.ts';
import { removeVolume } from './volumes.ts';

export function bootGuest(state: ClusterState, guest: Guest, now: number): void {
  // the guest is still stopped here, so all pending changes apply (forced deletes free volumes)
  applyStaged(guest, (volid) => removeVolume(state, guest.node, volid));
  const facts = guestFacts(guest, findNode(state, guest.node)?.maxcpu ?? 1);
  Object.assign(guest, {
    status: 'running',
    qmpstatus: 'running',
    bootedAt: now,
    pid: 200_000 + ((guest.vmid * 7919) % 3_000_000),
    cpu: 0.0123,
    mem: Math.round(facts.maxmem * 0.3),
    disk: guest.type === 'lxc' ? Math.round(facts.maxdisk * 0.2) : 0,
    netin: 0,
    netout: 0,
    diskread: 0,
    diskwrite: 0,
  });
  delete guest.checkpointed;
}

export function haltGuest(guest: Guest): void {
  Object.assign(guest, {
    status: 'stopped',
    qmpstatus: 'running',
    cpu: 0,
    mem: 0,
    netin: 0,
    netout: 0,
  });
  Object.assign(guest, { diskread: 0, diskwrite: 0, disk: 0 });
  delete guest.bootedAt;
  delete guest.pid;
}
