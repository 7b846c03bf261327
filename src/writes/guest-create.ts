// The one way a tool creates a guest (POST /nodes/{node}/qemu or /lxc): the next free vmid is
// read before the policy decides (so rules and approvers see it); without confirm a preview of
// the exact form parameters; with it one POST (never retried as such; the next free id again if
// another creation took a chosen one meanwhile), and optionally the wait for the creation task.

import { z } from 'zod';
import type { ToolSpec } from '../calls/tool-spec';
import { nextId } from '../proxmox/schemas';
import { outputExtras } from '../calls/result';
import { defineWriteTool } from './kernel';
import { taskOutput } from './output';
import { stepRequest, type WriteStep } from './plan';
import type { TaskOutcome } from './task-wait';

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

/** The new guest as the call would make it, for the policy's `target.` rules. */
function madeGuest<I extends z.ZodObject>(
  spec: CreateSpec<I>,
  args: z.output<I> & CreateArgs & { pool?: string; tags?: string[] },
): Record<string, unknown> {
  const name = spec.guestName(args);
  return {
    node: args.node,
    vm_type: spec.kind,
    template: false,
    tags: args.tags ?? [],
    ...(args.pool !== undefined ? { pool: args.pool } : {}),
    ...(name !== undefined ? { name } : {}),
  };
}

export function defineCreateTool<I extends z.ZodObject>(spec: CreateSpec<I>): ToolSpec {
  type Args = z.output<I> & CreateArgs;
  const what = spec.kind === 'qemu' ? 'VM' : 'container';
  return defineWriteTool<I, typeof output, Made>({
    name: spec.name,
    // Every new guest, VM or container, is provisioning.
    scope: 'pve:provision',
    description: spec.description,
    input: spec.input,
    output,
    title: spec.title,
    destructive: false,
    idempotent: false,
    policyFields: spec.policyFields,
    ...(spec.judgedBy ? { judgedBy: spec.judgedBy } : {}),
    target: (args) => ({ made: madeGuest(spec, args as Args), vmid: (args as Args).vmid }),
    targetsWhatItMakes: true,
    // The guest it makes is also what new.* judges, so one rule can cover creates and clones.
    makes: (args) => madeGuest(spec, args as Args),
    // The policy and the approver see the vmid that will be used, not "whatever is free".
    fills: ['vmid'],
    async resolve(args, ctx) {
      if ((args as Args).vmid !== undefined) return { args, filled: [] };
      return {
        args: { ...args, vmid: await ctx.pve().get('/cluster/nextid', nextId) },
        filled: ['vmid'],
      };
    },
    async plan(raw, ctx) {
      const args = raw as Args;
      const given = !ctx.filled.includes('vmid');
      const vmid = args.vmid ?? (await ctx.pve().get('/cluster/nextid', nextId));
      const step = (id: number): WriteStep => ({
        method: 'POST',
        path: `/nodes/${encodeURIComponent(args.node)}/${spec.kind}`,
        params: { vmid: String(id), ...spec.params(raw) },
        doing: `create ${what} ${id}`,
        answer: 'task',
      });
      const source = given ? ('given' as const) : ('next_free' as const);
      return {
        steps: [step(vmid)],
        lead: [],
        shown: { node: args.node, vmid, vmid_source: source },
        requestsAs: 'params',
        idNote: given
          ? ''
          : ` (${vmid} is the next free id now; the id is chosen again when you confirm)`,
        next: { doing: 'create it' },
        ...(given ? {} : { freshId: { vmid, idArg: 'vmid', rebuild: (id) => [step(id)] } }),
        lost: (id = vmid) =>
          `The create request for ${what} ${id} may or may not have reached Proxmox: check with pve_list_vms whether ${what} ${id} exists before trying again.`,
        facts: { vmid, source, name: spec.guestName(raw) },
      };
    },
    report(raw, plan, sent) {
      const args = raw as Args;
      const made = sent.vmid ?? plan.facts.vmid;
      const o = sent.outcomes[0]!;
      return {
        structured: {
          mode: 'created' as const,
          node: args.node,
          vmid: made,
          vmid_source: plan.facts.source,
          params: stepRequest(o.step).params,
          upid: o.upid ?? '',
          attempts: sent.attempts,
          ...(o.task ? { task: o.task.state } : {}),
        },
        text: createdText(what, made, plan.facts.name, args.node, o.upid ?? '', o.task),
        isError: o.task?.state.succeeded === false,
      };
    },
  });
}

/** What the plan chose, for the result. */
interface Made {
  vmid: number;
  source: 'given' | 'next_free';
  /** Its name, for texts. */
  name: string | undefined;
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
