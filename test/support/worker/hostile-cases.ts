// Hostile-input rows for the guest writes: the path tricks, ranges and types every one gets, and
// per part 2 tool the smuggling its own arguments invite (config keys and property strings, raw
// API paths, shrinking resizes). A row names the field its error must name, or `null` with the
// kind for a refusal that needs a look at the guest (a shrink, another guest's volume). Last, for
// every object and property-string argument, keys named like members of every object.

export type HostileRow = [
  tool: string,
  label: string,
  args: Record<string, unknown>,
  field: string,
];
export type OpsRow = [
  tool: string,
  label: string,
  args: Record<string, unknown>,
  field: string | null,
];

/** Path tricks, ranges, types and smuggling every guest write gets (each must name its field). */
export function guestWriteCases(tool: string, base: Record<string, unknown>): HostileRow[] {
  const g = { node: 'pve1', vmid: 100, ...base, confirm: true };
  return [
    [tool, 'node path traversal', { ...g, node: '../../access/users' }, 'node'],
    [tool, 'node with a slash', { ...g, node: 'pve1/qemu/100' }, 'node'],
    [tool, 'node percent-encoded', { ...g, node: '%2e%2e%2f' }, 'node'],
    [tool, 'node with a query', { ...g, node: 'pve1?vmid=101' }, 'node'],
    [tool, 'node named localhost (not judged by name)', { ...g, node: 'localhost' }, 'node'],
    [tool, 'vmid below range', { ...g, vmid: 99 }, 'vmid'],
    [tool, 'vmid above range', { ...g, vmid: 1_000_000_000 }, 'vmid'],
    [tool, 'vmid as a string', { ...g, vmid: '100' }, 'vmid'],
    [tool, 'vmid fractional', { ...g, vmid: 100.5 }, 'vmid'],
    [tool, 'vm_type not qemu or lxc', { ...g, vm_type: 'openvz' }, 'vm_type'],
    [tool, 'vm_type smuggling a path', { ...g, vm_type: 'qemu/100/status/stop' }, 'vm_type'],
    [tool, 'an argument PLG does not have (skiplock)', { ...g, skiplock: true }, 'skiplock'],
    [tool, 'confirm as a string', { ...g, confirm: 'yes' }, 'confirm'],
    [tool, 'timeout_s above 120', { ...g, wait: true, timeout_s: 600 }, 'timeout_s'],
  ];
}

const PRIVATE_KEY = '-----BEGIN OPENSSH PRIVATE KEY-----';
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b';
const TEMPLATE = 'local:vztmpl/debian-13-standard_13.1-2_amd64.tar.zst';

const rows = (
  tool: string,
  base: Record<string, unknown>,
  list: [string, Record<string, unknown>, string | null][],
): OpsRow[] =>
  list.map(([label, args, field]) => [tool, label, { ...base, confirm: true, ...args }, field]);

const CLONE = rows('pve_clone_vm', { node: 'pve1', source_vmid: 9000 }, [
  ['source_vmid below range', { source_vmid: 99 }, 'source_vmid'],
  ['newid as a string', { newid: '106' }, 'newid'],
  ['name smuggling a parameter', { name: 'x&start=1' }, 'name'],
  ['target path traversal', { target: '../pve2' }, 'target'],
  ['target named localhost (the source node, to Proxmox)', { target: 'localhost' }, 'target'],
  ['storage with a slash', { storage: 'local/../x' }, 'storage'],
  ['pool with a space', { pool: 'my pool' }, 'pool'],
  ['ciuser smuggling a command', { ciuser: 'root;reboot' }, 'ciuser'],
  ['cipassword with a line break', { cipassword: 'secret\nciuser=root' }, 'cipassword'],
  ['sshkeys holding a private key', { sshkeys: PRIVATE_KEY }, 'sshkeys'],
  ['sshkeys smuggling a parameter on a second line', { sshkeys: `${KEY}\n&start=1` }, 'sshkeys'],
  ['ipconfig0 smuggling a key', { ipconfig0: 'ip=dhcp,bridge=vmbr9' }, 'ipconfig0'],
  ['ipconfig0 smuggling a parameter', { ipconfig0: 'ip=10.0.0.5/24&start=1' }, 'ipconfig0'],
  ['nameserver not an address', { nameserver: 'dns.example.com' }, 'nameserver'],
  ['searchdomain not a domain', { searchdomain: 'exa_mple.com' }, 'searchdomain'],
  ['net0 smuggling a key', { net0: 'virtio,bridge=vmbr0,hookscript=x' }, 'net0'],
  ['resize shrinking by a negative size', { resize: '-5G' }, 'resize'],
  ['resize without a unit (bytes)', { resize: '10' }, 'resize'],
  ['resize_disk smuggling a path', { resize: '+1G', resize_disk: 'scsi0/../x' }, 'resize_disk'],
  ['cores zero', { cores: 0 }, 'cores'],
  ['an argument it does not take (args)', { args: '-drive file=/dev/sda' }, 'args'],
  ['a resize that would shrink the disk', { resize: '1G' }, null],
  ['a linked clone of a VM that is not a template', { source_vmid: 100, full: false }, null],
]);

