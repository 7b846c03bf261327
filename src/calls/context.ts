// Builds one tool call's scope: the caller's identity and a lazily created Proxmox client, whose
// upstream exchanges the seam logs.

import type { Clock } from '../clock';
import type { Identity } from '../core/identity';
import type { PveClient } from '../proxmox/client';
import type { CallScope } from './host';
import { ToolFailure } from './tool-spec';

/** A fresh Proxmox client for one call to a cluster (absent: the default), or why there is none. */
export type PveConnector = (cluster?: string) => PveClient | { error: string };

export function makeScope(
  connect: PveConnector,
  clock: Clock,
  identity: Identity,
  requestId: string,
): CallScope {
  let client: PveClient | undefined;
  let cluster: string | undefined;
  return {
    ctx: {
      requestId,
      identity,
      clock,
      pve() {
        if (!client) {
          const made = connect(cluster);
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
    onCluster(name) {
      // Never a request to one cluster and the rest of the call to another.
      if (client && name !== cluster) throw new Error('the cluster is chosen before any request');
      cluster = name;
    },
  };
}
