// The simulator's API tokens and what each may do (the ACLs are in ./acl.ts). DEV-ONLY secrets:
// fixed so tests and local runs can use them; they grant nothing anywhere but this simulator and
// must never be used on a real Proxmox.
import { ALL_PRIVILEGES, privilegesAt } from './acl.ts';

export const SIMULATOR_TOKENS = {
  /** Full rights, like a root@pam token without privilege separation. */
  admin: { id: 'root@pam!mcp', secret: '5e1c0d2a-6b7f-4c3e-9a8d-0f1e2d3c4b5a' },
  /** Read-only: VM.Audit and Sys.Audit on '/', so it lists but cannot create. */
  audit: { id: 'mcp@pve!audit', secret: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' },
  /** Storage only: Datastore.Audit on '/', so it sees storages but no guest (nor their jobs). */
  storage: { id: 'mcp@pve!storage', secret: '3d2c1b0a-9f8e-4d7c-b6a5-4e3f2a1b0c9d' },
  /** People's tokens (acl.ts): alice operates the lab pool's guests and sees no other. */
  alice: { id: 'alice@pve!mcp', secret: '7a1f3e5c-2b4d-4c6e-8f0a-1b3c5d7e9f2a' },
  /** bob (group ops) operates every guest. */
  bob: { id: 'bob@pve!mcp', secret: '4c6e8a0b-1d3f-4a5c-9e7b-2d4f6a8c0e1b' },
  /** Without privilege separation, so carol herself: VM 104 alone. */
  carol: { id: 'carol@pve!mcp', secret: '8e0a2c4d-6f1b-4d3e-a5c7-9b1d3f5a7c2e' },
  /** Granted much, but dave holds nothing: empty lists and 403s. */
  dave: { id: 'dave@pve!mcp', secret: '2f4a6c8e-0b1d-4e3f-9a5c-7e9b1d3f5a6c' },
} as const satisfies Record<string, { id: string; secret: string }>;

export interface Identity {
  /** USER@REALM!TOKENID, the "user" PVE reports for token-started tasks. */
  readonly tokenId: string;
  readonly user: string;
  readonly tokenName: string;
  /** Privilege separation: the token holds what its own ACLs and its user's both grant. */
  readonly privsep: boolean;
  /** The pool a guest is in (ACLs on /pool/<pool> reach its guests); set per request. */
  readonly poolOf?: (vmid: number) => string | undefined;
}

const IDENTITIES: readonly (Identity & { readonly secret: string })[] = [
  {
    tokenId: SIMULATOR_TOKENS.admin.id,
    secret: SIMULATOR_TOKENS.admin.secret,
    user: 'root@pam',
    tokenName: 'mcp',
    privsep: false,
  },
  {
    tokenId: SIMULATOR_TOKENS.audit.id,
    secret: SIMULATOR_TOKENS.audit.secret,
    user: 'mcp@pve',
    tokenName: 'audit',
    privsep: true,
  },
  {
    tokenId: SIMULATOR_TOKENS.storage.id,
    secret: SIMULATOR_TOKENS.storage.secret,
    user: 'mcp@pve',
    tokenName: 'storage',
    privsep: true,
  },
  {
    tokenId: SIMULATOR_TOKENS.alice.id,
    secret: SIMULATOR_TOKENS.alice.secret,
    user: 'alice@pve',
    tokenName: 'mcp',
    privsep: true,
  },
  {
    tokenId: SIMULATOR_TOKENS.bob.id,
    secret: SIMULATOR_TOKENS.bob.secret,
    user: 'bob@pve',
    tokenName: 'mcp',
    privsep: true,
  },
  {
    tokenId: SIMULATOR_TOKENS.dave.id,
    secret: SIMULATOR_TOKENS.dave.secret,
    user: 'dave@pve',
    tokenName: 'mcp',
    privsep: true,
  },
  {
    tokenId: SIMULATOR_TOKENS.carol.id,
    secret: SIMULATOR_TOKENS.carol.secret,
    user: 'carol@pve',
    tokenName: 'mcp',
    privsep: false,
  },
];

export function findToken(tokenId: string): (Identity & { readonly secret: string }) | undefined {
  return IDENTITIES.find((identity) => identity.tokenId === tokenId);
}

/**
 * The privileges a token holds on `path` (RPCEnvironment::permissions): root@pam's token without
 * privilege separation, all; another without, its user's; one with, those its own ACLs and its
 * user's both grant.
 */
export function privilegesOf(identity: Identity, path: string): ReadonlyMap<string, boolean> {
  if (identity.user === 'root@pam' && !identity.privsep)
    return new Map(ALL_PRIVILEGES.map((priv) => [priv, true]));
  const poolOf = identity.poolOf ?? (() => undefined);
  const user = privilegesAt({ user: identity.user }, path, poolOf);
  if (!identity.privsep) return user;
  const token = privilegesAt({ token: identity.tokenId }, path, poolOf);
  // Both hold it; it propagates where both do.
  return new Map(
    [...token].flatMap(([priv, p]) => (user.has(priv) ? [[priv, p && user.get(priv)!]] : [])),
  );
}

/** Whether the token holds `privilege` on `path` (RPCEnvironment::check, without raising). */
export function hasPrivilege(identity: Identity, path: string, privilege: string): boolean {
  return privilegesOf(identity, path).has(privilege);
}
