// GET /nodes/{node}/{qemu,lxc}/{vmid}/config: the config with pending changes applied (or as it
// is with current=1, or a snapshot's with snapshot=<name>), plus the file's digest. Options typed
// integer, number or boolean in the schema come back as JSON numbers, like PVE's parsed config;
// a VM's cipassword is masked as vm_config does.
import { perm } from '../access/permissions.ts';
import type { Guest, GuestConfig } from '../cluster/cluster-state.ts';
import { configDigest } from '../cluster/config-file.ts';
import { currentConfig } from '../cluster/pending.ts';
import { lxcOptionType } from '../schema/lxc-schema.ts';
import { dieError, paramError } from '../schema/pve-error.ts';
import { qemuOptionType } from '../schema/qemu-config-schema.ts';
import {
  GUEST_PARAMS,
  SNAPNAME_PARAM,
  type HandlerContext,
  type Route,
} from './handler-context.ts';
import { flag, loadGuest, str } from './guest-helpers.ts';

/** The config as the API prints it: numbers for numeric and boolean options. */
export function typedConfig(
  type: Guest['type'],
  config: GuestConfig,
): Record<string, string | number> {
  const res: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(config)) {
    const kind = type === 'qemu' ? qemuOptionType(key) : lxcOptionType(key);
    const numeric = kind === 'integer' || kind === 'number' || kind === 'boolean';
    res[key] = numeric && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  }
  return res;
}

function readConfig(type: Guest['type']) {
  return (ctx: HandlerContext): unknown => {
    const snapshot = str(ctx, 'snapshot');
    if (snapshot && flag(ctx, 'current')) {
      const message = "cannot use 'snapshot' parameter with 'current'";
      throw paramError({ snapshot: message, current: message });
    }
    const guest = loadGuest(ctx, type);
    let config: GuestConfig;
    if (snapshot) {
      const snap = guest.snapshots.get(snapshot);
      if (!snap) throw dieError(`snapshot '${snapshot}' does not exist`);
      config = { ...snap };
    } else {
      config = currentConfig(guest, flag(ctx, 'current'));
    }
    if (type === 'qemu' && config.cipassword) config.cipassword = '**********';
    return { ...typedConfig(type, config), digest: configDigest(guest) };
  };
}

const schema = {
  ...GUEST_PARAMS,
  current: { type: 'boolean', optional: true },
  snapshot: { ...SNAPNAME_PARAM, optional: true },
} as const;

export const CONFIG_READ_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/config',
    permissions: perm('/vms/{vmid}', ['VM.Audit']),
    schema,
    handle: readConfig('qemu'),
  },
  {
    method: 'GET',
    path: '/nodes/{node}/lxc/{vmid}/config',
    permissions: perm('/vms/{vmid}', ['VM.Audit']),
    schema,
    handle: readConfig('lxc'),
  },
];
