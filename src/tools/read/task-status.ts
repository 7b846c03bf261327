// pve_get_task_status: where a Proxmox task stands (running, or stopped with its exit status),
// the tail of its log, and, with wait, its end (never past timeout_s). The UPID is checked
// before anything is sent: it names its node, and must name the node asked.

import { z } from 'zod';
import { defineReadTool, ToolFailure } from '../../calls/tool-spec';
import { taskLogLines, taskStatus } from '../../proxmox/schemas';
import { guestOfUpid, parseUpid, taskSucceeded } from '../../proxmox/upid';
import { isoSeconds, nodeName, waitArgs } from '../common';
import { outputExtras } from '../../calls/result';
import { waitForTask } from '../../writes/task-wait';

const NAME = 'pve_get_task_status';
const UPID_SHAPE = /^UPID:[^\s]{1,300}$/;

export const getTaskStatus = defineReadTool({
  name: NAME,
  title: 'Status of a task',
  description:
    'A Proxmox task by its UPID (from a write): running, or its exit status; log_lines adds its log tail; wait: true waits for the end.',
  input: z.strictObject({
    node: nodeName.describe('The node in the UPID.'),
    upid: z.string().max(512).regex(UPID_SHAPE, {
      error:
        'must be a task id as Proxmox returns it: UPID:node:pid:pstart:starttime:type:id:user:',
    }),
    log_lines: z
      .number()
      .int()
      .min(0)
      .max(500)
      .default(0)
      .describe('How many of the last log lines to return.'),
    ...waitArgs,
  }),
  output: z.object({
    upid: z.string().optional(),
    node: z.string().optional(),
    type: z.string().optional(),
    id: z.string().optional(),
    user: z.string().optional(),
    started: z.string().nullable().optional(),
    status: z.string().optional(),
    exitstatus: z.string().nullable().optional(),
    succeeded: z.boolean().nullable().optional(),
    log: z.array(z.string()).optional(),
    log_total: z.number().nullable().optional(),
    ...outputExtras,
  }),
  // The guest a task is of (its id, as qmstart:100 names it), for target.* rules: one that may be
  // gone since (a qmdestroy's), of no guest then.
  target: (args) => {
    const guest = guestOfUpid(args.upid);
    return guest && { ...guest, gone: true };
  },
  async run(args, ctx) {
    const upid = parseUpid(args.upid);
    if (!upid) {
      throw new ToolFailure('invalid_arguments', `Invalid arguments for ${NAME}`, [
        {
          field: 'upid',
          message: 'not a valid UPID (UPID:node:pid:pstart:starttime:type:id:user:)',
        },
      ]);
    }
    if (upid.node !== args.node) {
      throw new ToolFailure('invalid_arguments', `Invalid arguments for ${NAME}`, [
        {
          field: 'node',
          message: `the task runs on ${upid.node}, which its UPID names; pass node: "${upid.node}"`,
        },
      ]);
    }
    const pve = ctx.pve();
    const base = `/nodes/${encodeURIComponent(args.node)}/tasks/${encodeURIComponent(args.upid)}`;
    if (args.wait) await waitForTask(pve, args.upid, args.timeout_s * 1000);
    const status = await pve.get(`${base}/status`, taskStatus);
    const stopped = status.status === 'stopped';
    const succeeded = stopped ? taskSucceeded(status.exitstatus) : null;
    let log: string[] = [];
    let logTotal: number | null = null;
    if (args.log_lines > 0) {
      // The tail: learn the length first (PVE sends `total` beside the lines), then read the end.
      const head = await pve.getPage(`${base}/log`, taskLogLines, { start: 0, limit: 1 });
      logTotal = head.total;
      const start = logTotal === null ? 0 : Math.max(0, logTotal - args.log_lines);
      log = (await pve.get(`${base}/log`, taskLogLines, { start, limit: args.log_lines })).map(
        (l) => l.t,
      );
    }
    const state = stopped
      ? `stopped: ${status.exitstatus ?? 'no exit status'}${succeeded ? '' : ' (failed)'}`
      : status.status;
    const text = `Task ${upid.type}${upid.id ? ` ${upid.id}` : ''} on ${upid.node} by ${upid.user}: ${state}.${log.length ? `\nLast ${log.length} log lines:\n${log.join('\n')}` : ''}`;
    return {
      structured: {
        upid: args.upid,
        node: upid.node,
        type: upid.type,
        id: upid.id,
        user: upid.user,
        started: isoSeconds(upid.startTime),
        status: status.status,
        exitstatus: status.exitstatus ?? null,
        succeeded,
        ...(args.log_lines > 0 ? { log, log_total: logTotal } : {}),
      },
      text,
    };
  },
});
