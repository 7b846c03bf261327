// Inside a VM, through the QEMU guest agent: run one program (pve_guest_exec: agent/exec, then
// agent/exec-status until it exits or the time is up), read one file (pve_guest_file_read), and
// what the agent says about the guest (pve_guest_info: its info, the OS, the file systems). The agent
// must be configured (agent: 1), the VM running and the agent answering: each is checked first
// and refused with the reason. A command is an argv, never a shell line: its program is a name
// or an absolute path with no spaces or shell syntax, and no part may hold a NUL (which would
// end a C string early and hide what follows). What a policy allows is judged on that argv
// (args.command.0 is the program), and the whole argv is kept in the audit trail.

import { z } from 'zod';
import { defineReadTool, ToolFailure, type ToolContext } from '../calls/tool-spec';
import { readBlastRadius } from '../proxmox/blast-radius';
import type { PveClient } from '../proxmox/client';
import { PveError, writeMayHaveHappened } from '../proxmox/errors';
import { numeric, boolish } from '../proxmox/schemas';
import { confirm, nodeName, vmid } from './common';
import { outputExtras } from '../calls/result';
import { defineWriteTool } from '../writes/kernel';
import { NOTHING_RUN } from '../writes/preview';
import {
  describeState,
  guestLabel,
  guestPath,
  readGuestState,
  type GuestRef,
} from '../proxmox/guest-state';

/** Output kept of each stream, and of a file read: enough to judge, small enough for a context. */
export const MAX_OUTPUT_BYTES = 16_384;
const MAX_FILE_BYTES = 65_536;
/** argv: at most this many parts, and bytes in all. */
const MAX_ARGV = 64;
const MAX_ARGV_BYTES = 16_384;
/** Polling exec-status: first after this, then up to the cap. */
const POLL_FIRST_MS = 200;
const POLL_MAX_MS = 2_000;

