// The guest agent's commands with parameters (qemu-server API2/Qemu/Agent.pm, QemuServer/Agent.pm):
// POST agent/exec (command: an array, in a form body a repeated `command` key; input-data), GET
// agent/exec-status (pid) and GET agent/file-read (file, count, offset, decode). QGA's errors come
// back as "Agent error: <desc>" (check_agent_error). What the agent sends base64-encoded, PVE
// decodes to bytes and its JSON encoder then writes each byte as one character: non-ASCII output
// arrives UTF-8 encoded twice, as on a real PVE.
import { perm } from '../access/permissions.ts';
import { processStatus, startProcess } from '../cluster/guest-exec.ts';
import { lookupFile } from '../cluster/guest-files.ts';
import { guestOs } from '../cluster/guest-os.ts';
import { SpawnError } from '../cluster/guest-programs.ts';
import { dieError } from '../schema/pve-error.ts';
import { assertAgentAvailable } from './agent.ts';
import { loadGuest, str } from './guest-helpers.ts';
import { GUEST_PARAMS, type HandlerContext, type Route } from './handler-context.ts';

/** MAX_READ_SIZE of file-read. */
const MAX_READ_SIZE = 16 * 1024 * 1024;
/** file-read asks the agent for at most this much per guest-file-read. */
const READ_CHUNK = 1024 * 1024;

/** A Perl byte string as PVE's JSON encoder prints it: one character per byte. */
const perlBytes = (data: Buffer) => data.toString('latin1');

const agentError = (desc: string) => dieError(`Agent error: ${desc}`);

/** qemu_exec: encode_base64 of input-data needs characters that fit a byte. */
function inputBytes(input: string): Buffer {
  if ([...input].some((char) => (char.codePointAt(0) ?? 0) > 0xff)) {
    throw dieError(
      'Wide character in subroutine entry at /usr/share/perl5/PVE/QemuServer/Agent.pm line 138.',
    );
  }
  return Buffer.from(input, 'latin1');
}

function exec(ctx: HandlerContext): unknown {
  const guest = loadGuest(ctx, 'qemu');
  const command = (ctx.params.command as readonly unknown[] | undefined) ?? [];
  const input = str(ctx, 'input-data');
  const [path, ...args] = command.map((part) => String(part ?? ''));
  const data = input === undefined ? undefined : inputBytes(input);
  if (path === undefined && data === undefined) {
    throw dieError('command or input-data (or both) required');
  }
  assertAgentAvailable(guest);
  if (path === undefined) throw agentError("Invalid parameter type for 'path', expected: string");
  try {
    return { pid: startProcess(guest, [path, ...args], data ?? Buffer.alloc(0), ctx.now) };
  } catch (err) {
    if (err instanceof SpawnError) throw agentError(err.message);
    throw err;
  }
}

function execStatus(ctx: HandlerContext): unknown {
  const guest = loadGuest(ctx, 'qemu');
  assertAgentAvailable(guest);
  // qemu-ga's message prints PRId64 without its '%': the pid never shows
  const status = processStatus(guest, Number(ctx.params.pid), ctx.now);
  if (!status) throw agentError('PID ld does not exist');
  if (!status.exited) return { exited: 0 };
  return {
    exited: 1,
    ...(status.exitcode !== undefined ? { exitcode: status.exitcode } : {}),
    ...(status.signal !== undefined ? { signal: status.signal } : {}),
    ...(status.out.length > 0 ? { 'out-data': perlBytes(status.out) } : {}),
    ...(status.out.length > 0 && status.outTruncated ? { 'out-truncated': 1 } : {}),
    ...(status.err.length > 0 ? { 'err-data': perlBytes(status.err) } : {}),
    ...(status.err.length > 0 && status.errTruncated ? { 'err-truncated': 1 } : {}),
  };
}

function fileRead(ctx: HandlerContext): unknown {
  const guest = loadGuest(ctx, 'qemu');
  assertAgentAvailable(guest);
  const file = String(ctx.params.file);
  const count = ctx.params.count === undefined ? MAX_READ_SIZE : Number(ctx.params.count);
  const decode = str(ctx, 'decode') !== '0' && ctx.params.decode !== false;
  let offset = ctx.params.offset === undefined ? 0 : Number(ctx.params.offset);
  const found = lookupFile(guest, file);
  if (found.kind === 'missing') {
    throw agentError(
      guestOs(guest).family === 'windows'
        ? `failed to open file '${file}': The system cannot find the file specified.`
        : `failed to open file '${file}' (mode: 'r'): No such file or directory`,
    );
  }
  if (found.kind === 'dir') throw agentError('failed to read file: Is a directory');
  let bytesRead = 0;
  let eof = false;
  let content = '';
  while (bytesRead < count && !eof) {
    const want = Math.min(count - bytesRead, READ_CHUNK);
    const chunk = found.data.subarray(offset, offset + want);
    // fread sets EOF only when it came back short
    eof = chunk.length < want;
    content += decode ? perlBytes(chunk) : chunk.toString('base64');
    bytesRead += chunk.length;
    offset += chunk.length;
  }
  return { content, 'bytes-read': bytesRead, ...(eof ? {} : { truncated: 1 }) };
}

const UNRESTRICTED = perm('/vms/{vmid}', ['VM.GuestAgent.Unrestricted']);

export const AGENT_EXEC_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/nodes/{node}/qemu/{vmid}/agent/exec',
    permissions: UNRESTRICTED,
    schema: {
      ...GUEST_PARAMS,
      command: { type: 'array', items: { type: 'string' } },
      'input-data': { type: 'string', optional: true, maxLength: 65536 },
    },
    handle: exec,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/agent/exec-status',
    permissions: UNRESTRICTED,
    schema: { ...GUEST_PARAMS, pid: { type: 'integer' } },
    handle: execStatus,
  },
  {
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/agent/file-read',
    permissions: perm(
      '/vms/{vmid}',
      ['VM.GuestAgent.FileRead', 'VM.GuestAgent.Unrestricted'],
      true,
    ),
    schema: {
      ...GUEST_PARAMS,
      file: { type: 'string' },
      count: { type: 'integer', optional: true, minimum: 1, maximum: MAX_READ_SIZE },
      offset: { type: 'integer', optional: true, minimum: 0 },
      decode: { type: 'boolean', optional: true },
    },
    handle: fileRead,
  },
];
