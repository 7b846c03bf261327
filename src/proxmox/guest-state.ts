// Addressing one guest: its API path (node and vmid are validated before they get here; they are
// still encoded, so no value can change the path), its kind in words, and its current state,
// which every write reads first to preview, to refuse early and to name what it acts on.

import { guestStatus, type GuestStatus } from './schemas';
import type { PveClient } from './client';
import { guestName } from '../core/guest-name';

/** A guest's kind, as Proxmox's paths name it. */
export type VmType = 'qemu' | 'lxc';

export interface GuestRef {
  node: string;
  vmid: number;
  vm_type: VmType;
}

/** `/nodes/{node}/{qemu|lxc}/{vmid}`, plus any further segments (each encoded). */
export function guestPath(g: GuestRef, ...rest: string[]): string {
  return [
    `/nodes/${encodeURIComponent(g.node)}/${g.vm_type}/${g.vmid}`,
    ...rest.map(encodeURIComponent),
  ].join('/');
}

/**
 * What a call that shows guest `g`'s status acts on (ToolSpec.target): its facts may come from
 * that same read (./target-facts.ts). `at` is read only then: a replay knows the guest by its
 * vmid whatever else its record lost.
 */
export function guestAt(g: GuestRef): {
  vmid: number;
  at: () => { node: string; vm_type: VmType };
} {
  return { vmid: g.vmid, at: () => ({ node: g.node, vm_type: g.vm_type }) };
}

/** "VM 104" or "container 104", with the name when known. */
export function guestLabel(g: GuestRef, name?: string): string {
  return guestName(g.vm_type, g.vmid, name);
}

/** The state a write is judged against. */
export interface GuestState {
  status: string;
  /** QEMU's own view: running, paused, prelaunch, suspended... (qemu only). */
  qmpstatus: string | null;
  name: string | null;
  lock: string | null;
  template: boolean;
  agent: boolean;
  raw: GuestStatus;
}

/**
 * Reads `status/current`; a guest that is not on that node (or not of that type) is PVE's 500.
 * `shown`: read to be shown, not to decide a write on: the answer this call read of it already,
 * if any, serves (PveClient.shared): its policy's target facts, where they were read from it.
 */
export async function readGuestState(
  pve: PveClient,
  g: GuestRef,
  shown = false,
): Promise<GuestState> {
  const path = guestPath(g, 'status', 'current');
  const raw = shown ? await pve.shared(path, guestStatus) : await pve.get(path, guestStatus);
  return {
    status: raw.status,
    qmpstatus: raw.qmpstatus ?? null,
    name: raw.name ?? null,
    lock: raw.lock ?? null,
    template: raw.template ?? false,
    agent: raw.agent ?? false,
    raw,
  };
}

/**
 * A status as /cluster/resources lists it, said as the guest's process's: running, stopped or
 * unknown (its node did not report it). The list carries a running VM's QEMU state instead
 * (pvestatd lists `qmpstatus || status`: paused, prelaunch, suspended...), and its QEMU runs.
 */
export function processStatus(listed: string): string {
  return listed === 'stopped' || listed === 'unknown' ? listed : 'running';
}

/** "running", or "running (paused)" when QEMU says more than PVE's status. */
export function describeState(s: GuestState): string {
  return s.qmpstatus && s.qmpstatus !== s.status ? `${s.status} (${s.qmpstatus})` : s.status;
}
