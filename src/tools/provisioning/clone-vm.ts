// pve_clone_vm: clone a VM (usually a cloud-init template) and, in the same call, set cloud-init,
// cores, memory and a NIC, grow the boot disk and start it. The next free id and the disk to grow
// are read before the policy decides; the source is judged before anything is sent (a linked
// clone needs a template, cloud-init needs a cloud-init drive, Proxmox only grows disks); the
// preview lists every request in order; the run reports what exists and what did not happen.

import { z } from 'zod';
import { ToolFailure, type BaseToolContext } from '../../calls/tool-spec';
import { IPCONFIG_FORMAT } from '../../proxmox/cloud-init';
import { RESIZE_FIELDS, describeBytes, resizedBytes } from '../../proxmox/disk-size';
import { bootDisk, guestDisks, hasCloudInitDrive } from '../../proxmox/guest-disks';
import { NET_FORMAT, fieldsOf, parseNet } from '../../proxmox/qemu-options';
import { judgedTags } from '../../proxmox/formats';
import { propertyValue } from '../../core/property-value';
import { guestConfig, nextId } from '../../proxmox/schemas';
import { cloneInput, cloneSteps, setsCloudInit, type CloneArgs } from './clone-input';
import { outputExtras } from '../../calls/result';
import { defineWriteTool } from '../../writes/kernel';
import { guestPath, readGuestState, type GuestState } from '../../proxmox/guest-state';
import { completed, stepOutput, stepView, summarize } from '../../writes/plan';

const output = z.object({
  mode: z.enum(['preview', 'created', 'failed']).optional(),
  node: z.string().optional(),
  vmid: z.number().optional().describe('The new VM.'),
  vmid_source: z.enum(['given', 'next_free']).optional(),
  completed: z.boolean().optional().describe('Every step was done.'),
  steps: z.array(stepOutput).optional(),
  upid: z.string().optional().describe('The clone task.'),
  note: z.string().optional(),
  next_step: z.string().optional(),
  ...outputExtras,
});

type Source = { state: GuestState; config: Record<string, string | number> };

async function readSource(ctx: Pick<BaseToolContext, 'pve'>, args: CloneArgs): Promise<Source> {
  const g = { node: args.node, vmid: args.source_vmid, vm_type: 'qemu' as const };
  const [state, config] = await Promise.all([
    readGuestState(ctx.pve(), g),
    ctx.pve().get(guestPath(g, 'config'), guestConfig),
  ]);
  return { state, config };
}

/** Why Proxmox would refuse (or the result would not be what was asked), or what the clone is. */
function judge(
  args: CloneArgs,
  src: Source,
): { ok: false; reason: string } | { ok: true; note: string } {
  const who = `VM ${args.source_vmid}${src.state.name ? ` (${src.state.name})` : ''}`;
  const linked = args.full === false || (args.full === undefined && src.state.template);
  if (linked && !src.state.template)
    return {
      ok: false,
      reason: `A linked clone needs a template, and ${who} is not one: leave full out (or pass full: true) for a full copy, or clone a template.`,
    };
  if (linked && args.storage !== undefined)
    return {
      ok: false,
      reason: `storage applies to full copies only; ${who} is a template, which is cloned linked unless full: true.`,
    };
  if (src.state.lock)
    return {
      ok: false,
      reason: `${who} is locked (${src.state.lock}): Proxmox refuses to clone it until that ends.`,
    };
  if (setsCloudInit(args) && !hasCloudInitDrive(src.config)) {
    return {
      ok: false,
      reason: `${who} has no cloud-init drive, so the cloud-init settings would have no effect: add one to it first (e.g. ide2: local-lvm:cloudinit).`,
    };
  }
  const notes = [
    linked
      ? `A linked clone of template ${who}: its disks build on the template's, which cannot be removed while clones exist.`
      : `A full copy of ${who}'s disks.`,
  ];
  if (args.resize) {
    const disk = guestDisks(src.config, 'qemu').find((d) => d.key === args.resize_disk);
    if (!disk || disk.cdrom)
      return {
        ok: false,
        reason: `${who} has no disk ${args.resize_disk ?? '(no disk to boot from)'} to grow.`,
      };
    if (disk.bytes !== null) {
      const after = resizedBytes(args.resize, disk.bytes);
      if (after < disk.bytes)
        return {
          ok: false,
          reason: `Proxmox only grows disks: ${disk.key} is ${describeBytes(disk.bytes)} in ${who}, more than ${args.resize.text}. Ask for at least that, or +SIZE.`,
        };
      notes.push(
        `${disk.key} goes from ${describeBytes(disk.bytes)} to ${describeBytes(after)}; the guest grows its partition at boot (cloud-init's growpart) or you grow it inside.`,
      );
    }
  }
  if (setsCloudInit(args))
    notes.push(
      args.start
        ? 'Cloud-init applies its settings when the VM starts.'
        : 'Cloud-init applies its settings at the first start (pve_start_vm).',
    );
  return { ok: true, note: notes.join(' ') };
}

