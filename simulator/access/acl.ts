// Who may do what, as pve-access-control decides it: the built-in roles (made from PVE 9's
// privilege groups), the simulator's users, their groups and API tokens, and the ACL tree
// (path, role, propagate) that grants roles to users, groups and tokens. A token with privilege
// separation holds the intersection of its own ACLs with its user's; without, its user's.
// Effective privileges on a path follow AccessControl::roles and RPCEnvironment's
// compile_acl_path: walking from '/', a deeper ACL entry for the same subject replaces what was
// inherited (for a user, its own entries over its groups'; a token reads its own alone); an entry applies below
// its path only when it propagates; NoAccess wins; a guest in a pool also gets the roles held on
// /pool/<pool> that its own path did not set. DEV-ONLY data: none of it exists on a real Proxmox.

/** PVE 9's privileges by category and level (pve-access-control $privgroups). */
const PRIV_GROUPS: Readonly<
  Record<string, Readonly<Record<'root' | 'admin' | 'user' | 'audit', readonly string[]>>>
> = {
  VM: {
    root: [],
    admin: [
      'VM.Config.Disk',
      'VM.Config.CPU',
      'VM.Config.Memory',
      'VM.Config.Network',
      'VM.Config.HWType',
      'VM.Config.Options',
      'VM.Allocate',
      'VM.Clone',
      'VM.GuestAgent.Unrestricted',
      'VM.Migrate',
      'VM.Replicate',
      'VM.Snapshot',
      'VM.Snapshot.Rollback',
    ],
    user: [
      'VM.Config.CDROM',
      'VM.Config.Cloudinit',
      'VM.Console',
      'VM.Backup',
      'VM.GuestAgent.FileRead',
      'VM.GuestAgent.FileSystemMgmt',
      'VM.GuestAgent.FileWrite',
      'VM.PowerMgmt',
    ],
    audit: ['VM.Audit', 'VM.GuestAgent.Audit'],
  },
  Sys: {
    root: ['Sys.PowerMgmt', 'Sys.Modify', 'Sys.Incoming', 'Sys.AccessNetwork'],
    admin: ['Sys.Console', 'Sys.Syslog'],
    user: [],
    audit: ['Sys.Audit'],
  },
  Datastore: {
    root: [],
    admin: ['Datastore.Allocate', 'Datastore.AllocateTemplate'],
    user: ['Datastore.AllocateSpace'],
    audit: ['Datastore.Audit'],
  },
  SDN: { root: [], admin: ['SDN.Allocate', 'SDN.Audit'], user: ['SDN.Use'], audit: ['SDN.Audit'] },
  User: {
    root: ['Realm.Allocate'],
    admin: ['User.Modify', 'Group.Allocate', 'Realm.AllocateUser'],
    user: [],
    audit: [],
  },
  Pool: { root: [], admin: ['Pool.Allocate'], user: ['Pool.Audit'], audit: ['Pool.Audit'] },
  Mapping: { root: [], admin: ['Mapping.Modify'], user: ['Mapping.Use'], audit: ['Mapping.Audit'] },
};

/** Every privilege PVE 9 knows, sorted. */
export const ALL_PRIVILEGES: readonly string[] = [
  ...new Set([
    'Permissions.Modify',
    ...Object.values(PRIV_GROUPS).flatMap((g) => [...g.root, ...g.admin, ...g.user, ...g.audit]),
  ]),
].sort();

/** The built-in roles as create_roles() makes them, plus two of the simulator's own. */
export const ROLES: Readonly<Record<string, ReadonlySet<string>>> = (() => {
  const roles: Record<string, Set<string>> = {
    NoAccess: new Set(),
    Administrator: new Set(ALL_PRIVILEGES),
    PVEAdmin: new Set(),
    PVEAuditor: new Set(),
    PVETemplateUser: new Set(['VM.Clone', 'VM.Audit']),
    // The simulator's narrow tokens (see tokens.ts).
    SimAudit: new Set(['VM.Audit', 'Sys.Audit']),
    SimStorage: new Set(['Datastore.Audit']),
  };
  for (const [category, g] of Object.entries(PRIV_GROUPS)) {
    const admin = new Set<string>();
    roles[`PVE${category}Admin`] = admin;
    for (const priv of [...g.admin, ...g.user, ...g.audit]) {
      admin.add(priv);
      roles.PVEAdmin!.add(priv);
    }
    if (g.user.length) roles[`PVE${category}User`] = new Set([...g.user, ...g.audit]);
    for (const priv of g.audit) roles.PVEAuditor!.add(priv);
  }
  roles.PVEAdmin!.delete('Mapping.Modify');
  return roles;
})();

