// Sending a write that creates a guest under an id the server chose (the next free one): when
// another creation took that id first, Proxmox refuses before it writes anything, so the next
// free id is taken (the policy asked again about it) and the write sent anew. A write whose
// answer was lost is never repeated: it may have happened.

import { ToolFailure } from '../calls/tool-spec';
import type { PveClient } from '../proxmox/client';
import { PveError, writeMayHaveHappened } from '../proxmox/errors';
import { nextId } from '../proxmox/schemas';

/** How many ids to try when automatically chosen ones turn out to be taken. */
const MAX_VMID_ATTEMPTS = 5;

export interface FreshIdWrite<T> {
  pve: PveClient;
  /** The id the server chose (an id the caller gave is never replaced: it is sent as a plain step). */
  vmid: number;
  /** The argument that names the id (vmid, newid), for messages. */
  idArg: string;
  send(vmid: number): Promise<T>;
  /** Asks the policy about another id before it is used (throws a PolicyRefusal). */
  recheck(vmid: number): void;
  /** For a lost answer: what may have happened and how to check, e.g. "The create request for VM 106 ...". */
  lost(vmid: number): string;
}

export async function sendWithFreshId<T>(
  w: FreshIdWrite<T>,
): Promise<{ vmid: number; result: T; attempts: number }> {
  const tried: number[] = [];
  let vmid = w.vmid;
  for (;;) {
    try {
      return { vmid, result: await w.send(vmid), attempts: tried.length + 1 };
    } catch (err) {
      if (err instanceof PveError && writeMayHaveHappened(err))
        throw new ToolFailure('indeterminate', `${err.message} ${w.lost(vmid)}`);
      // PVE checks the id before it writes anything, so "already exists" means nothing was
      // created: asking again with a new id is a new request, not a repeated write.
      if (!vmidTaken(err, vmid)) throw err;
      tried.push(vmid);
      if (tried.length >= MAX_VMID_ATTEMPTS) {
        throw new ToolFailure(
          'conflict',
          `VM ids ${tried.join(', ')} were each taken by another creation first; try again or pass ${w.idArg}.`,
        );
      }
      const offered = await w.pve.get('/cluster/nextid', nextId);
      // A node that has not seen the other creation yet may offer a taken id again: go past it.
      vmid = tried.includes(offered) ? Math.max(...tried) + 1 : offered;
      w.recheck(vmid);
    }
  }
}

/** Proxmox's refusal of a taken id: create ("VM 106 already exists"), clone ("... config file already exists"). */
function vmidTaken(err: unknown, vmid: number): boolean {
  if (!(err instanceof PveError) || err.failure.kind !== 'server_error') return false;
  const m = /\b(?:VM|CT) (\d+)(?: already exists|: config file already exists)/.exec(
    err.failure.message,
  );
  return m !== null && Number(m[1]) === vmid;
}
