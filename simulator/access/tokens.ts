// The simulator's API tokens. DEV-ONLY secrets: fixed so tests and local runs can use them;
// they grant nothing anywhere but this simulator and must never be used on a real Proxmox.

export const SIMULATOR_TOKENS = {
  /** Full rights, like a root@pam token without privilege separation. */
  admin: { id: 'root@pam!mcp', secret: '5e1c0d2a-6b7f-4c3e-9a8d-0f1e2d3c4b5a' },
  /** Read-only: VM.Audit and Sys.Audit on '/', so it lists but cannot create. */
  audit: { id: 'mcp@pve!audit', secret: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' },
  /** Storage only: Datastore.Audit on '/', so it sees storages but no guest (nor their jobs). */
  storage: { id: 'mcp@pve!storage', secret: '3d2c1b0a-9f8e-4d7c-b6a5-4e3f2a1b0c9d' },
} as const satisfies Record<string, { id: string; secret: string }>;

export interface Identity {
  /** USER@REALM!TOKENID, the "user" PVE reports for token-started tasks. */
  readonly tokenId: string;
  readonly user: string;
  readonly tokenName: string;
  readonly privileges: 'all' | ReadonlySet<string>;
}

const IDENTITIES: readonly (Identity & { readonly secret: string })[] = [
  {
    tokenId: SIMULATOR_TOKENS.admin.id,
    secret: SIMULATOR_TOKENS.admin.secret,
    user: 'root@pam',
    tokenName: 'mcp',
    privileges: 'all',
  },
  {
    tokenId: SIMULATOR_TOKENS.audit.id,
    secret: SIMULATOR_TOKENS.audit.secret,
    user: 'mcp@pve',
    tokenName: 'audit',
    privileges: new Set(['VM.Audit', 'Sys.Audit']),
  },
  {
    tokenId: SIMULATOR_TOKENS.storage.id,
    secret: SIMULATOR_TOKENS.storage.secret,
    user: 'mcp@pve',
    tokenName: 'storage',
    privileges: new Set(['Datastore.Audit']),
  },
];

export function findToken(tokenId: string): (Identity & { readonly secret: string }) | undefined {
  return IDENTITIES.find((identity) => identity.tokenId === tokenId);
}

/**
 * Whether the identity holds `privilege` on `path`. Both tokens' ACLs sit on '/' and propagate,
 * so the path does not change the answer; it is kept so callers read like RPCEnvironment::check.
 */
export function hasPrivilege(identity: Identity, _path: string, privilege: string): boolean {
  return identity.privileges === 'all' || identity.privileges.has(privilege);
}