/** One ACL entry: `role` on `path` for a user, a group or a token. */
export interface AclEntry {
  readonly path: string;
  readonly role: string;
  readonly propagate: boolean;
  readonly user?: string;
  readonly group?: string;
  readonly token?: string;
}

/** The users (user.cfg's user lines); their tokens are in tokens.ts. */
export const USERS: readonly string[] = [
  'root@pam',
  'mcp@pve',
  'alice@pve',
  'bob@pve',
  'carol@pve',
  'dave@pve',
];

/** The groups and their members (user.cfg's group lines). */
const GROUPS: Readonly<Record<string, readonly string[]>> = {
  ops: ['bob@pve'],
};

/**
 * The ACL tree (user.cfg's acl lines), a team's:
 * - mcp@pve may do anything; its tokens only what their own entries grant (privilege separation).
 * - alice may administer the lab pool's guests, and nothing else; her token only operates them.
 * - bob is in group ops, which administers every guest and uses the storages; his token operates
 *   every guest.
 * - carol may administer VM 104 alone (not below it); her token has no privilege separation, so
 *   it is carol.
 * - dave holds nothing himself, so his token, though granted much, holds nothing: Proxmox
 *   answers it with empty lists and 403s.
 */
export const ACL: readonly AclEntry[] = [
  { path: '/', user: 'mcp@pve', role: 'Administrator', propagate: true },
  { path: '/', token: 'mcp@pve!audit', role: 'SimAudit', propagate: true },
  { path: '/', token: 'mcp@pve!storage', role: 'SimStorage', propagate: true },
  { path: '/pool/lab', user: 'alice@pve', role: 'PVEVMAdmin', propagate: true },
  { path: '/pool/lab', token: 'alice@pve!mcp', role: 'PVEVMUser', propagate: true },
  { path: '/', group: 'ops', role: 'PVEVMAdmin', propagate: true },
  { path: '/storage', group: 'ops', role: 'PVEDatastoreUser', propagate: true },
  { path: '/', token: 'bob@pve!mcp', role: 'PVEVMUser', propagate: true },
  { path: '/vms/104', user: 'carol@pve', role: 'PVEVMAdmin', propagate: false },
  { path: '/', token: 'dave@pve!mcp', role: 'PVEVMAdmin', propagate: true },
];

/** Whose ACL entries: a user (with their groups), or a token (its own entries only). */
export type Subject = { readonly user: string } | { readonly token: string };

/**
 * The roles `subject` holds on `path` from the ACL tree alone, each with whether it propagated
 * there (AccessControl::roles).
 */
export function rolesAt(subject: Subject, path: string): Map<string, boolean> {
  const parts = path === '/' ? [''] : path.split('/');
  let roles = new Map<string, boolean>();
  let at = '';
  parts.forEach((part, i) => {
    at = i === 0 ? '/' : `${at === '/' ? '' : at}/${part}`;
    const final = i === parts.length - 1;
    const here = ACL.filter((entry) => entry.path === at && (final || entry.propagate));
    const level =
      'token' in subject
        ? [here.filter((e) => e.token === subject.token)]
        : [
            here.filter((e) => e.user === subject.user),
            here.filter((e) => e.group !== undefined && GROUPS[e.group]?.includes(subject.user)),
          ];
    // The first kind with an entry here replaces what was inherited (users' over groups').
    const found = level.find((entries) => entries.length > 0);
    if (found) roles = new Map(found.map((e) => [e.role, e.propagate]));
  });
  return roles.has('NoAccess') ? new Map([['NoAccess', roles.get('NoAccess')!]]) : roles;
}

/**
 * The privileges `subject` holds on `path`, each with whether it propagates (set by a propagating
 * entry), the roles a guest's pool grants included, never propagating (compile_acl_path):
 * `poolOf` says which pool a guest is in.
 */
export function privilegesAt(
  subject: Subject,
  path: string,
  poolOf: (vmid: number) => string | undefined,
): Map<string, boolean> {
  let roles = rolesAt(subject, path);
  const vm = /^\/vms\/(\d+)$/.exec(path);
  const pool = vm ? poolOf(Number(vm[1])) : undefined;
  if (pool !== undefined && !roles.has('NoAccess')) {
    const pooled = rolesAt(subject, `/pool/${pool}`);
    if (pooled.has('NoAccess')) roles = new Map([['NoAccess', false]]);
    else for (const role of pooled.keys()) if (!roles.has(role)) roles.set(role, false);
  }
  const privileges = new Map<string, boolean>();
  for (const [role, propagate] of roles)
    for (const priv of ROLES[role] ?? [])
      privileges.set(priv, (privileges.get(priv) ?? false) || propagate);
  return privileges;
}

/** Every path an ACL entry names (for /access/permissions without a path). */
export function aclPaths(): string[] {
  return [...new Set(ACL.map((entry) => entry.path))];
}
