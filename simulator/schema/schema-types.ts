// Types for the simulator's own parameter schemas: a small subset of pve-common's JSONSchema
// (string/integer/number/boolean properties, enum, pattern, ranges, named formats and
// comma-separated property strings), enough to validate like PVE and fail with its texts.

export type SchemaType = 'string' | 'integer' | 'number' | 'boolean' | 'array';

export interface PropSchema {
  readonly type: SchemaType;
  readonly optional?: boolean;
  readonly enum?: readonly string[];
  /** Perl regex source, applied as m/^PATTERN$/ exactly like pve-common (no group around it). */
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  /** A registered format name (e.g. 'pve-vmid', 'pve-tag-list') or an inline property string. */
  readonly format?: string | PropertyStringFormat;
  /** Another key that must be present when this one is (JSONSchema 'requires'). */
  readonly requires?: string;
  /** In a property string, the key a bare value (without `key=`) is assigned to. */
  readonly defaultKey?: boolean;
  /** type 'array': the schema each element is checked against (path `key[i]`). */
  readonly items?: PropSchema;
}

/** `volume` → `file`, or `virtio=MAC` → `macaddr` with `model=virtio` (keyAlias). */
export interface AliasSchema {
  readonly alias: string;
  readonly keyAlias?: string;
}

export type KeySchema = PropSchema | AliasSchema;

export interface PropertyStringFormat {
  readonly keys: Readonly<Record<string, KeySchema>>;
  /** Runs on the parsed hash after key checks, like a pve-common format validator; throws to fail. */
  readonly validate?: (parsed: Readonly<Record<string, string>>) => void;
}

/**
 * A decoded request parameter. Form bodies give strings, `null` (a key without `=value`) or
 * arrays (a repeated key); JSON bodies may also give numbers, booleans and objects.
 */
export type ParamValue =
  | string
  | number
  | boolean
  | null
  | readonly ParamValue[]
  | { readonly [key: string]: ParamValue };

export type Params = Record<string, ParamValue | undefined>;

/** Parameter errors keyed by parameter path, as in PVE's `errors` object. */
export type ParamErrors = Record<string, string>;

export function isAlias(schema: KeySchema): schema is AliasSchema {
  return 'alias' in schema;
}

/** A message thrown the way Perl code `die`s with a newline-terminated string. */
export class PveDie extends Error {}
