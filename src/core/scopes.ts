// The OAuth scopes a person grants a client at consent: each tool needs exactly one. A token
// carries the scopes of its grant; tools/list shows only the tools in them, and a call outside
// them is refused before anything is sent (../calls/scope-gate.ts). The policy still decides
// every call inside them, and may name a scope as a principal (`scope:pve:operate`).

export const SCOPES = ['pve:read', 'pve:operate', 'pve:provision', 'pve:guest', 'pve:raw'] as const;

/**
 * The scope a token must carry to change the policy (the policy API), and to read it there.
 * MCP clients never need it; `npm run token -- <user> '' policy:edit` and a CI client ask for it.
 * Never ticked for anyone.
 */
export const POLICY_EDIT_SCOPE = 'policy:edit';

/**
 * The scope a token must carry to read the policy API (versions, checks, replays, the shadow)
 * without changing anything: a CI job that only replays. `policy:edit` includes it. An MCP
 * client's token has neither, so an AI client cannot run drafts over other people's calls.
 */
export const POLICY_READ_SCOPE = 'policy:read';

/** The policy API's scopes, outside the tools' ones: never ticked, never a tool's. */
export const POLICY_SCOPES: readonly string[] = [POLICY_READ_SCOPE, POLICY_EDIT_SCOPE];

export type Scope = (typeof SCOPES)[number];

export interface ScopeInfo {
  /** A few words, for the consent page and /admin. */
  label: string;
  /** One line on what it lets a client do. */
  allows: string;
  /** Ticked on the consent page when the client asks for it, or asks for none of ours. */
  preTicked: boolean;
}

export const SCOPE_INFO: Readonly<Record<Scope, ScopeInfo>> = {
  'pve:read': {
    label: 'Read',
    allows: 'See nodes, guests, configurations, storage, backups, snapshots and tasks.',
    preTicked: true,
  },
  'pve:operate': {
    label: 'Operate',
    allows:
      'Start, stop, reboot and suspend guests; take, roll back and delete snapshots; back up and delete backups.',
    preTicked: true,
  },
  'pve:provision': {
    label: 'Provision',
    allows:
      "Create, clone, reconfigure, resize, migrate, restore and delete guests, including a guest's cloud-init user, password and SSH keys (a way in).",
    preTicked: true,
  },
  'pve:guest': {
    label: 'Inside guests',
    allows:
      'Run commands, read files and see the OS and file systems inside VMs through the QEMU guest agent.',
    preTicked: false,
  },
  'pve:raw': {
    label: 'Raw API',
    allows: 'Send any request to the Proxmox API path the policy allows (pve_api_request).',
    preTicked: false,
  },
};

/** What a client gets when it asks for nothing in particular (and what a 401 tells it to ask for). */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES.filter((s) => SCOPE_INFO[s].preTicked);

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * What the consent page ticks for a request: the scopes it asked for that are ticked by default,
 * or, when it asked for none of this server's scopes, every scope ticked by default. Commands
 * inside guests, the raw API and policy changes are never ticked for the person: they tick them.
 */
export function preTicked(requested: readonly string[]): Scope[] {
  const asked = SCOPES.filter((s) => requested.includes(s));
  const askedAny = asked.length > 0 || POLICY_SCOPES.some((s) => requested.includes(s));
  return (askedAny ? asked : SCOPES).filter((s) => SCOPE_INFO[s].preTicked);
}
