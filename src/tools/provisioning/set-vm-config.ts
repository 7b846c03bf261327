// pve_set_vm_config: change a guest's configuration (a VM: POST .../config, a task; a container:
// PUT .../config, applied at once). Only keys Proxmox defines for that kind and we accept, each
// value parsed to its format; the preview shows each change against the config as it is now;
// `digest` makes the write fail if the config changed since it was read. Existing volumes can
// only stay where they are: attaching one (maybe another guest's disk) is not offered.

import { z } from 'zod';
import { own } from '../../core/own';
import { configPolicyFields, sendConfigValue, type ConfigValue } from '../../proxmox/config-keys';
import { REDACTED_VALUE } from '../../proxmox/config-view';
import { guestDisks } from '../../proxmox/guest-disks';
import { guestConfig } from '../../proxmox/schemas';
import { confirm, guestTarget, waitArgs } from '../common';
import { configArg, configKey, forKind, type ConfigChange } from './config-input';
import { defineGuestAction, type Verdict } from '../../writes/guest-action';
import { guestLabel, guestPath } from '../../proxmox/guest-state';

const input = z.strictObject({
  ...guestTarget,
  config: configArg
    .optional()
    .describe('Keys to set, e.g. {"memory": 4096, "net0": "virtio,bridge=vmbr0"}.'),
  delete: z.array(configKey).max(64).optional().describe('Keys to remove.'),
  digest: z
    .string()
    .regex(/^[0-9a-f]{40}$/i, { error: 'must be the digest pve_get_vm_config returned' })
    .optional()
    .describe('From pve_get_vm_config: refuse if the config changed since.'),
  confirm,
  ...waitArgs,
});
type Args = z.output<typeof input>;
type Current = Record<string, string | number>;

const SECRET = /^(cipassword|password)$/;
const shown = (key: string, value: string | undefined): string =>
  value === undefined ? '(not set)' : SECRET.test(key) ? REDACTED_VALUE : value;

function change(args: Args): ConfigChange {
  return forKind('pve_set_vm_config', args.vm_type, args);
}

/** A volume may only stay in its slot; a new one may not replace a container's root. */
function checkVolumes(
  args: Args,
  current: Current,
  config: Record<string, ConfigValue>,
): string | null {
  const disks = guestDisks(current, args.vm_type);
  for (const [key, value] of Object.entries(config)) {
    if (typeof value !== 'object' || value.fields.iso === true) continue;
    const here = disks.find((d) => d.key === key)?.volume;
    const volume = value.fields.volume;
    if (typeof volume === 'string' && volume !== here) {
      return `config.${key}: ${volume} is not the volume in ${key} now (${here ?? 'it is empty'}); attaching existing volumes, which may belong to other guests, is not offered: give STORAGE:SIZE_GiB for a new disk.`;
    }
    if (typeof volume === 'string' && value.fields.size !== undefined)
      return `config.${key}: size is Proxmox's record of the disk's size; grow a disk with pve_resize_disk.`;
    if (key === 'rootfs' && value.fields.new_disk === true)
      return "config.rootfs: a container's root file system cannot be replaced; grow it with pve_resize_disk.";
  }
  return null;
}

function judgeChange(args: Args, current: Current, running: boolean): Verdict {
  const who = guestLabel(
    args,
    typeof current.name === 'string'
      ? current.name
      : typeof current.hostname === 'string'
        ? current.hostname
        : undefined,
  );
  if (args.digest && args.digest !== current.digest) {
    return {
      ok: false,
      reason: `The configuration of ${who} changed since it was read (its digest is now ${String(current.digest)}): read it again with pve_get_vm_config.`,
    };
  }
  const { config, delete: deletes } = change(args);
  const volumes = checkVolumes(args, current, config);
  if (volumes) return { ok: false, reason: volumes };
  const changes: { key: string; from: string; to: string }[] = [];
  const disks = guestDisks(current, args.vm_type);
  for (const [key, value] of Object.entries(config)) {
    const to = sendConfigValue(args.vm_type, key, value);
    const now = own(current, key);
    const from = now === undefined ? undefined : String(now);
    if (from === to) continue;
    const replaced =
      typeof value === 'object' &&
      value.fields.new_disk === true &&
      disks.some((d) => d.key === key && !d.cdrom);
    changes.push({
      key,
      from: shown(key, from),
      to: `${shown(key, to)}${replaced ? ' (a new disk; the old one stays as an unused disk)' : ''}`,
    });
  }
  for (const key of deletes) {
    const now = own(current, key);
    if (now === undefined) continue;
    const disk = disks.some((d) => d.key === key && !d.cdrom);
    changes.push({
      key,
      from: shown(key, String(now)),
      to: disk ? '(removed; its volume stays as an unused disk)' : '(removed)',
    });
  }
  if (!changes.length) return { ok: 'unchanged', note: 'It already has this configuration.' };
  const lines = changes.map((c) => `${c.key}: ${c.from} → ${c.to}`);
  const pending = running
    ? ' It is running: what cannot change while it runs waits until its next restart (pending).'
    : '';
  return {
    ok: true,
    note: `Changes: ${lines.join('; ')}.${pending} Current digest: ${String(current.digest ?? 'none')}.`,
    details: { changes, digest: current.digest ?? null },
  };
}

export const setVmConfig = defineGuestAction({
  name: 'pve_set_vm_config',
  scope: 'pve:provision',
  judgedBy: ['config'],
  title: 'Change the configuration of a guest',
  description:
    'Set (config) or remove (delete) config keys of a VM or container; values in Proxmox formats (net0: virtio,bridge=vmbr0). ' +
    'Host passthrough, hook scripts, args and locks are refused. Requires confirm=true; the preview shows each change.',
  destructive: true,
  idempotent: true,
  input,
  policyFields: { config: configPolicyFields() },
  precheck: (args) => void change(args),
  request: (args) => {
    const config = args.config ?? {};
    const params: Record<string, string> = Object.fromEntries(
      Object.entries(config).map(([k, v]) => [k, sendConfigValue(args.vm_type, k, v)]),
    );
    if (args.delete?.length) params.delete = [...new Set(args.delete)].join(',');
    if (args.digest) params.digest = args.digest;
    // A container's config is written at once (PUT); a VM's may allocate disks, as a task (POST).
    return args.vm_type === 'qemu'
      ? { method: 'POST', path: guestPath(args, 'config'), params }
      : { method: 'PUT', path: guestPath(args, 'config'), params, sync: true };
  },
  async judge(args, state, ctx) {
    return judgeChange(
      args,
      await ctx.pve().get(guestPath(args, 'config'), guestConfig),
      state.status === 'running',
    );
  },
  doing: (args) =>
    `change the configuration of ${args.vm_type === 'qemu' ? 'VM' : 'container'} ${args.vmid}`,
});