/**
 * What a clone takes from its source config (Proxmox's defaults where the config says nothing):
 * memory, cores and net0 where the call does not set them, sockets, and disk_gib, the size of
 * all its disks together after the resize ("unknown" when a disk's size is not in the config: a
 * cap then refuses rather than guess); its tags, which Proxmox copies (as rules judge tags), and
 * where the call gives none, the name Proxmox gives it.
 */
function inheritedFrom(
  config: Readonly<Record<string, string | number>>,
  args: CloneArgs,
): Record<string, unknown> {
  const memory = Number(/^(?:current=)?(\d+)/.exec(String(config.memory ?? '512'))?.[1] ?? NaN);
  const net0 = typeof config.net0 === 'string' ? parseNet(config.net0) : null;
  let bytes: number | null = 0;
  for (const disk of guestDisks(config, 'qemu')) {
    if (disk.cdrom || disk.unused) continue;
    const size =
      disk.key === args.resize_disk && args.resize && disk.bytes !== null
        ? resizedBytes(args.resize, disk.bytes)
        : disk.bytes;
    bytes = bytes === null || size === null ? null : bytes + size;
  }
  return {
    ...(args.memory === undefined ? { memory } : {}),
    ...(args.cores === undefined ? { cores: Number(config.cores ?? 1) } : {}),
    // A NIC our parser cannot read still counts, with no fields: a rule on its bridge then
    // judges a missing bridge (fail closed) instead of no NIC.
    ...(args.net0 === undefined && net0
      ? { net0: net0.ok ? net0.value : propertyValue(String(config.net0), {}) }
      : {}),
    sockets: Number(config.sockets ?? 1),
    disk_gib: bytes === null ? 'unknown' : Math.round((bytes / 1024 ** 3) * 1000) / 1000,
    tags: judgedTags(config.tags === undefined ? undefined : String(config.tags)),
    ...(args.name === undefined ? { name: `Copy-of-VM-${config.name ?? args.source_vmid}` } : {}),
  };
}

