// pve_create_qemu_vm: previews by default; with confirm=true sends one POST /nodes/{node}/qemu
// (never retried as such), takes the next free vmid again if an automatically chosen one was
// taken meanwhile, and optionally waits for the creation task.

import { z } from 'zod';
import { defineTool, ToolFailure, type ToolContext } from '../calls/tool-spec';
import type { PveClient } from '../proxmox/client';
import { PveError, writeMayHaveHappened } from '../proxmox/errors';
import {
  AGENT_FORMAT,
  BOOT_FORMAT,
  CPU_FORMAT,
  DRIVE_DERIVED_FIELDS,
  IDE_FORMAT,
  NET_FORMAT,
  SCSI_FORMAT,
  fieldsOf,
} from '../proxmox/qemu-options';
import { nextId, upidString } from '../proxmox/schemas';
import { createInput, createParams, type CreateArgs } from './create-input';
import { outputExtras } from './common';
import { waitForTask, type TaskOutcome } from './task-wait';

/** How many vmids to try when automatically chosen ones turn out to be taken. */
const MAX_VMID_ATTEMPTS = 5;

const output = z.object({
  mode: z.enum(['preview', 'created']).optional(),
  node: z.string().optional(),
  vmid: z.number().int().optional(),
  vmid_source: z.enum(['given', 'next_free']).optional(),
  params: z.record(z.string(), z.string()).optional().describe('The exact form parameters sent (or that would be sent).'),
  upid: z.string().optional().describe('Proxmox task id of the creation.'),
  attempts: z.number().int().optional().describe('POSTs made (more than 1 when chosen vmids were taken meanwhile).'),
  task: z
    .object({ status: z.string(), exitstatus: z.string().nullable(), succeeded: z.boolean().nullable() })
    .optional()
    .describe('Task state, when wait=true.'),
  next_step: z.string().optional(),
  ...outputExtras,
});

export const createQemuVm = defineTool({
  name: 'pve_create_qemu_vm',
  description:
    'Create a QEMU VM. Requires confirm=true. Without confirm it sends nothing to Proxmox and ' +
    'returns a preview: the exact parameters and the vmid that would be used. Disks use ' +
    'STORAGE:SIZE_GiB (scsi0=local-lvm:32), NICs MODEL,bridge=BRIDGE (net0=virtio,bridge=vmbr0), ' +
    'an installer ISO goes on ide2 (local:iso/NAME.iso). Omit vmid to take the next free one.',
  input: createInput,
  output,
  annotations: {
    title: 'Create a Proxmox QEMU VM',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  dryRun: (args) => !args.confirm,
  policyFields: {
    net0: fieldsOf(NET_FORMAT),
    scsi0: fieldsOf(SCSI_FORMAT, DRIVE_DERIVED_FIELDS),
    ide2: fieldsOf(IDE_FORMAT, DRIVE_DERIVED_FIELDS),
    cpu: fieldsOf(CPU_FORMAT),
    boot: fieldsOf(BOOT_FORMAT),
    agent: fieldsOf(AGENT_FORMAT),
  },
  // The policy and the approver see the vmid that will be used, not "whatever is free".
  fills: ['vmid'],
  async resolve(args, ctx) {
    if (args.vmid !== undefined) return { args, filled: [] };
    return { args: { ...args, vmid: await ctx.pve().get('/cluster/nextid', nextId) }, filled: ['vmid'] };
  },
  describeCall: (args) => ({ node: args.node, vmid: args.vmid === undefined ? '(next free id)' : String(args.vmid), ...createParams(args) }),
  async run(args, ctx) {
    const pve = ctx.pve();
    const params = createParams(args);
    const given = !ctx.filled.includes('vmid');
    const vmid = args.vmid ?? (await pve.get('/cluster/nextid', nextId));
    if (!args.confirm) return preview(args, vmid, given, params);

    const created = await postCreate(pve, ctx, args, vmid, given, params);
    const task = args.wait ? await waitForTask(pve, created.upid, args.timeout_s * 1000) : undefined;
    const structured = {
      mode: 'created' as const,
      node: args.node,
      vmid: created.vmid,
      vmid_source: given ? ('given' as const) : ('next_free' as const),
      params: { vmid: String(created.vmid), ...params },
      upid: created.upid,
      attempts: created.attempts,
      ...(task ? { task: task.state } : {}),
    };
    return {
      structured,
      text: createdText(args, created.vmid, created.upid, task),
      isError: task?.state.succeeded === false,
    };
  },
});

function preview(args: CreateArgs, vmid: number, given: boolean, params: Record<string, string>) {
  const sent = { vmid: String(vmid), ...params };
  const lines = Object.entries(sent).map(([k, v]) => `  ${k}=${v}`);
  const idNote = given ? '' : ` (${vmid} is the next free id now; the id is chosen again when you confirm)`;
  const nextStep = 'Call pve_create_qemu_vm again with the same arguments and confirm: true to create it.';
  return {
    structured: {
      mode: 'preview' as const,
      node: args.node,
      vmid,
      vmid_source: given ? ('given' as const) : ('next_free' as const),
      params: sent,
      next_step: nextStep,
    },
    text: `Preview only: nothing was sent to Proxmox.\nWould POST /nodes/${args.node}/qemu${idNote} with:\n${lines.join('\n')}\n${nextStep}`,
  };
}

async function postCreate(pve: PveClient, ctx: ToolContext, args: CreateArgs, firstVmid: number, given: boolean, params: Record<string, string>) {
  const path = `/nodes/${encodeURIComponent(args.node)}/qemu`;
  const tried: number[] = [];
  let vmid = firstVmid;
  for (;;) {
    try {
      const upid = await pve.post(path, upidString, { vmid, ...params });
      return { vmid, upid, attempts: tried.length + 1 };
    } catch (err) {
      if (err instanceof PveError && writeMayHaveHappened(err)) {
        throw new ToolFailure(
          'indeterminate',
          `${err.message} The create request for VM ${vmid} may or may not have reached Proxmox: ` +
            `check with pve_list_vms whether VM ${vmid} exists before trying again.`,
        );
      }
      // PVE checks the id before it writes anything, so "already exists" means nothing was
      // created: asking again with a new id is a new request, not a repeated write.
      if (given || !vmidTaken(err, vmid)) throw err;
      tried.push(vmid);
      if (tried.length >= MAX_VMID_ATTEMPTS) {
        throw new ToolFailure('conflict', `VM ids ${tried.join(', ')} were each taken by another creation first; try again or pass vmid.`);
      }
      const offered = await pve.get('/cluster/nextid', nextId);
      // A node that has not seen the other creation yet may offer a taken id again: go past it.
      vmid = tried.includes(offered) ? Math.max(...tried) + 1 : offered;
      // The policy decided on the first id; another id is another call, asked about first.
      ctx.recheck({ ...args, vmid });
    }
  }
}

function vmidTaken(err: unknown, vmid: number): boolean {
  if (!(err instanceof PveError) || err.failure.kind !== 'server_error') return false;
  const m = /\b(?:VM|CT) (\d+) already exists/.exec(err.failure.message);
  return m !== null && Number(m[1]) === vmid;
}

function createdText(args: CreateArgs, vmid: number, upid: string, task: TaskOutcome | undefined): string {
  const head = `Creation of VM ${vmid}${args.name ? ` (${args.name})` : ''} on ${args.node} started: task ${upid}.`;
  if (!task) return `${head} Use wait=true to wait for it, or check pve_list_vms.`;
  return `${head} ${task.summary}`;
}
