// Property-string formats of container options (pve-container LXC/Config.pm): rootfs and mp[n]
// mount points, net[n] (LXC's own NIC format: name=eth0,bridge=..,ip=..,gw=..), features,
// dev[n] and unused[n], written from the PVE 9.1.3 schema.
import type { PropertyStringFormat, PropSchema, SchemaType } from './schema-types.ts';

const opt = (type: SchemaType, extra: Omit<PropSchema, 'type'> = {}): PropSchema => ({
  type,
  optional: true,
  ...extra,
});

const MOUNT_OPTION = '(discard|lazytime|noatime|nodev|noexec|nosuid)';

const ROOTFS_KEYS = {
  volume: { type: 'string', defaultKey: true, format: 'pve-lxc-mp-string' },
  size: opt('string', { format: 'disk-size' }),
  acl: opt('boolean'),
  mountoptions: opt('string', { pattern: `(?:(?:${MOUNT_OPTION})(;(?:${MOUNT_OPTION}))*)` }),
  quota: opt('boolean'),
  replicate: opt('boolean'),
  ro: opt('boolean'),
  shared: opt('boolean'),
} as const satisfies Record<string, PropSchema>;

export const ROOTFS_FORMAT: PropertyStringFormat = { keys: ROOTFS_KEYS };

export const MOUNTPOINT_FORMAT: PropertyStringFormat = {
  keys: {
    ...ROOTFS_KEYS,
    backup: opt('boolean'),
    mp: { type: 'string', format: 'pve-lxc-mp-string' },
    keepattrs: opt('boolean'),
  },
};

export const LXC_NET_FORMAT: PropertyStringFormat = {
  keys: {
    name: { type: 'string', pattern: '[-_.\\w\\d]+' },
    bridge: opt('string', { pattern: '[-_.\\w\\d]+' }),
    firewall: opt('boolean'),
    gw: opt('string', { format: 'ipv4' }),
    gw6: opt('string', { format: 'ipv6' }),
    'host-managed': opt('boolean'),
    hwaddr: opt('string', { format: 'mac-addr' }),
    ip: opt('string', { format: 'pve-ipv4-config' }),
    ip6: opt('string', { format: 'pve-ipv6-config' }),
    link_down: opt('boolean'),
    mtu: opt('integer', { minimum: 64, maximum: 65535 }),
    rate: opt('number'),
    tag: opt('integer', { minimum: 1, maximum: 4094 }),
    trunks: opt('string', { pattern: '\\d+(?:;\\d+)*' }),
    type: opt('string', { enum: ['veth'] }),
  },
};

export const FEATURES_FORMAT: PropertyStringFormat = {
  keys: {
    force_rw_sys: opt('boolean'),
    fuse: opt('boolean'),
    keyctl: opt('boolean'),
    mknod: opt('boolean'),
    mount: opt('string', { pattern: '[a-zA-Z0-9_; ]+' }),
    nesting: opt('boolean'),
  },
};

export const DEV_FORMAT: PropertyStringFormat = {
  keys: {
    path: opt('string', { defaultKey: true, format: 'pve-lxc-dev-string' }),
    'deny-write': opt('boolean'),
    gid: opt('integer', { minimum: 0 }),
    mode: opt('string', { pattern: '0[0-7]{3}' }),
    uid: opt('integer', { minimum: 0 }),
  },
};

export const LXC_UNUSED_FORMAT: PropertyStringFormat = {
  keys: { volume: { type: 'string', defaultKey: true, format: 'pve-volume-id' } },
};