export const cloneVm = defineWriteTool({
  name: 'pve_clone_vm',
  scope: 'pve:provision',
  // Whose keys get into the clone: an approver who cannot read them cannot judge the call.
  judgedBy: ['sshkeys'],
  description:
    'Clone a VM or template, then in the same call set cloud-init (ci*, ipconfig0, nameserver, searchdomain), cores, memory, net0, ' +
    'grow the boot disk (resize) and start it. Requires confirm=true; otherwise a preview of every request in order.',
  input: cloneInput,
  output,
  title: 'Clone a VM',
  // The source: what a rule on target.* judges; new.* judges the clone as the call makes it.
  target: (args) => ({ vmid: args.source_vmid }),
  // As Proxmox makes it: its source's tags, and without a name "Copy-of-VM-<source's name>", both
  // read from the source before the policy decides (inherited, below).
  makes: (args, inherited) => {
    const name = args.name ?? inherited.name;
    return {
      node: args.target ?? args.node,
      vm_type: 'qemu',
      template: false,
      ...(inherited.tags !== undefined ? { tags: inherited.tags } : {}),
      ...(args.pool !== undefined ? { pool: args.pool } : {}),
      ...(name !== undefined ? { name } : {}),
    };
  },
  destructive: false,
  idempotent: false,
  policyFields: {
    ipconfig0: fieldsOf(IPCONFIG_FORMAT),
    net0: fieldsOf(NET_FORMAT),
    resize: RESIZE_FIELDS,
  },
  // Rules, approvals and approvers see the id and the disk that will be used, and what the clone
  // takes from its source: its memory, cores and NIC unless the call sets them, its sockets, and
  // the size of all its disks (after the resize), so caps hold for a clone of a big VM too.
  fills: ['newid', 'resize_disk'],
  inherits: {
    memory: null,
    cores: null,
    net0: fieldsOf(NET_FORMAT),
    sockets: null,
    disk_gib: null,
    tags: null,
    name: null,
  },
  newlyInherited: ['tags', 'name'],
  async resolve(args, ctx) {
    const filled: string[] = [];
    let out = args;
    if (args.newid === undefined) {
      out = { ...out, newid: await ctx.pve().get('/cluster/nextid', nextId) };
      filled.push('newid');
    }
    const { config } = await readSource(ctx, args);
    if (args.resize && args.resize_disk === undefined) {
      const disk = bootDisk(config);
      if (disk) {
        out = { ...out, resize_disk: disk.key };
        filled.push('resize_disk');
      }
    }
    return { args: out, filled, inherited: inheritedFrom(config, out) };
  },
  async plan(args, ctx) {
    const src = await readSource(ctx, args);
    const resizeDisk = args.resize_disk ?? (args.resize ? bootDisk(src.config)?.key : undefined);
    const full = { ...args, resize_disk: resizeDisk };
    const verdict = judge(full, src);
    if (!verdict.ok)
      throw new ToolFailure('conflict', `${verdict.reason} Nothing was sent to Proxmox.`);
    const given = !ctx.filled.includes('newid');
    const newid = args.newid ?? (await ctx.pve().get('/cluster/nextid', nextId));
    const source = given ? ('given' as const) : ('next_free' as const);
    const node = args.target ?? args.node;
    const idNote = given
      ? ''
      : ` (${newid} is the next free id now; it is chosen again when you confirm)`;
    const build = (id: number) => cloneSteps(full, id, resizeDisk);
    return {
      steps: build(newid),
      lead: [`The new VM: ${newid}${idNote}. ${verdict.note}`],
      shown: { node, vmid: newid, vmid_source: source, note: verdict.note },
      requestsAs: 'steps',
      next: { doing: 'run these requests' },
      ...(given ? {} : { freshId: { vmid: newid, idArg: 'newid', rebuild: build } }),
      lost: (id = newid) =>
        `The clone request for VM ${id} may or may not have reached Proxmox: check with pve_list_vms whether VM ${id} exists before trying again.`,
      facts: { node, source, newid },
    };
  },
  report(_args, plan, sent) {
    const { outcomes } = sent;
    const made = sent.vmid ?? plan.facts.newid;
    const exists = outcomes[0]!.status === 'done';
    const ok = completed(outcomes);
    const after = ok
      ? ''
      : exists
        ? ` VM ${made} exists: check it with pve_get_vm_config; finish with pve_set_vm_config, pve_resize_disk or pve_start_vm, or remove it with pve_delete_vm.`
        : '';
    return {
      structured: {
        mode: exists ? ('created' as const) : ('failed' as const),
        node: plan.facts.node,
        vmid: made,
        vmid_source: plan.facts.source,
        completed: ok,
        steps: outcomes.map(stepView),
        ...(outcomes[0]!.upid ? { upid: outcomes[0]!.upid } : {}),
      },
      text: `${summarize(outcomes)}${after}`,
      isError: !ok,
    };
  },
});
