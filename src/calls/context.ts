// Builds one tool call's scope: the caller's identity and a lazily created Proxmox client, whose
// upstream exchanges the seam logs.

import type { Clock } from '../clock';
import type { Identity } from '../core/identity';
import type { PveClient } from '../proxmox/client';
import type { CallScope } from './host';
import { ToolFailure } from './tool-spec';
import type { CallSpans } from './spans';

/**
 * A fresh Proxmox client for one call to a cluster (absent: the default) with the token `who` acts
 * with there, or why there is none: `error`, the server's Proxmox settings are wrong; `refused`,
 * the person has no Proxmox identity there.
 */
export type PveConnector = (
  cluster: string | undefined,
  who: Identity,
) => PveClient | { error: string } | { refused: string };

/** The person has no Proxmox identity on the cluster (PVE_IDENTITIES): nothing is sent. */
export class NoIdentity extends ToolFailure {
  constructor(message: string) {
    super('config', message);
  }
}

/**
 * `personal`: each person acts with a token of their own (PVE_IDENTITIES), so whether they have
 * one on the call's cluster is known, and a refusal said, as soon as the cluster is chosen.
 */
export function makeScope(
  connect: PveConnector,
  clock: Clock,
  identity: Identity,
  requestId: string,
  clusters: readonly string[] = [],
  personal = false,
  spans?: CallSpans,
): CallScope {
  const clients = new Map<string | undefined, PveClient>();
  let cluster: string | undefined;
  let named = false;
  const at = (name: string | undefined): PveClient => {
    let client = clients.get(name);
    if (!client) {
      const made = connect(name, identity);
      if ('refused' in made) throw new NoIdentity(made.refused);
      if ('error' in made) {
        throw new ToolFailure(
          'config',
          `This server's Proxmox connection is not configured: ${made.error}.`,
        );
      }
      client = made;
      // Where there are several clusters, each request's span says which one it went to.
      const to = clusters.length > 1 ? (name ?? clusters[0]) : undefined;
      if (spans) client.traceWith((method, path) => spans.request(method, path, to));
      clients.set(name, client);
    }
    return client;
  };
  return {
    ctx: {
      requestId,
      identity,
      clock,
      pve: () => at(cluster),
      clusters,
      get cluster() {
        return named ? (cluster ?? null) : null;
      },
      pveAt: (name) => at(name),
    },
    // Every cluster's exchanges, in the order the clients were made.
    upstream: () => [...clients.values()].flatMap((c) => c.calls),
    tokens: () =>
      personal
        ? [...new Set([...clients.values()].filter((c) => c.calls.length).map((c) => c.tokenId))]
        : [],
    onCluster(name, given) {
      // Never a request to one cluster and the rest of the call to another.
      if (clients.size && name !== cluster)
        throw new Error('the cluster is chosen before any request');
      cluster = name;
      named = given;
      // Before the policy, a resolve or an approval: nothing is read for someone who may not.
      if (personal) at(cluster);
    },
  };
}