/** A program: a name or a path, with no spaces, quotes or shell syntax. */
const PROGRAM_RE = /^[A-Za-z0-9_.+/-]{1,255}$/;
/** Control characters other than tab, newline and carriage return. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
const CONTROL_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

const guestVm = {
  node: nodeName,
  vmid,
};

const argv = z
  .array(
    z.string().max(4096).min(1, {
      error: 'must not be empty (Proxmox drops an empty argument and everything before it)',
    }),
  )
  .min(1)
  .max(MAX_ARGV)
  .superRefine((parts, ctx) => {
    parts.forEach((part, i) => {
      if (part.includes('\u0000'))
        ctx.addIssue({ code: 'custom', path: [i], message: 'must not contain a NUL character' });
      else if (CONTROL_RE.test(part))
        ctx.addIssue({ code: 'custom', path: [i], message: 'must not contain control characters' });
    });
    const program = parts[0] ?? '';
    if (!PROGRAM_RE.test(program))
      ctx.addIssue({
        code: 'custom',
        path: [0],
        message:
          'must be a program name or path: letters, digits and . _ + - / (no spaces or shell syntax; put its arguments in the next items)',
      });
    else if (program.split('/').some((s) => s === '..'))
      ctx.addIssue({ code: 'custom', path: [0], message: 'must not contain ".." segments' });
    else if (program.endsWith('.'))
      // Windows drops a trailing dot: cmd.exe. would run cmd.exe past a rule on its name.
      ctx.addIssue({ code: 'custom', path: [0], message: 'must not end with "."' });
    const bytes = parts.reduce((n, p) => n + new TextEncoder().encode(p).length, 0);
    if (bytes > MAX_ARGV_BYTES)
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_ARGV_BYTES} bytes in all` });
  })
  .describe('argv: the program, then each argument as an item (no shell).');

/** A file in the guest: an absolute path (POSIX, or C:\ on Windows), no ".." or empty segments. */
const guestFile = z
  .string()
  .max(1024)
  .superRefine((path, ctx) => {
    const problem = filePathProblem(path);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe('Absolute path, e.g. /var/log/syslog.');

export function filePathProblem(path: string): string | null {
  if (CONTROL_RE.test(path) || path.includes('\u0000') || /[\n\r\t]/.test(path))
    return 'must not contain control characters';
  const windows = /^[A-Za-z]:\\/.test(path);
  if (!windows && !path.startsWith('/'))
    return 'must be an absolute path (/etc/os-release, or C:\\... on Windows)';
  // A Windows guest takes \ as a separator too: /var/log/..\..\x would climb out.
  if (!windows && path.includes('\\')) return 'must not contain "\\" in a / path';
  const segments = (windows ? path.slice(3) : path.slice(1)).split(windows ? /[\\/]/ : '/');
  if (segments.some((s) => s === '..' || s === '.')) return 'must not contain "." or ".." segments';
  if (segments.some((s) => s === '') && path !== '/')
    return 'must not contain empty segments ("//") or end with a separator';
  return null;
}

const execStatus = z.object({
  exited: boolish,
  exitcode: numeric.optional(),
  signal: numeric.optional(),
  'out-data': z.string().optional(),
  'err-data': z.string().optional(),
  'out-truncated': boolish.optional(),
  'err-truncated': boolish.optional(),
});

/**
 * The text the guest wrote. Proxmox hands on the agent's bytes as JSON with one character per
 * byte (its encoder writes Perl's byte string as is), so "●" arrives as "â\u0097\u008f": each
 * character is taken back as a byte and the bytes are read as UTF-8 (invalid ones become U+FFFD).
 */
export function agentText(raw: string): string {
  for (let i = 0; i < raw.length; i++) if (raw.charCodeAt(i) > 0xff) return raw;
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

/** The inverse of agentText: text as one character per UTF-8 byte, as Proxmox passes it on. */
export function agentBytes(text: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(text)) out += String.fromCharCode(b);
  return out;
}

/** A stream as the result carries it: cut to MAX_OUTPUT_BYTES, saying so. */
function capped(text: string | undefined, agentCut: boolean | undefined, name: string) {
  const all = agentText(text ?? '');
  const bytes = new TextEncoder().encode(all);
  const cut = bytes.length > MAX_OUTPUT_BYTES;
  const kept = cut
    ? new TextDecoder().decode(bytes.slice(0, MAX_OUTPUT_BYTES)).replace(/\uFFFD$/, '')
    : all;
  const notes = [
    cut ? `${name}: the first ${MAX_OUTPUT_BYTES} of ${bytes.length} bytes are shown` : null,
    agentCut ? `${name}: the guest agent did not capture all of it` : null,
  ].filter((n): n is string => n !== null);
  return { text: kept, notes };
}

/** The VM an agent tool talks to: the guest agent is QEMU's. */
const vmOf = (args: { node: string; vmid: number }): GuestRef => ({
  node: args.node,
  vmid: args.vmid,
  vm_type: 'qemu',
});

/** The VM's state, refused with the reason unless the agent can answer. */
async function agentReady(pve: PveClient, g: GuestRef): Promise<string> {
  const state = await readGuestState(pve, g);
  const who = guestLabel(g, state.name ?? undefined);
  if (state.status !== 'running')
    throw new ToolFailure(
      'conflict',
      `${who} is ${describeState(state)}: the guest agent only answers in a running VM. Nothing was sent to it.`,
    );
  if (!state.agent)
    throw new ToolFailure(
      'conflict',
      `${who} has no QEMU guest agent configured (agent: 1 in its options, and qemu-guest-agent installed in the guest). Nothing was sent to it.`,
    );
  return who;
}

/** PVE's words when the agent does not answer (500 "QEMU guest agent is not running"). */
function agentRefusal(err: PveError, who: string): ToolFailure | null {
  return err.status === 500 ? new ToolFailure('conflict', `${err.message} (${who}).`) : null;
}

/** A failed read of the agent: its refusal in our words, or the error as it came. */
function agentFailure(err: unknown, who: string): never {
  throw (err instanceof PveError && agentRefusal(err, who)) || err;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const guestExec = defineWriteTool({
  name: 'pve_guest_exec',
  scope: 'pve:guest',
  description:
    'Run one program (no shell) in a running VM through the QEMU guest agent; returns its exit code, stdout and stderr. Requires confirm=true.',
  input: z.strictObject({
    ...guestVm,
    command: argv,
    input_data: z
      .string()
      .max(65_536)
      .refine((v) => new TextEncoder().encode(v).length <= 65_536, {
        error: 'must be at most 65536 bytes (UTF-8)',
      })
      .optional()
      .describe('Sent to its stdin.'),
    timeout_s: z
      .number()
      .int()
      .min(1)
      .max(300)
      .default(30)
      .describe('How long to wait for it to exit, s.'),
    confirm,
  }),
  // What runs and what it reads on stdin: an approver must see both to approve it.
  judgedBy: ['command', 'input_data'],
  output: z.object({
    mode: z.enum(['preview', 'exited', 'running']).optional(),
    command: z.array(z.string()).optional(),
    pid: z.number().optional(),
    exitcode: z.number().nullable().optional(),
    signal: z.number().nullable().optional(),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
    notes: z.array(z.string()).optional(),
    blast_radius: z.record(z.string(), z.unknown()).optional(),
    next_step: z.string().optional(),
    ...outputExtras,
  }),
  title: 'Run a command in a VM',
  destructive: true,
  idempotent: false,
  policyFields: { command: ['#'] },
  // The guest it acts on, for target.* rules.
  target: (args) => ({ vmid: args.vmid }),
  blastRadius: (args, ctx) => readBlastRadius(ctx.pve(), vmOf(args)),
  async plan(args, ctx) {
    const who = await agentReady(ctx.pve(), vmOf(args));
    const shown = args.command.map((p) => JSON.stringify(p)).join(' ');
    const stdin = args.input_data;
    return {
      steps: [
        {
          method: 'POST',
          path: guestPath(vmOf(args), 'agent', 'exec'),
          params: {
            command: args.command,
            // Proxmox base64-encodes this string as bytes: each UTF-8 byte goes as one character.
            ...(stdin !== undefined ? { 'input-data': agentBytes(stdin) } : {}),
          },
          // An approver reads the command and its stdin as text.
          view: {
            ...Object.fromEntries(args.command.map((part, i) => [`command.${i}`, part])),
            ...(stdin !== undefined ? { 'input-data': stdin } : {}),
          },
          doing: 'run it',
          answer: z.object({ pid: numeric }),
        },
      ],
      lead: [
        `Would run in ${who} on ${args.node}, as the guest agent's user (root on Linux, SYSTEM on Windows), no shell: ${shown}${stdin !== undefined ? ` with ${new TextEncoder().encode(stdin).length} bytes on stdin` : ''}; waiting up to ${args.timeout_s} s for it to exit.`,
      ],
      nothingYet: NOTHING_RUN,
      shown: { command: args.command },
      requestsAs: 'none',
      next: { doing: 'run it' },
      lost: () =>
        `The command may or may not have started in ${who}: check inside the guest before running it again.`,
      // A lost answer, or the agent timing out after it was handed the command (QMP "got
      // timeout"): it may have started.
      mayHaveHappened: (err) =>
        (err.status === 500 && /timeout/i.test(err.message)) ||
        (writeMayHaveHappened(err) && err.status !== 500),
      // Any other 500 is PVE's word that the agent does not answer.
      explain: (err) => agentRefusal(err, who),
      facts: { who, shown },
    };
  },
  async report(args, plan, sent, ctx) {
    const { who, shown } = plan.facts;
    const { pid } = sent.outcomes[0]!.data as { pid: number };
    const g = vmOf(args);
    let status: z.output<typeof execStatus>;
    try {
      status = await waitForExit(ctx.pve(), g, pid, args.timeout_s * 1000, ctx);
    } catch (err) {
      throw new ToolFailure(
        'indeterminate',
        `${who}: the command started (pid ${pid}), but its status could not be read: ${err instanceof PveError ? err.message : 'the read failed'}`,
      );
    }
    if (!status.exited) {
      return {
        structured: { mode: 'running' as const, command: args.command, pid },
        text: `${who}: ${shown} started (pid ${pid}) and was still running after ${args.timeout_s} s. The guest agent keeps it running; this tool does not stop it.`,
      };
    }
    return exited(who, shown, args.command, pid, status);
  },
});

/** A command that exited: its code (or signal) and what it wrote, cut where it is long. */
function exited(
  who: string,
  shown: string,
  command: string[],
  pid: number,
  status: z.output<typeof execStatus>,
) {
  const out = capped(status['out-data'], status['out-truncated'], 'stdout');
  const errs = capped(status['err-data'], status['err-truncated'], 'stderr');
  const notes = [...out.notes, ...errs.notes];
  const code = status.exitcode ?? null;
  const ended =
    code !== null
      ? `exited with code ${code}`
      : `was ended by signal ${status.signal ?? 'unknown'}`;
  return {
    structured: {
      mode: 'exited' as const,
      command,
      pid,
      exitcode: code,
      signal: status.signal ?? null,
      stdout: out.text,
      stderr: errs.text,
      ...(notes.length ? { notes } : {}),
    },
    text: [
      `${who}: ${shown} ${ended}.`,
      out.text ? `stdout:\n${out.text}` : 'stdout: (empty)',
      errs.text ? `stderr:\n${errs.text}` : null,
      ...notes.map((n) => `Note: ${n}.`),
    ]
      .filter(Boolean)
      .join('\n'),
  };
}

async function waitForExit(
  pve: PveClient,
  g: GuestRef,
  pid: number,
  timeoutMs: number,
  ctx: ToolContext,
): Promise<z.output<typeof execStatus>> {
  const deadline = ctx.clock.now() + timeoutMs;
  let wait = POLL_FIRST_MS;
  for (;;) {
    const status = await pve.get(
      guestPath(g, 'agent', 'exec-status'),
      execStatus,
      { pid },
      { timeoutMs: Math.max(1_000, deadline - ctx.clock.now()) },
    );
    if (status.exited || ctx.clock.now() + wait > deadline) return status;
    await sleep(wait);
    wait = Math.min(wait * 2, POLL_MAX_MS);
  }
}

export const guestFileRead = defineReadTool({
  name: 'pve_guest_file_read',
  title: 'Read a file in a VM',
  scope: 'pve:guest',
  description:
    'Read a text file inside a running VM through the QEMU guest agent (the first 64 KiB).',
  input: z.strictObject({ ...guestVm, file: guestFile }),
  judgedBy: ['file'],
  output: z.object({
    file: z.string().optional(),
    content: z.string().optional(),
    truncated: z.boolean().optional(),
    ...outputExtras,
  }),
  // The guest it acts on, for target.* rules.
  target: (args) => ({ vmid: args.vmid }),
  async run(args, ctx) {
    const [pve, g] = [ctx.pve(), vmOf(args)];
    const who = await agentReady(pve, g);
    let read;
    try {
      read = await pve.get(
        guestPath(g, 'agent', 'file-read'),
        z.object({ content: z.string(), truncated: boolish.optional() }),
        { file: args.file, count: MAX_FILE_BYTES + 1 },
      );
    } catch (err) {
      agentFailure(err, who);
    }
    const text = agentText(read.content);
    const bytes = new TextEncoder().encode(text);
    const cut = bytes.length > MAX_FILE_BYTES || read.truncated === true;
    const content =
      bytes.length > MAX_FILE_BYTES
        ? new TextDecoder().decode(bytes.slice(0, MAX_FILE_BYTES)).replace(/\uFFFD$/, '')
        : text;
    return {
      structured: { file: args.file, content, truncated: cut },
      text: `${args.file} in ${who}${cut ? ` (the first ${MAX_FILE_BYTES} bytes)` : ''}:\n${content}`,
    };
  },
});

const agentResult = z.object({ result: z.unknown() });
const osInfo = z
  .object({
    name: z.string(),
    'pretty-name': z.string(),
    version: z.string(),
    'kernel-release': z.string(),
    machine: z.string(),
    id: z.string(),
  })
  .partial();
const fsInfo = z.array(
  z
    .object({
      name: z.string(),
      mountpoint: z.string(),
      type: z.string(),
      'used-bytes': numeric,
      'total-bytes': numeric,
    })
    .partial(),
);
const agentInfo = z.object({ version: z.string().optional() });

export const guestInfo = defineReadTool({
  name: 'pve_guest_info',
  title: 'Guest agent info',
  scope: 'pve:guest',
  description:
    "What the QEMU guest agent of a running VM reports: its version, the guest's OS and its file systems with their use.",
  input: z.strictObject(guestVm),
  output: z.object({
    agent_version: z.string().nullable().optional(),
    os: z.record(z.string(), z.unknown()).nullable().optional(),
    filesystems: z.array(z.record(z.string(), z.unknown())).nullable().optional(),
    unreadable: z.record(z.string(), z.string()).optional(),
    ...outputExtras,
  }),
  // The guest it acts on, for target.* rules.
  target: (args) => ({ vmid: args.vmid }),
  async run(args, ctx) {
    const [pve, g] = [ctx.pve(), vmOf(args)];
    const who = await agentReady(pve, g);
    // The agent's own info first: when the agent does not answer, that is the answer.
    let info: z.output<typeof agentInfo>;
    try {
      info = agentInfo.parse((await pve.get(guestPath(g, 'agent', 'info'), agentResult)).result);
    } catch (err) {
      agentFailure(err, who);
    }
    const unreadable: Record<string, string> = {};
    const read = async <T>(what: string, schema: z.ZodType<T>): Promise<T | null> => {
      try {
        const { result } = await pve.get(guestPath(g, 'agent', what), agentResult);
        return schema.parse(result);
      } catch (err) {
        unreadable[what] = err instanceof PveError ? err.message : 'an unexpected answer';
        return null;
      }
    };
    const [os, fs] = await Promise.all([read('get-osinfo', osInfo), read('get-fsinfo', fsInfo)]);
    const filesystems =
      fs?.map((f) => ({
        mountpoint: f.mountpoint ?? null,
        type: f.type ?? null,
        used_gib: f['used-bytes'] === undefined ? null : gib(f['used-bytes']),
        total_gib: f['total-bytes'] === undefined ? null : gib(f['total-bytes']),
      })) ?? null;
    const lines = [
      `${who}: guest agent ${info.version ?? '(version unknown)'}.`,
      os
        ? `OS: ${os['pretty-name'] ?? os.name ?? 'unknown'}${os['kernel-release'] ? `, kernel ${os['kernel-release']}` : ''}${os.machine ? ` (${os.machine})` : ''}.`
        : null,
      ...(filesystems ?? []).map(
        (f) =>
          `${f.mountpoint} (${f.type}): ${f.used_gib ?? '?'} of ${f.total_gib ?? '?'} GiB used`,
      ),
      ...Object.entries(unreadable).map(([k, v]) => `${k} could not be read: ${v}`),
    ].filter(Boolean);
    return {
      structured: {
        agent_version: info.version ?? null,
        os: os ?? null,
        filesystems,
        ...(Object.keys(unreadable).length ? { unreadable } : {}),
      },
      text: lines.join('\n'),
    };
  },
});

const gib = (bytes: number) => Math.round((bytes / 1024 ** 3) * 100) / 100;
