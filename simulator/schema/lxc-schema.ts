// Parameters of the container endpoints as in PVE 9.1.3: the config options shared by
// POST /nodes/{node}/lxc and PUT .../lxc/{vmid}/config, plus what each adds (ostemplate,
// password, storage, pool, start ... for create; delete, revert, digest for update).
import * as lxc from './lxc-formats.ts';
import type { KeySchema, PropSchema, SchemaType } from './schema-types.ts';

const opt = (type: SchemaType, extra: Omit<PropSchema, 'type'> = {}): PropSchema => ({
  type,
  optional: true,
  ...extra,
});
const bool = opt('boolean');

const CT_OSTYPES = [
  'debian',
  'devuan',
  'ubuntu',
  'centos',
  'fedora',
  'opensuse',
  'archlinux',
  'alpine',
  'gentoo',
  'nixos',
  'unmanaged',
];
const CT_LOCKS = [
  'backup',
  'create',
  'destroyed',
  'disk',
  'fstrim',
  'migrate',
  'mounted',
  'rollback',
  'snapshot',
  'snapshot-delete',
];
const CONTROL_CHARS_FREE = '[^\\x00-\\x08\\x10-\\x1F\\x7F]';

/** Indexed option families: name → [count, schema] (MAX_MOUNT_POINTS, MAX_LXC_NETWORKS, ...). */
const INDEXED: Readonly<Record<string, readonly [number, PropSchema]>> = {
  dev: [256, opt('string', { format: lxc.DEV_FORMAT })],
  mp: [256, opt('string', { format: lxc.MOUNTPOINT_FORMAT })],
  net: [32, opt('string', { format: lxc.LXC_NET_FORMAT })],
  unused: [256, opt('string', { format: lxc.LXC_UNUSED_FORMAT })],
};

const OPTIONS: Readonly<Record<string, PropSchema>> = {
  arch: opt('string', { enum: ['amd64', 'i386', 'arm64', 'armhf', 'riscv32', 'riscv64'] }),
  cmode: opt('string', { enum: ['shell', 'console', 'tty'] }),
  console: bool,
  cores: opt('integer', { minimum: 1, maximum: 8192 }),
  cpulimit: opt('number', { minimum: 0, maximum: 8192 }),
  cpuunits: opt('integer', { minimum: 0, maximum: 500000 }),
  debug: bool,
  description: opt('string', { maxLength: 8192 }),
  entrypoint: opt('string', { pattern: `${CONTROL_CHARS_FREE}+` }),
  env: opt('string', {
    pattern: `(?:\\w+=${CONTROL_CHARS_FREE}*)(?:\\0\\w+=${CONTROL_CHARS_FREE}*)*`,
  }),
  features: opt('string', { format: lxc.FEATURES_FORMAT }),
  hookscript: opt('string', { format: 'pve-volume-id' }),
  hostname: opt('string', { format: 'dns-name', maxLength: 255 }),
  lock: opt('string', { enum: CT_LOCKS }),
  memory: opt('integer', { minimum: 16 }),
  nameserver: opt('string', { format: 'lxc-ip-with-ll-iface-list' }),
  onboot: bool,
  ostype: opt('string', { enum: CT_OSTYPES }),
  protection: bool,
  rootfs: opt('string', { format: lxc.ROOTFS_FORMAT }),
  searchdomain: opt('string', { format: 'dns-name-list' }),
  startup: opt('string', { format: 'pve-startup-order' }),
  swap: opt('integer', { minimum: 0 }),
  tags: opt('string', { format: 'pve-tag-list' }),
  template: bool,
  timezone: opt('string', { format: 'pve-ct-timezone' }),
  tty: opt('integer', { minimum: 0, maximum: 6 }),
  unprivileged: bool,
};

const GUEST = {
  node: { type: 'string', format: 'pve-node' },
  vmid: { type: 'integer', format: 'pve-vmid', minimum: 100, maximum: 999999999 },
} as const satisfies Record<string, PropSchema>;

function expand(single: Readonly<Record<string, KeySchema>>): Readonly<Record<string, KeySchema>> {
  const schema: Record<string, KeySchema> = { ...single };
  for (const [family, [count, prop]] of Object.entries(INDEXED)) {
    for (let i = 0; i < count; i++) schema[`${family}${i}`] = prop;
  }
  return schema;
}

export const LXC_CREATE_SCHEMA = expand({
  ...OPTIONS,
  ...GUEST,
  ostemplate: { type: 'string', maxLength: 255 },
  password: opt('string', { minLength: 5 }),
  'ssh-public-keys': opt('string'),
  storage: opt('string', { format: 'pve-storage-id' }),
  pool: opt('string', { format: 'pve-poolid' }),
  start: bool,
  restore: bool,
  unique: opt('boolean', { requires: 'restore' }),
  force: bool,
  'ignore-unpack-errors': bool,
  bwlimit: opt('number', { minimum: 0 }),
  'ha-managed': bool,
});

export const LXC_UPDATE_SCHEMA = expand({
  ...OPTIONS,
  ...GUEST,
  delete: opt('string', { format: 'pve-configid-list' }),
  revert: opt('string', { format: 'pve-configid-list' }),
  digest: opt('string', { maxLength: 40 }),
});

/** Config options of a container (what GET config may hold), with their schema type. */
export function lxcOptionType(key: string): SchemaType | undefined {
  const family = /^([a-z]+)\d+$/.exec(key)?.[1];
  if (family !== undefined && INDEXED[family] !== undefined) return 'string';
  return OPTIONS[key]?.type;
}
