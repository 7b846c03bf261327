// A guest config as an agent reads it: each property string split into its fields (leniently:
// an unknown key is shown, never refused, since this describes what Proxmox holds rather than
// checking what we send), and secret values replaced. Pure.

import { own } from '../core/own';

/** Config keys whose values are secrets (PVE masks cipassword itself; we never rely on that). */
const SECRET_KEYS = /^(cipassword|password|.*secret.*|.*token.*)$/i;
export const REDACTED_VALUE = '[redacted]';

type Fields = Record<string, string>;

const POSITIONAL: Readonly<Record<string, string>> = {
  agent: 'enabled',
  cpu: 'cputype',
  memory: 'current',
  vga: 'type',
  boot: 'legacy',
  rng0: 'source',
  spice_enhancements: 'foldersharing',
};

/** The key a property string's first, unnamed part stands for, by config key. */
function positionalKey(key: string, type: 'qemu' | 'lxc'): string | null {
  if (/^(scsi|virtio|sata|ide|efidisk|tpmstate|unused)\d+$/.test(key)) return 'volume';
  if (/^(rootfs|mp\d+)$/.test(key)) return 'volume';
  if (type === 'qemu' && /^net\d+$/.test(key)) return 'model';
  return own(POSITIONAL, key) ?? null;
}

const PROPERTY_KEYS =
  /^(scsi|virtio|sata|ide|efidisk|tpmstate|unused|net|ipconfig|mp|usb|hostpci|serial|parallel|numa)\d+$|^(rootfs|agent|cpu|memory|vga|boot|rng0|smbios1|audio0|spice_enhancements|features|startup|watchdog|amd-sev|intel-tdx)$/;

/** QEMU NIC models: `net0: virtio=BC:24:11:AA:BB:CC,bridge=vmbr0` names the model as a key. */
const NIC_MODELS =
  /^(e1000|e1000-82540em|e1000-82544gc|e1000-82545em|e1000e|i82551|i82557b|i82559er|ne2k_isa|ne2k_pci|pcnet|rtl8139|virtio|vmxnet3)$/;

export function parsePropertyFields(key: string, value: string, type: 'qemu' | 'lxc'): Fields {
  // Entries, then fromEntries: a part named __proto__ stays a field, not a prototype to set.
  const entries: [string, string][] = [];
  value.split(',').forEach((part, i) => {
    const eq = part.indexOf('=');
    const k = eq < 0 ? '' : part.slice(0, eq);
    const v = eq < 0 ? part : part.slice(eq + 1);
    if (i === 0 && type === 'qemu' && /^net\d+$/.test(key) && NIC_MODELS.test(k)) {
      entries.push(['model', k], ['macaddr', v]);
    } else if (eq < 0) {
      // The unnamed first part, e.g. the volume local-lvm:vm-100-disk-0 of a disk.
      entries.push([positionalKey(key, type) ?? 'value', part]);
    } else {
      entries.push([k, v]);
    }
  });
  return Object.fromEntries(entries);
}

export interface ConfigView {
  config: Record<string, string | number>;
  fields: Record<string, Fields>;
  redacted: string[];
}

export function viewConfig(raw: Record<string, string | number>, type: 'qemu' | 'lxc'): ConfigView {
  const config: Record<string, string | number> = {};
  const fields: Record<string, Fields> = {};
  const redacted: string[] = [];
  for (const key of Object.keys(raw).sort()) {
    if (key === 'digest') continue;
    const value = raw[key]!;
    if (SECRET_KEYS.test(key)) {
      config[key] = REDACTED_VALUE;
      redacted.push(key);
      continue;
    }
    config[key] = value;
    if (typeof value === 'string' && PROPERTY_KEYS.test(key))
      fields[key] = parsePropertyFields(key, value, type);
  }
  return { config, fields, redacted };
}
