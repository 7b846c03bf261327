// The one way a tool creates a guest (POST /nodes/{node}/qemu or /lxc): the next free vmid is
// read before the policy decides (so rules and approvers see it); without confirm a preview of
// the exact form parameters; with it one POST (never retried as such; the next free id again if
// another creation took a chosen one meanwhile), and optionally the wait for the creation task.

import { z } from 'zod';
import { defineTool, type ToolSpec } from '../calls/tool-spec';
import type { PveClient } from '../proxmox/client';
import { nextId, upidString } from '../proxmox/schemas';
import { outputExtras } from '../calls/result';
import { taskOutput } from './output';
import { sendWithFreshId } from './fresh-vmid';
import { NOTHING_SENT, nextStep } from './preview';
import { sendRequest } from './request';
import { shownParams } from './shown-params';
import { waitForTask, type TaskOutcome } from './task-wait';

/** The arguments every create tool has. */
interface CreateArgs {
  node: string;
  vmid?: number;
  confirm: boolean;
  wait: boolean;
  timeout_s: number;
}

export interface CreateSpec<I extends z.ZodObject> {
  name: string;
  kind: 'qemu' | 'lxc';
  title: string;
  description: string;
  input: I;
  policyFields: Readonly<Record<string, readonly string[]>>;
  /** ToolSpec.judgedBy: what an approver must read to judge the creation (who gets in). */
  judgedBy?: readonly string[];
  /** The form parameters, except vmid (which may come from nextid). */
  params(args: z.output<I>): Record<string, string>;
  /** Its name, for texts: the VM's name, the container's hostname. */
  guestName(args: z.output<I>): string | undefined;
}

const output = z.object({
  mode: z.enum(['preview', 'created']).optional(),
  node: z.string().optional(),
  vmid: z.number().optional(),
  vmid_source: z.enum(['given', 'next_free']).optional(),
  params: z
    .record(z.string(), z.string())
    .optional()
    .describe('The exact form parameters sent (or that would be sent); secrets redacted.'),
  upid: z.string().optional().describe('Proxmox task id of the creation.'),
  attempts: z
    .number()
    .optional()
    .describe('POSTs made (more than 1 when a chosen vmid was taken meanwhile).'),
  task: taskOutput.optional().describe('Task state, when wait=true.'),
  next_step: z.string().optional(),
  ...outputExtras,
});

export function defineCreateTool<I extends z.ZodObject>(spec: CreateSpec<I>): ToolSpec {
  type Args = z.output<I> & CreateArgs;
  const what = spec.kind === 'qemu' ? 'VM' : 'container';
  const path = (node: string) => `/nodes/${encodeURIComponent(node)}/${spec.kind}`;
  return defineTool({
    name: spec.name,
    // Every new guest, VM or container, is provisioning.
    scope: 'pve:provision',
    description: spec.description,
    input: spec.input,
    output,
    annotations: {
      title: spec.title,
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    dryRun: (args) => !(args as Args).confirm,
    policyFields: spec.policyFields,
    ...(spec.judgedBy ? { judgedBy: spec.judgedBy } : {}),
    // The policy and the approver see the vmid that will be used, not "whatever is free".
    fills: ['vmid'],
    async resolve(args, ctx) {
      if ((args as Args).vmid !== undefined) return { args, filled: [] };
      return {
        args: { ...args, vmid: await ctx.pve().get('/cluster/nextid', nextId) },
        filled: ['vmid'],
      };
    },
    describeCall: (raw) => {
      const args = raw as Args;
      return {
        node: args.node,
        vmid: args.vmid === undefined ? '(next free id)' : String(args.vmid),
        ...shownParams(spec.params(raw)),
      };
    },
    async run(raw, ctx) {
      const args = raw as Args;
      const pve = ctx.pve();
      const params = spec.params(raw);
      const given = !ctx.filled.includes('vmid');
      const vmid = args.vmid ?? (await pve.get('/cluster/nextid', nextId));
      const name = spec.guestName(raw);
      if (!args.confirm) {
        const sent = shownParams({ vmid: String(vmid), ...params });
        const lines = Object.entries(sent).map(([k, v]) => `  ${k}=${v}`);
        const idNote = given
          ? ''
          : ` (${vmid} is the next free id now; the id is chosen again when you confirm)`;
        const next = nextStep(spec.name, 'create it');
        return {
          structured: {
            mode: 'preview' as const,
            node: args.node,
            vmid,
            vmid_source: given ? ('given' as const) : ('next_free' as const),
            params: sent,
            next_step: next,
          },
          text: `${NOTHING_SENT}\nWould POST ${path(args.node)}${idNote} with:\n${lines.join('\n')}\n${next}`,
        };
      }
      const created = await sendWithFreshId({
        pve,
        vmid,
        given,
        idArg: 'vmid',
        send: (id) => sendCreate(pve, path(args.node), id, params),
        recheck: (id) => ctx.recheck({ ...args, vmid: id }),
        lost: (id) =>
          `The create request for ${what} ${id} may or may not have reached Proxmox: check with pve_list_vms whether ${what} ${id} exists before trying again.`,
      });
      const upid = created.result;
      const task = args.wait ? await waitForTask(pve, upid, args.timeout_s * 1000) : undefined;
      return {
        structured: {
          mode: 'created' as const,
          node: args.node,
          vmid: created.vmid,
          vmid_source: given ? ('given' as const) : ('next_free' as const),
          params: shownParams({ vmid: String(created.vmid), ...params }),
          upid,
          attempts: created.attempts,
          ...(task ? { task: task.state } : {}),
        },
        text: createdText(what, created.vmid, name, args.node, upid, task),
        isError: task?.state.succeeded === false,
      };
    },
  });
}

/** The POST that creates the guest under `vmid`; Proxmox answers with the creation task. */
function sendCreate(
  pve: PveClient,
  path: string,
  vmid: number,
  params: Record<string, string>,
): Promise<string> {
  return sendRequest(pve, { method: 'POST', path, params: { vmid, ...params } }, upidString);
}

function createdText(
  what: string,
  vmid: number,
  name: string | undefined,
  node: string,
  upid: string,
  task: TaskOutcome | undefined,
): string {
  const head = `Creation of ${what} ${vmid}${name ? ` (${name})` : ''} on ${node} started: task ${upid}.`;
  if (!task) return `${head} Use wait=true to wait for it, or check pve_list_vms.`;
  return `${head} ${task.summary}`;
}
