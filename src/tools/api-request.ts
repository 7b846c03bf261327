// pve_api_request: the escape hatch, a raw request to any Proxmox API path. It is no way around
// the other tools' rules: its own policy decides (the shipped one denies it), rules see
// args.method, args.path (exactly what is sent) and args.params.<name>. Reads go out at once;
// writes preview unless confirm. Paths are syntactically clean; parameters flat scalars.

import { z } from 'zod';
import { API_PARAM_RE, checkApiParamName, checkApiPath } from '../proxmox/api-path';
import { isNodeAlias, NODE_ALIAS_RULE } from '../proxmox/formats';
import { confirm } from './common';
import { outputExtras } from '../calls/result';
import { formParams, keysChecked } from './input-formats';
import type { PveClient } from '../proxmox/client';
import { defineWriteTool } from '../writes/kernel';
import { stepRequest } from '../writes/plan';
import { requestLine, requestRows, requestView } from '../writes/request';

/**
 * Whether parameter `name` of a request to `path` names a node: `node` (a backup's, an HA move's)
 * and `target_node` (a volume's) always; `target` where it is a clone's or a migration's target
 * or a storage list's node, not elsewhere (an iSCSI target, a notification target). `localhost`
 * there is refused as in a path.
 */
function namesNode(path: string, name: string): boolean {
  if (name === 'node' || name === 'target_node') return true;
  return name === 'target' && /\/(?:clone|migrate)$|^\/nodes\/[^/]+\/storage$/.test(path);
}

/** Answers larger than this are not returned whole (they would flood the conversation). */
const MAX_ANSWER = 64 * 1024;

const input = z
  .strictObject({
    method: z.enum(['GET', 'POST', 'PUT', 'DELETE']),
    path: z
      .string()
      .superRefine((p, ctx) => {
        const problem = checkApiPath(p);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe('Below /api2/json, e.g. /nodes/pve1/qemu/100/rrddata.'),
    params: keysChecked(
      checkApiParamName,
      z
        .record(
          z.string().regex(API_PARAM_RE, { error: 'must be a parameter name' }),
          z.union([z.string().max(65_536), z.number(), z.boolean()]),
        )
        .refine((p) => Object.keys(p).length <= 100, { error: 'at most 100 parameters' }),
    )
      .optional()
      .describe('Flat: strings, numbers, booleans.'),
    confirm: confirm.describe('Writes (not GET): true to send; otherwise a preview.'),
  })
  .superRefine(({ path, params = {} }, ctx) => {
    for (const [name, value] of Object.entries(params))
      if (typeof value === 'string' && isNodeAlias(value) && namesNode(path, name))
        ctx.addIssue({ code: 'custom', path: ['params', name], message: NODE_ALIAS_RULE });
  });

const output = z.object({
  mode: z.enum(['preview', 'sent']).optional(),
  request: z
    .object({ method: z.string(), path: z.string(), params: z.record(z.string(), z.string()) })
    .partial()
    .optional(),
  data: z.unknown().optional(),
  truncated: z.boolean().optional(),
  next_step: z.string().optional(),
  ...outputExtras,
});

/**
 * The paths that name one guest, its vmid captured: the guest's own (/nodes/{node}/qemu|lxc/
 * {vmid}/...), its HA resource (/cluster/ha/resources/{vmid}, and /migrate, /relocate: Proxmox
 * takes a bare vmid for vm:{vmid} or ct:{vmid}, and a path cannot hold the colon), and its
 * replication jobs ({vmid}-{n}, under /cluster/replication and /nodes/{node}/replication).
 */
const GUEST_PATHS: readonly RegExp[] = [
  /^\/nodes\/[^/]+\/(?:qemu|lxc)\/(\d{1,9})(?:\/|$)/,
  /^\/cluster\/ha\/resources\/(\d{1,9})(?:\/|$)/,
  /^\/(?:cluster|nodes\/[^/]+)\/replication\/(\d{1,9})-\d{1,9}(?:\/|$)/,
];

/** The guest a path names, or null when it names none. */
function guestOfPath(path: string): { vmid: number } | null {
  for (const re of GUEST_PATHS) {
    const m = re.exec(path);
    if (m) return { vmid: Number(m[1]) };
  }
  return null;
}

/** Writes are previewed unless confirmed and sent by the kernel; a GET is read at once. */
export const apiRequest = defineWriteTool({
  name: 'pve_api_request',
  scope: 'pve:raw',
  judgedBy: ['path', 'params'],
  description:
    'Raw Proxmox API request (method, path below /api2/json, params); its own policy rules usually deny it: prefer the other tools. Writes require confirm=true.',
  input,
  output,
  title: 'Raw Proxmox API request',
  destructive: true,
  idempotent: false,
  policyFields: { params: ['*'] },
  target: (args) => guestOfPath(args.path),
  read: {
    is: (args) => args.method === 'GET',
    describe: (args) => requestRows(asRead(args)),
    async run(args, ctx) {
      const pve = ctx.pve();
      const request = asRead(args);
      const data = await pve.get(args.path, z.unknown(), request.params);
      return answered(requestView(request), data, pve);
    },
  },
  async plan(args) {
    const { method } = args;
    // A read is never planned: the kernel runs a GET with `read`.
    if (method === 'GET') throw new Error('a GET is not a write');
    const params = formParams(args.params ?? {});
    const line = requestLine(requestView({ method, path: args.path, params }));
    return {
      steps: [{ method, path: args.path, params, doing: 'send it', answer: z.unknown() }],
      lead: [],
      requestsAs: 'request',
      next: { doing: 'send it' },
      lost: () => `${line} may or may not have been carried out: check before sending it again.`,
      facts: null,
    };
  },
  report: (_args, _plan, sent, ctx) => {
    const o = sent.outcomes[0]!;
    return answered(stepRequest(o.step), o.data, ctx.pve());
  },
});

const asRead = (args: z.output<typeof input>) => ({
  method: 'GET',
  path: args.path,
  params: formParams(args.params ?? {}),
});

/** What Proxmox answered, whole when it is small enough, scrubbed of secrets before it is cut. */
function answered(
  request: { method: string; path: string; params: Record<string, string> },
  data: unknown,
  pve: PveClient,
) {
  const line = requestLine(request);
  let json = JSON.stringify(data ?? null);
  // Scrubbed before it is cut: a cut through a secret would leave its first part behind.
  if (json.length > MAX_ANSWER) json = pve.scrub.text(json);
  const task =
    typeof data === 'string' && data.startsWith('UPID:')
      ? ` It started task ${data}: follow it with pve_get_task_status.`
      : '';
  if (json.length > MAX_ANSWER) {
    return {
      structured: { mode: 'sent' as const, request, truncated: true },
      text: `${line} answered ${json.length} characters; the first ${MAX_ANSWER}:\n${json.slice(0, MAX_ANSWER)}`,
    };
  }
  return {
    structured: { mode: 'sent' as const, request, data: data ?? null },
    text: `${line} answered:${task}\n${json}`,
  };
}