const LXC = rows('pve_create_lxc', { node: 'pve1', ostemplate: TEMPLATE }, [
  ['ostemplate an ISO', { ostemplate: 'local:iso/debian.iso' }, 'ostemplate'],
  ['ostemplate a host path', { ostemplate: '/var/lib/vz/template/cache/x.tar.zst' }, 'ostemplate'],
  ['ostemplate path traversal', { ostemplate: 'local:vztmpl/../../etc/x.tar.gz' }, 'ostemplate'],
  ['net0 written as for a VM', { net0: 'virtio,bridge=vmbr0' }, 'net0'],
  ['net0 smuggling a key', { net0: 'name=eth0,bridge=vmbr0,hookscript=x' }, 'net0'],
  ['net0 address without a prefix', { net0: 'name=eth0,ip=10.0.0.5' }, 'net0'],
  ['rootfs a host path (bind mount)', { rootfs: '/var/lib/secrets' }, 'rootfs'],
  ['rootfs path traversal', { rootfs: 'local:images/../../etc' }, 'rootfs'],
  ['rootfs smuggling a mount path', { rootfs: 'local-lvm:8,mp=/host' }, 'rootfs'],
  ['password too short', { password: 'abc' }, 'password'],
  ['password with a line break', { password: 'secret1\nstart=1' }, 'password'],
  ['ssh_public_keys not a key', { ssh_public_keys: 'hello' }, 'ssh_public_keys'],
  ['unprivileged as a string', { unprivileged: 'false' }, 'unprivileged'],
  ['hostname with an underscore', { hostname: 'dns_02' }, 'hostname'],
  ['an argument it does not take (features)', { features: 'nesting=1' }, 'features'],
]);

const DELETE = [
  ...guestWriteCases('pve_delete_vm', {}),
  ...rows('pve_delete_vm', { node: 'pve1', vmid: 100 }, [
    ['purge as a string', { purge: 'yes' }, 'purge'],
    [
      'destroy_unreferenced_disks as a number',
      { destroy_unreferenced_disks: 1 },
      'destroy_unreferenced_disks',
    ],
    ['force (PVE destroys running containers with it)', { force: true }, 'force'],
    ['a running VM', { vmid: 101 }, null],
    ['a protected VM', { vmid: 102 }, null],
  ]),
];

const RESIZE = [
  ...guestWriteCases('pve_resize_disk', { disk: 'scsi0', size: '+1G' }),
  ...rows('pve_resize_disk', { node: 'pve1', vmid: 100, disk: 'scsi0' }, [
    ['disk path traversal', { disk: '../scsi0', size: '+1G' }, 'disk'],
    ['disk smuggling a key', { disk: 'scsi0,size=1T', size: '+1G' }, 'disk'],
    ['disk a passthrough device', { disk: 'hostpci0', size: '+1G' }, 'disk'],
    ['size negative (a shrink)', { size: '-10G' }, 'size'],
    ['size without a unit (bytes)', { size: '10' }, 'size'],
    ['size with a wrong unit', { size: '+10GB' }, 'size'],
    ['size smuggling a parameter', { size: '10G&skiplock=1' }, 'size'],
    ['size zero', { size: '+0G' }, 'size'],
    ['an absolute size that would shrink the disk', { size: '16G' }, null],
  ]),
];

