// Builds one tool call's scope: the caller's identity and a lazily created Proxmox client, whose
// upstream exchanges the seam logs.

import type { Clock } from '../clock';
import type { Identity } from '../core/identity';
import type { PveClient } from '../proxmox/client';
import type { CallScope } from './host';
import { ToolFailure } from './tool-spec';

/** A fresh Proxmox client for one call, or why there is none (the Runtime's). */
export type PveConnector = () => PveClient | { error: string };

export function makeScope(
  connect: PveConnector,
  clock: Clock,
  identity: Identity,
  requestId: string,
): CallScope {
  let client: PveClient | undefined;
  return {
    ctx: {
      requestId,
      identity,
      clock,
      pve() {
        if (!client) {
          const made = connect();
          if ('error' in made) {
            throw new ToolFailure(
              'config',
              `This server's Proxmox connection is not configured: ${made.error}.`,
            );
          }
          client = made;
        }
        return client;
      },
    },
    upstream: () => client?.calls ?? [],
  };
}
