// People who act in Proxmox with tokens of their own (PVE_IDENTITIES projects): alice (group dev)
// and bob (group ops), signed in through the development identity provider for a file's tests,
// and which token a request reached the simulator with.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll } from 'vitest';
import { connectSignedIn } from './oauth';

/** The id of the API token a request the simulator logged was made with. */
export const tokenOf = (r: { headers: Record<string, string> }): string | undefined =>
  /^PVEAPIToken=([^=]+)=/.exec(r.headers.authorization ?? '')?.[1];

/** alice@example.com (group dev) and bob@example.com (group ops), signed in for the file. */
export function aliceAndBob(): { alice: Client; bob: Client } {
  const people = {} as { alice: Client; bob: Client };
  beforeAll(async () => {
    ({ client: people.alice } = await connectSignedIn('http', {
      user: 'alice@example.com',
      groups: 'dev',
    }));
    ({ client: people.bob } = await connectSignedIn('http', {
      user: 'bob@example.com',
      groups: 'ops',
    }));
  });
  afterAll(async () => {
    await people.alice?.close();
    await people.bob?.close();
  });
  return people;
}
