// Named property-string formats (registered by name in qemu-server, e.g. 'pve-qm-boot',
// 'pve-vm-cpu-conf'), so that `format: 'pve-qm-boot'` in a schema parses like parse_property_string.
import {
  BACKUP_FLEECING_FORMAT,
  BACKUP_PERFORMANCE_FORMAT,
  PRUNE_BACKUPS_FORMAT,
} from './backup-formats.ts';
import { IDE_FORMAT } from './qemu-drive-formats.ts';
import {
  PveDie,
  type PropertyStringFormat,
  type PropSchema,
  type SchemaType,
} from './schema-types.ts';

const opt = (type: SchemaType, extra: Omit<PropSchema, 'type'> = {}): PropSchema => ({
  type,
  optional: true,
  ...extra,
});

/** QEMU models PVE knows without a custom-models config (x86_64 + aarch64, plus builtins). */
const CPU_MODELS = new Set(
  [
    '486 pentium pentium2 pentium3 coreduo core2duo Conroe Penryn Nehalem Nehalem-IBRS Westmere',
    'Westmere-IBRS SandyBridge SandyBridge-IBRS IvyBridge IvyBridge-IBRS Haswell Haswell-IBRS',
    'Haswell-noTSX Haswell-noTSX-IBRS Broadwell Broadwell-IBRS Broadwell-noTSX Broadwell-noTSX-IBRS',
    'Skylake-Client Skylake-Client-IBRS Skylake-Client-noTSX-IBRS Skylake-Client-v4 Skylake-Server',
    'Skylake-Server-IBRS Skylake-Server-noTSX-IBRS Skylake-Server-v4 Skylake-Server-v5',
    'Cascadelake-Server Cascadelake-Server-v2 Cascadelake-Server-noTSX Cascadelake-Server-v4',
    'Cascadelake-Server-v5 Cooperlake Cooperlake-v2 KnightsMill Icelake-Client Icelake-Client-noTSX',
    'Icelake-Server Icelake-Server-noTSX Icelake-Server-v3 Icelake-Server-v4 Icelake-Server-v5',
    'Icelake-Server-v6 Icelake-Server-v7 SapphireRapids SapphireRapids-v2 SapphireRapids-v3',
    'SapphireRapids-v4 GraniteRapids GraniteRapids-v2 GraniteRapids-v3 SierraForest SierraForest-v2',
    'SierraForest-v3 ClearwaterForest athlon phenom Opteron_G1 Opteron_G2 Opteron_G3 Opteron_G4',
    'Opteron_G5 EPYC EPYC-IBPB EPYC-v3 EPYC-v4 EPYC-v5 EPYC-Rome EPYC-Rome-v2 EPYC-Rome-v3',
    'EPYC-Rome-v4 EPYC-Rome-v5 EPYC-Milan EPYC-Milan-v2 EPYC-Milan-v3 EPYC-Genoa EPYC-Genoa-v2',
    'EPYC-Turin kvm32 kvm64 qemu32 qemu64 max host a64fx cortex-a35 cortex-a53 cortex-a55',
    'cortex-a57 cortex-a710 cortex-a72 cortex-a76 neoverse-n1 neoverse-n2 neoverse-v1',
    'x86-64-v2 x86-64-v2-AES x86-64-v3 x86-64-v4',
  ]
    .join(' ')
    .split(' '),
);

const VM_CPU_FLAGS = [
  'nested-virt',
  'md-clear',
  'pcid',
  'spec-ctrl',
  'ssbd',
  'ibpb',
  'virt-ssbd',
  'amd-ssbd',
  'amd-no-ssb',
  'pdpe1gb',
  'hv-tlbflush',
  'hv-evmcs',
  'aes',
].join('|');