const CONFIG = [
  ...guestWriteCases('pve_set_vm_config', { config: { memory: 2048 } }),
  ...rows('pve_set_vm_config', { node: 'pve1', vmid: 100 }, [
    [
      'config.args (raw QEMU arguments)',
      { config: { args: '-drive file=/dev/sda' } },
      'config.args',
    ],
    ['config.hookscript', { config: { hookscript: 'local:snippets/x.sh' } }, 'config.hookscript'],
    [
      'config.hostpci0 (PCI passthrough)',
      { config: { hostpci0: '0000:01:00.0' } },
      'config.hostpci0',
    ],
    ['config.usb0 (USB passthrough)', { config: { usb0: 'host=1234:5678' } }, 'config.usb0'],
    ['config.lock', { config: { lock: 'backup' } }, 'config.lock'],
    ['config.unused0', { config: { unused0: 'local-lvm:vm-101-disk-0' } }, 'config.unused0'],
    [
      'config.net0 smuggling a key',
      { config: { net0: 'virtio,bridge=vmbr0,foo=bar' } },
      'config.net0',
    ],
    [
      'config.net0 smuggling a parameter',
      { config: { net0: 'virtio,bridge=vmbr0&args=-x' } },
      'config.net0',
    ],
    ['config.scsi1 a host block device', { config: { scsi1: '/dev/sda' } }, 'config.scsi1'],
    [
      'config.scsi1 importing a host file',
      { config: { scsi1: 'local-lvm:0,import-from=/etc/shadow' } },
      'config.scsi1',
    ],
    [
      'config.memory as a property string',
      { config: { memory: '2048,hotplug=1' } },
      'config.memory',
    ],
    [
      'config.sshkeys holding a private key',
      { config: { sshkeys: PRIVATE_KEY } },
      'config.sshkeys',
    ],
    [
      'config.description with control characters',
      { config: { description: 'x\u001b[2J' } },
      'config.description',
    ],
    ['config value as an object', { config: { memory: { current: 2048 } } }, 'config.memory'],
    ['config key smuggling a parameter', { config: { 'memory&args': 1 } }, 'config.memory&args'],
    ['config key in capitals', { config: { Memory: 2048 } }, 'config.Memory'],
    [
      'a container device on a container',
      { vm_type: 'lxc', vmid: 110, config: { dev0: '/dev/kvm' } },
      'config.dev0',
    ],
    ['delete of a refused key', { delete: ['args'] }, 'delete'],
    ['delete smuggling a second key', { delete: ['tags,args'] }, 'delete.0'],
    ['digest not a digest', { config: { memory: 2048 }, digest: 'abc' }, 'digest'],
    [
      'more than 64 keys at once',
      {
        config: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`net${i % 32}x${i}`, 1])),
      },
      'config',
    ],
    ["another guest's disk", { config: { scsi2: 'local-lvm:vm-101-disk-0' } }, null],
  ]),
];

const MIGRATE = [
  ...guestWriteCases('pve_migrate_vm', { target: 'pve2' }),
  ...rows('pve_migrate_vm', { node: 'pve1', vmid: 100, target: 'pve2' }, [
    ['target path traversal', { target: '../pve2' }, 'target'],
    ['target with a slash', { target: 'pve2/qemu' }, 'target'],
    ['target named localhost', { target: 'localhost' }, 'target'],
    ['target missing', { target: undefined }, 'target'],
    ['online as a string', { online: 'true' }, 'online'],
    ['with_local_disks as a number', { with_local_disks: 1 }, 'with_local_disks'],
    [
      'targetstorage smuggling a parameter',
      { targetstorage: 'local-lvm&force=1' },
      'targetstorage',
    ],
    ['targetstorage with three parts', { targetstorage: 'a:b:c' }, 'targetstorage'],
    ['force (root only in PVE)', { force: true }, 'force'],
    ['migration_network', { migration_network: '10.0.0.0/24' }, 'migration_network'],
    ['a running VM without online', {}, null],
  ]),
];

