// Parameters of PUT (synchronous) and POST (asynchronous) /nodes/{node}/qemu/{vmid}/config as in
// PVE 9.1.3: the same config options as create (json_config_properties with disk allocation),
// without create's archive/pool/start/storage/unique/..., plus delete, revert, force, digest,
// skiplock; POST adds background_delay and import-working-storage.
import { QEMU_CREATE_SCHEMA } from './qemu-create-schema.ts';
import { isAlias, type KeySchema, type SchemaType } from './schema-types.ts';

const CREATE_ONLY = [
  'archive',
  'bwlimit',
  'force',
  'ha-managed',
  'import-working-storage',
  'live-restore',
  'pool',
  'start',
  'storage',
  'unique',
];

const options = Object.fromEntries(
  Object.entries(QEMU_CREATE_SCHEMA).filter(([key]) => !CREATE_ONLY.includes(key)),
);

export const QEMU_UPDATE_SCHEMA: Readonly<Record<string, KeySchema>> = {
  ...options,
  skiplock: { type: 'boolean', optional: true },
  delete: { type: 'string', optional: true, format: 'pve-configid-list' },
  revert: { type: 'string', optional: true, format: 'pve-configid-list' },
  force: { type: 'boolean', optional: true, requires: 'delete' },
  digest: { type: 'string', optional: true, maxLength: 40 },
};

export const QEMU_UPDATE_ASYNC_SCHEMA: Readonly<Record<string, KeySchema>> = {
  ...QEMU_UPDATE_SCHEMA,
  background_delay: { type: 'integer', optional: true, minimum: 1, maximum: 30 },
  'import-working-storage': { type: 'string', optional: true, format: 'pve-storage-id' },
};

/** Config keys PVE writes itself (returned by GET config, never set through the API). */
const INTERNAL_TYPES: Readonly<Record<string, SchemaType>> = {
  meta: 'string',
  parent: 'string',
  snaptime: 'integer',
  vmstate: 'string',
  runningmachine: 'string',
  runningcpu: 'string',
  'running-nets-host-mtu': 'string',
};

/** The schema type of a VM config option (so GET config prints integers and 0/1 as numbers). */
export function qemuOptionType(key: string): SchemaType | undefined {
  const schema = options[key];
  if (schema !== undefined && !isAlias(schema)) return schema.type;
  return INTERNAL_TYPES[key];
}

/** option_exists: whether `delete`/`revert` may name this key. */
export function qemuOptionExists(key: string): boolean {
  return (
    (options[key] !== undefined && !['node', 'vmid'].includes(key)) ||
    INTERNAL_TYPES[key] !== undefined
  );
}
