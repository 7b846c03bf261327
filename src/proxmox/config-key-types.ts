// The shapes of the config key tables (./config-key-tables.ts) and of their lookup
// (./config-keys.ts), apart from both, so neither imports the other for its types.

import type { TextResult } from './formats';
import type { OptionResult } from './option-rules';

export type GuestKind = 'qemu' | 'lxc';

/** How one config key's value is checked and what is sent. */
export type ConfigRule =
  | { kind: 'boolean' }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'number'; min: number; max: number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'text'; parse: (v: string) => TextResult; send?: (canonical: string) => string }
  | { kind: 'property'; parse: (v: string) => OptionResult; fields: readonly string[] };

export interface KeyTable {
  /** Keys we accept: plain names, and `name[n]` for indexed ones (net0, net1, ...). */
  accepted: Readonly<Record<string, ConfigRule>>;
  /** How many of each indexed key Proxmox has (net: 32 → net0 to net31). */
  counts: Readonly<Record<string, number>>;
  /** Keys Proxmox defines that we refuse, with the reason; `name[n]` for indexed ones. */
  refused: Readonly<Record<string, string>>;
}
