// Builds one tool call's scope: the caller's identity and a lazily created Proxmox client,
// whose upstream exchanges the seam logs.

import type { AppEnv } from '../env';
import { configOf } from '../config';
import type { Identity } from '../identity';
import { PveClient } from '../proxmox/client';
import type { CallScope } from './host';
import { ToolFailure } from './tool-spec';

export function makeScope(env: AppEnv, identity: Identity, requestId: string): CallScope {
  let client: PveClient | undefined;
  return {
    ctx: {
      requestId,
      identity,
      pve() {
        if (!client) {
          const config = configOf(env).pve;
          if ('error' in config) {
            throw new ToolFailure(
              'config',
              `This server's Proxmox connection is not configured: ${config.error}.`,
            );
          }
          client = new PveClient(config);
        }
        return client;
      },
    },
    upstream: () => client?.calls ?? [],
  };
}
