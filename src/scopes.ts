// The OAuth scopes a person grants a client at consent: each tool needs exactly one. A token
// carries the scopes of its grant; tools/list shows only the tools in them, and a call outside
// them is refused before anything is sent (../calls/scope-gate.ts). The policy still decides
// every call inside them, and may name a scope as a principal (`scope:pve:operate`).

export const SCOPES = ['pve:read', 'pve:operate', 'pve:provision', 'pve:guest', 'pve:raw'] as const;

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
      'Start, stop, reboot and suspend guests; take, roll back and delete snapshots; back up.',
    preTicked: true,
  },
  'pve:provision': {
    label: 'Provision',
    allows: 'Create, clone, reconfigure, resize, migrate, restore and delete guests.',
    preTicked: true,
  },
  'pve:guest': {
    label: 'Inside guests',
    allows: 'Run commands and read files inside VMs through the QEMU guest agent.',
    preTicked: false,
  },
  'pve:raw': {
    label: 'Raw API',
    allows: 'Send any request to the Proxmox API path the policy allows (pve_api_request).',
    preTicked: false,
  },
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * What the consent page ticks for a request: the scopes it asked for that are ticked by default,
 * or, when it asked for none of ours, every scope ticked by default. Commands inside guests and
 * the raw API are never ticked for the person: they tick them themselves.
 */
export function preTicked(requested: readonly string[]): Scope[] {
  const asked = SCOPES.filter((s) => requested.includes(s));
  return (asked.length ? asked : SCOPES).filter((s) => SCOPE_INFO[s].preTicked);
}
