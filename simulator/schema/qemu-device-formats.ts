// Inline property-string formats of POST /nodes/{node}/qemu other than drives (net, agent,
// memory, vga, ...), written from the PVE 9.1.3 schema. Keys not listed are rejected.
import type { KeySchema, PropertyStringFormat, PropSchema, SchemaType } from './schema-types.ts';

const opt = (type: SchemaType, extra: Omit<PropSchema, 'type'> = {}): PropSchema => ({
  type,
  optional: true,
  ...extra,
});

export const NIC_MODELS = [
  'e1000',
  'e1000-82540em',
  'e1000-82544gc',
  'e1000-82545em',
  'e1000e',
  'i82551',
  'i82557b',
  'i82559er',
  'ne2k_isa',
  'ne2k_pci',
  'pcnet',
  'rtl8139',
  'virtio',
  'vmxnet3',
] as const;

const ID_LIST = '\\d+(?:-\\d+)?(?:;\\d+(?:-\\d+)?)*';

/** `[model=]<enum>,bridge=..` plus the `<model>=<macaddr>` shorthand (keyAlias sets model). */
export const NET_FORMAT: PropertyStringFormat = {
  keys: {
    model: { type: 'string', defaultKey: true, enum: NIC_MODELS },
    bridge: opt('string', { format: 'pve-bridge-id' }),
    firewall: opt('boolean'),
    link_down: opt('boolean'),
    macaddr: opt('string', { format: 'mac-addr' }),
    mtu: opt('integer', { minimum: 1, maximum: 65520 }),
    queues: opt('integer', { minimum: 0, maximum: 64 }),
    rate: opt('number', { minimum: 0 }),
    tag: opt('integer', { minimum: 1, maximum: 4094 }),
    trunks: opt('string', { pattern: ID_LIST }),
    ...Object.fromEntries(
      NIC_MODELS.map((model): [string, KeySchema] => [
        model,
        { alias: 'macaddr', keyAlias: 'model' },
      ]),
    ),
  },
};

export const AGENT_FORMAT: PropertyStringFormat = {
  keys: {
    enabled: { type: 'boolean', defaultKey: true },
    'freeze-fs': opt('boolean'),
    'freeze-fs-on-backup': { alias: 'freeze-fs' },
    'guest-fsfreeze': { alias: 'freeze-fs' },
    fstrim_cloned_disks: opt('boolean'),
    type: opt('string', { enum: ['virtio', 'isa'] }),
  },
};

export const MEMORY_FORMAT: PropertyStringFormat = {
  keys: { current: { type: 'integer', defaultKey: true, minimum: 16 } },
};

export const VGA_FORMAT: PropertyStringFormat = {
  keys: {
    type: opt('string', {
      defaultKey: true,
      enum: [
        'cirrus',
        'qxl',
        'qxl2',
        'qxl3',
        'qxl4',
        'none',
        'serial0',
        'serial1',
        'serial2',
        'serial3',
        'std',
        'virtio',
        'virtio-gl',
        'vmware',
      ],
    }),
    clipboard: opt('string', { enum: ['vnc'] }),
    memory: opt('integer', { minimum: 4, maximum: 512 }),
  },
};

export const AUDIO_FORMAT: PropertyStringFormat = {
  keys: {
    device: { type: 'string', enum: ['ich9-intel-hda', 'intel-hda', 'AC97'] },
    driver: opt('string', { enum: ['spice', 'none'] }),
  },
};

export const MACHINE_FORMAT: PropertyStringFormat = {
  keys: {
    type: opt('string', {
      defaultKey: true,
      maxLength: 40,
      pattern: [
        '(pc|pc(-i440fx)?-\\d+(\\.\\d+)+(\\+pve\\d+)?(\\.pxe)?',
        'q35|pc-q35-\\d+(\\.\\d+)+(\\+pve\\d+)?(\\.pxe)?',
        'virt(?:-\\d+(\\.\\d+)+)?(\\+pve\\d+)?)',
      ].join('|'),
    }),
    'aw-bits': opt('number', { minimum: 32, maximum: 64 }),
    'enable-s3': opt('boolean'),
    'enable-s4': opt('boolean'),
    viommu: opt('string', { enum: ['intel', 'virtio'] }),
  },
};

export const IVSHMEM_FORMAT: PropertyStringFormat = {
  keys: {
    size: { type: 'integer', minimum: 1 },
    name: opt('string', { pattern: '[a-zA-Z0-9\\-]+' }),
  },
};

export const NUMA_FORMAT: PropertyStringFormat = {
  keys: {
    cpus: { type: 'string', pattern: ID_LIST },
    hostnodes: opt('string', { pattern: ID_LIST }),
    memory: opt('number'),
    policy: opt('string', { enum: ['preferred', 'bind', 'interleave'] }),
  },
};

export const SPICE_FORMAT: PropertyStringFormat = {
  keys: {
    foldersharing: opt('boolean'),
    videostreaming: opt('string', { enum: ['off', 'all', 'filter'] }),
  },
};

export const USB_FORMAT: PropertyStringFormat = {
  keys: {
    host: opt('string', {
      defaultKey: true,
      // vendor:product ids, a bus-port path, or 'spice' in any case (PVE's regex, group for group)
      pattern:
        '(?:(?:(?:(?:(0x)?([0-9A-Fa-f]{4}):(0x)?([0-9A-Fa-f]{4})))|(?:(?:(\\d+)\\-(\\d+(\\.\\d+)*)))|[Ss][Pp][Ii][Cc][Ee]))',
    }),
    mapping: opt('string', { format: 'pve-configid' }),
    usb3: opt('boolean'),
  },
};

export const VIRTIOFS_FORMAT: PropertyStringFormat = {
  keys: {
    dirid: { type: 'string', defaultKey: true, format: 'pve-configid' },
    cache: opt('string', { enum: ['auto', 'always', 'metadata', 'never'] }),
    'direct-io': opt('boolean'),
    'expose-acl': opt('boolean'),
    'expose-xattr': opt('boolean'),
  },
};