const API = rows('pve_api_request', { method: 'GET', path: '/version' }, [
  ['a path without the leading slash', { path: 'nodes/pve1/status' }, 'path'],
  ['a path with ..', { path: '/nodes/../access/users' }, 'path'],
  ['a path with an encoded separator', { path: '/nodes/pve1%2F..%2Faccess' }, 'path'],
  ['a path with a query', { path: '/access/users?full=1' }, 'path'],
  ['a path with a fragment', { path: '/version#x' }, 'path'],
  ['a path with //', { path: '//access/users' }, 'path'],
  ['a path with a trailing slash', { path: '/nodes/' }, 'path'],
  [
    'a path naming the node localhost',
    { path: '/nodes/localhost/qemu/100/status/current' },
    'path',
  ],
  ['a path with /api2/json in front', { path: '/api2/json/version' }, 'path'],
  ['a path with a backslash', { path: '/nodes\\pve1' }, 'path'],
  ['a path with a line break', { path: '/version\nX-Evil: 1' }, 'path'],
  ['a path with a colon (a UPID)', { path: '/nodes/pve1/tasks/UPID:pve1:x/status' }, 'path'],
  ['a path of 13 segments', { path: `/${'a/'.repeat(12)}b` }, 'path'],
  ['a method PVE does not have', { method: 'PATCH' }, 'method'],
  ['a method in lower case', { method: 'get' }, 'method'],
  ['params nested', { params: { a: { b: 1 } } }, 'params.a'],
  ['params as a list', { params: ['vmid=100'] }, 'params'],
  ['a params key smuggling another', { params: { 'vmid&delete': 1 } }, 'params.vmid&delete'],
  ['a params key with a dot', { params: { 'a.b': 1 } }, 'params.a.b'],
  [
    "a clone's target param named localhost",
    {
      method: 'POST',
      path: '/nodes/pve1/qemu/9000/clone',
      params: { newid: 106, target: 'localhost' },
    },
    'params.target',
  ],
  [
    "an HA move's node param named LocalHost",
    { method: 'POST', path: '/cluster/ha/resources/100/migrate', params: { node: 'LocalHost' } },
    'params.node',
  ],
  [
    'confirm as a string',
    { method: 'POST', path: '/nodes/pve1/qemu/100/status/stop', confirm: 'yes' },
    'confirm',
  ],
]);

export const OPS_CASES: OpsRow[] = [
  ...CLONE,
  ...LXC,
  ...DELETE,
  ...RESIZE,
  ...CONFIG,
  ...MIGRATE,
  ...API,
];

// Keys named like members of every object (`__proto__`, `constructor`, `toString`...): a lookup
// by one in a plain table finds the member (a function, Object.prototype), which code took for a
// rule; zod's records drop `__proto__` without a word. Each row names the field and says what
// the message must say (the old code answered with an internal error or a wrong message, or went
// on without the key).

export type MemberRow = [
  tool: string,
  label: string,
  args: Record<string, unknown>,
  field: string,
  message: RegExp,
];

/** Every member name Object.prototype has (12): what object arguments are tried with. */
export const MEMBER_NAMES: readonly string[] = Object.getOwnPropertyNames(Object.prototype);
/** Property-string keys are tried with these: each took another wrong path in a plain lookup. */
const KEY_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

/** `{[name]: value}` as an own entry even for `__proto__` (a literal `{__proto__: v}` sets the prototype). */
const entry = (name: string, value: unknown): Record<string, unknown> =>
  Object.fromEntries([[name, value]]);

const NOT_AN_OPTION = /^not a config option/;
const NO_PARAMETER = /^no Proxmox parameter has this name/;

/** Each member name as a key of the object argument `arg`, beside a valid key. */
function memberKeyRows(
  tool: string,
  base: Record<string, unknown>,
  arg: string,
  valid: Record<string, unknown>,
  message: RegExp,
): MemberRow[] {
  return MEMBER_NAMES.map((name) => [
    tool,
    `${arg} key ${name}`,
    { ...base, [arg]: { ...valid, ...entry(name, 1) } },
    `${arg}.${name}`,
    message,
  ]);
}

/** `valid` with each key name appended (`virtio,bridge=vmbr0,constructor=1`), as `arg` or as config.`arg`. */
function propertyKeyRows(
  tool: string,
  base: Record<string, unknown>,
  arg: string,
  valid: string,
  inConfig = false,
): MemberRow[] {
  return KEY_NAMES.map((name) => {
    const value = `${valid},${name}=1`;
    const field = inConfig ? `config.${arg}` : arg;
    return [
      tool,
      `${field} with a key ${name}`,
      { ...base, ...(inConfig ? { config: { [arg]: value } } : { [arg]: value }) },
      field,
      new RegExp(`unknown key "${name}"`),
    ];
  });
}

/** A valid value of each top-level property-string argument (resize sizes are no key=value strings). */
export const PROPERTY_ARGS: Record<
  string,
  { base: Record<string, unknown>; values: Record<string, string> }
