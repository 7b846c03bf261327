// GET /nodes/{node}/tasks/{upid}/status and /log (pve-manager API2/Tasks.pm). A task lives on
// the node in its UPID; asking another node for it finds no task file there.
import { ALL_USERS } from '../access/permissions.ts';
import { paramError, permError } from '../schema/pve-error.ts';
import type { Task } from '../cluster/cluster-state.ts';
import { NODE_PARAM, type HandlerContext, type Route } from './handler-context.ts';
import { hasPrivilege, type Identity } from '../access/tokens.ts';
import { decodeUpid, type UpidParts } from '../cluster/upid.ts';

/** A list result with PVE's top-level `total` next to `data`. */
export class ResultWithTotal {
  constructor(
    readonly data: unknown,
    readonly total: number,
  ) {}
}

const TOKEN_USER_RE = /^([^\s:/]+@[A-Za-z][A-Za-z0-9.\-_]+)!([A-Za-z][A-Za-z0-9.\-_]+)$/;

/** Tasks.pm $convert_token_task: a token task reports `user` and `tokenid` separately. */
function splitTaskUser(parts: UpidParts): { user: string; tokenid?: string } {
  const match = TOKEN_USER_RE.exec(parts.user);
  return match ? { user: match[1] ?? parts.user, tokenid: match[2] ?? '' } : { user: parts.user };
}

/** Owners (the token, or its user) may read a task; anyone else needs Sys.Audit on the node. */
function checkTaskAccess(parts: UpidParts, identity: Identity, node: string): void {
  const owner = identity.tokenId === parts.user || identity.user === splitTaskUser(parts).user;
  if (!owner && !hasPrivilege(identity, `/nodes/${node}`, 'Sys.Audit')) {
    throw permError(`/nodes/${node}, Sys.Audit`);
  }
}

function lookup(ctx: HandlerContext): { parts: UpidParts; task: Task | undefined } {
  const upid = String(ctx.params.upid);
  const parts = decodeUpid(upid);
  if (!parts) throw paramError({ upid: 'unable to parse worker upid' });
  const task = ctx.state.tasks.get(upid);
  return { parts, task: task && task.node === ctx.params.node ? task : undefined };
}

function taskStatus(ctx: HandlerContext): unknown {
  const { parts, task } = lookup(ctx);
  if (!task) throw paramError({ upid: 'no such task' });
  checkTaskAccess(parts, ctx.identity, String(ctx.params.node));
  const running = !task.finished;
  return {
    node: parts.node,
    pid: parts.pid,
    pstart: parts.pstart,
    starttime: parts.starttime,
    type: parts.type,
    id: parts.id,
    ...splitTaskUser(parts),
    status: running ? 'running' : 'stopped',
    upid: task.upid,
    ...(running ? {} : { exitstatus: task.exitStatus }),
  };
}

function taskLog(ctx: HandlerContext): unknown {
  const { parts, task } = lookup(ctx);
  checkTaskAccess(parts, ctx.identity, String(ctx.params.node));
  if (!task)
    return new ResultWithTotal([{ n: 1, t: 'unable to open file - No such file or directory' }], 1);
  const lines = task.log;
  const start = Number(ctx.params.start ?? 0);
  const limit = Number(ctx.params.limit ?? 50);
  const selected = lines
    .map((t, index) => ({ n: index + 1, t }))
    .slice(start, limit === 0 ? undefined : start + limit);
  // Like dump_logfile: an empty log still yields one line, so ExtJS stores are never empty.
  if (lines.length === 0) return new ResultWithTotal([{ n: 1, t: 'no content' }], 1);
  return new ResultWithTotal(selected, lines.length);
}

const UPID_PARAM = { type: 'string' } as const;

export const TASK_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/tasks/{upid}/status',
    permissions: ALL_USERS,
    schema: { node: NODE_PARAM, upid: UPID_PARAM },
    handle: taskStatus,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/tasks/{upid}/log',
    permissions: ALL_USERS,
    schema: {
      node: NODE_PARAM,
      upid: UPID_PARAM,
      start: { type: 'integer', optional: true, minimum: 0 },
      limit: { type: 'integer', optional: true, minimum: 0 },
      download: { type: 'boolean', optional: true },
    },
    handle: taskLog,
  },
];