/** qemu-server validate_vm_cpu_conf: a cputype must exist, flags come from a fixed set. */
function validateVmCpu(cpu: Readonly<Record<string, string>>): void {
  const cputype = cpu.cputype;
  if (!cputype) throw new PveDie('CPU is missing cputype\n');
  if (cputype.startsWith('custom-')) {
    throw new PveDie(`Custom cputype '${cputype.slice('custom-'.length)}' not found\n`);
  }
  if (!CPU_MODELS.has(cputype)) {
    throw new PveDie(`Built-in cputype '${cputype}' is not defined (missing 'custom-' prefix?)\n`);
  }
  const flag = `[+-](${VM_CPU_FLAGS})`;
  if (cpu.flags && !new RegExp(`^${flag}(;${flag})*$`).test(cpu.flags)) {
    const allowed = VM_CPU_FLAGS.split('|').sort().join(', ');
    throw new PveDie(`VM-specific CPU flags must be a subset of: ${allowed}\n`);
  }
  if (cpu['reported-model'] !== undefined) {
    throw new PveDie("Property 'reported-model' not allowed in VM-specific CPU config.\n");
  }
}

const CPU_FORMAT: PropertyStringFormat = {
  keys: {
    cputype: opt('string', { defaultKey: true }),
    'reported-model': opt('string'),
    hidden: opt('boolean'),
    'hv-vendor-id': opt('string', { pattern: '[a-zA-Z0-9]{1,12}' }),
    flags: opt('string', { pattern: '[+-][a-zA-Z0-9\\-_.]+(;[+-][a-zA-Z0-9\\-_.]+)*' }),
    'guest-phys-bits': opt('integer', { minimum: 32, maximum: 64 }),
    'phys-bits': opt('string', { format: 'pve-phys-bits' }),
  },
  validate: validateVmCpu,
};

const BOOT_FORMAT: PropertyStringFormat = {
  keys: {
    legacy: opt('string', { defaultKey: true, pattern: '[acdn]{1,4}' }),
    order: opt('string', { format: 'pve-qm-bootdev-list' }),
  },
};

const IPCONFIG_FORMAT: PropertyStringFormat = {
  keys: {
    ip: opt('string', { format: 'pve-ipv4-config' }),
    gw: opt('string', { format: 'ipv4', requires: 'ip' }),
    ip6: opt('string', { format: 'pve-ipv6-config' }),
    gw6: opt('string', { format: 'ipv6', requires: 'ip6' }),
  },
};

const WATCHDOG_FORMAT: PropertyStringFormat = {
  keys: {
    model: opt('string', { defaultKey: true, enum: ['i6300esb', 'ib700'] }),
    action: opt('string', { enum: ['reset', 'shutdown', 'poweroff', 'pause', 'debug', 'none'] }),
  },
};

const RNG_FORMAT: PropertyStringFormat = {
  keys: {
    source: {
      type: 'string',
      defaultKey: true,
      enum: ['/dev/urandom', '/dev/random', '/dev/hwrng'],
    },
    max_bytes: opt('integer'),
    period: opt('integer'),
  },
};

const CICUSTOM_FORMAT: PropertyStringFormat = {
  keys: {
    meta: opt('string', { format: 'pve-volume-id' }),
    network: opt('string', { format: 'pve-volume-id' }),
    user: opt('string', { format: 'pve-volume-id' }),
    vendor: opt('string', { format: 'pve-volume-id' }),
  },
};

export const NAMED_PROPERTY_FORMATS: Readonly<Record<string, PropertyStringFormat>> = {
  'pve-qm-boot': BOOT_FORMAT,
  'pve-vm-cpu-conf': CPU_FORMAT,
  'pve-qm-ipconfig': IPCONFIG_FORMAT,
  'pve-qm-watchdog': WATCHDOG_FORMAT,
  'pve-qm-rng': RNG_FORMAT,
  'pve-qm-cicustom': CICUSTOM_FORMAT,
  'pve-qm-ide': IDE_FORMAT,
  'backup-fleecing': BACKUP_FLEECING_FORMAT,
  'backup-performance': BACKUP_PERFORMANCE_FORMAT,
  'prune-backups': PRUNE_BACKUPS_FORMAT,
};