> = {
  pve_create_qemu_vm: {
    base: { node: 'pve1', confirm: true },
    values: {
      net0: 'virtio,bridge=vmbr0',
      scsi0: 'local-lvm:32',
      ide2: 'none,media=cdrom',
      cpu: 'host',
      agent: '1',
      boot: 'order=scsi0',
    },
  },
  pve_clone_vm: {
    base: { node: 'pve1', source_vmid: 9000, confirm: true },
    values: { net0: 'virtio,bridge=vmbr0', ipconfig0: 'ip=dhcp' },
  },
  pve_create_lxc: {
    base: { node: 'pve1', ostemplate: TEMPLATE, confirm: true },
    values: { net0: 'name=eth0,bridge=vmbr0', rootfs: 'local-lvm:8' },
  },
};

/** A valid value of each property-string config key (`name[n]` as in the key tables), by guest kind. */
export const CONFIG_PROPERTY_VALUES: Record<'qemu' | 'lxc', Record<string, string>> = {
  qemu: {
    'net[n]': 'virtio,bridge=vmbr0',
    'scsi[n]': 'local-lvm:8',
    'virtio[n]': 'local-lvm:8',
    'sata[n]': 'local-lvm:8',
    'ide[n]': 'local-lvm:4',
    'ipconfig[n]': 'ip=dhcp',
    agent: '1',
    boot: 'order=scsi0',
    cpu: 'host',
  },
  lxc: {
    'net[n]': 'name=eth0,bridge=vmbr0',
    rootfs: 'local-lvm:8',
    'mp[n]': 'local-lvm:8,mp=/srv/data',
  },
};

const GUEST = {
  qemu: { node: 'pve1', vmid: 100, confirm: true },
  lxc: { node: 'pve1', vmid: 110, vm_type: 'lxc', confirm: true },
};
const RAW_WRITE = { method: 'POST', path: '/nodes/pve1/qemu/100/config', confirm: true };

/** An unknown top-level argument named `name`, for each of these tools. */
function topLevelRows(name: string, confirm: boolean): MemberRow[] {
  const bases = [
    ...Object.entries(PROPERTY_ARGS).map(([tool, { base }]) => [tool, base] as const),
    ['pve_set_vm_config', GUEST.qemu] as const,
    ['pve_api_request', RAW_WRITE] as const,
  ];
  return bases.map(([tool, base]) => [
    tool,
    `an argument named ${name}`,
    { ...base, ...entry(name, 1), confirm },
    name,
    /^unknown argument/,
  ]);
}

export const MEMBER_CASES: MemberRow[] = [
  ...Object.entries(PROPERTY_ARGS).flatMap(([tool, { base, values }]) =>
    Object.entries(values).flatMap(([arg, valid]) => propertyKeyRows(tool, base, arg, valid)),
  ),
  ...(['qemu', 'lxc'] as const).flatMap((kind) =>
    Object.entries(CONFIG_PROPERTY_VALUES[kind]).flatMap(([name, valid]) =>
      propertyKeyRows('pve_set_vm_config', GUEST[kind], name.replace('[n]', '1'), valid, true),
    ),
  ),
  ...memberKeyRows('pve_set_vm_config', GUEST.qemu, 'config', { memory: 2048 }, NOT_AN_OPTION),
  ...MEMBER_NAMES.map(
    (name): MemberRow => [
      'pve_set_vm_config',
      `delete of ${name}`,
      { ...GUEST.qemu, delete: [name] },
      'delete.0',
      NOT_AN_OPTION,
    ],
  ),
  ...memberKeyRows('pve_api_request', RAW_WRITE, 'params', { description: 'x' }, NO_PARAMETER),
  // An argv is a list, never an object: keys named like members of every object do not make one.
  ...MEMBER_NAMES.map(
    (name): MemberRow => [
      'pve_guest_exec',
      `command as an object with ${name}`,
      { node: 'pve1', vmid: 100, command: { 0: 'echo', [name]: 'sh' }, confirm: true },
      'command',
      /expected array/,
    ],
  ),
  ...topLevelRows('constructor', true),
  // JSON keeps `__proto__`, but the MCP SDKs copy arguments into a fresh object, where it would
  // vanish and the call go on without it: the entry renames it so the tool refuses it.
  ...topLevelRows('__proto__', true),
];

/** How many rows each tool has (every write tool must have at least 10). */
export function rowsPerTool(
  table: readonly (readonly [string, ...unknown[]])[],
): Map<string, number> {
  const perTool = new Map<string, number>();
  for (const [tool] of table) perTool.set(tool, (perTool.get(tool) ?? 0) + 1);
  return perTool;
}
