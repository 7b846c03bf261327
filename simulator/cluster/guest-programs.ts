// The programs a simulated guest can run through guest-exec, deterministic so tests can rely on
// them: echo, cat, uname, hostname, whoami, id, systemctl (status, is-active), df, sleep, true,
// false, seq, yes, ls, date, uptime, and sh/bash -c running those (no pipes, redirections or
// variables). A program the guest does not have fails the way glib's spawn does in qemu-ga:
// "Failed to execute child process “x” (No such file or directory)". Windows guests know
// hostname, whoami and cmd /c.
import type { Guest } from './cluster-state.ts';
import { guestPath, lookupFile } from './guest-files.ts';
import { guestAddress, guestFilesystems, guestHostname, guestOs } from './guest-os.ts';
import { shell } from './guest-shell.ts';
import { systemctl } from './guest-systemctl.ts';
import {
  DAYS,
  done,
  type ExecEnv,
  type ExecResult,
  fail,
  GENERATE_LIMIT,
  MONTHS,
  SpawnError,
  two,
} from './program-result.ts';

export { type ExecEnv, type ExecResult, SpawnError } from './program-result.ts';

function echo(args: string[]): ExecResult {
  let newline = true;
  while (args[0] === '-n' || args[0] === '-e' || args[0] === '-E') {
    if (args.shift() === '-n') newline = false;
  }
  return done(`${args.join(' ')}${newline ? '\n' : ''}`);
}

function cat(args: string[], env: ExecEnv): ExecResult {
  const files = args.filter((a) => !/^-./.test(a));
  if (files.length === 0) return done(env.input);
  const out: Buffer[] = [];
  let err = '';
  for (const file of files) {
    if (file === '-') {
      out.push(env.input);
      continue;
    }
    const found = lookupFile(env.guest, file);
    if (found.kind === 'file') out.push(found.data);
    else
      err += `cat: ${file}: ${found.kind === 'dir' ? 'Is a directory' : 'No such file or directory'}\n`;
  }
  return done(Buffer.concat(out), err ? 1 : 0, err);
}

function uname(args: string[], env: ExecEnv): ExecResult {
  const info = guestOs(env.guest).osinfo;
  const fields: Record<string, string> = {
    s: 'Linux',
    n: guestHostname(env.guest),
    r: info['kernel-release'] ?? '',
    v: info['kernel-version'] ?? '',
    m: 'x86_64',
    o: 'GNU/Linux',
  };
  const wanted = new Set<string>();
  for (const arg of args) {
    const flags = arg.replace(/^-/, '').split('');
    for (const flag of flags) {
      if (flag === 'a') for (const key of 'snrvmo') wanted.add(key);
      else if ('snrvmo'.includes(flag)) wanted.add(flag);
      else return fail('uname', `invalid option -- '${flag}'`);
    }
  }
  if (wanted.size === 0) wanted.add('s');
  return done(
    `${[...'snrvmo']
      .filter((k) => wanted.has(k))
      .map((k) => fields[k])
      .join(' ')}\n`,
  );
}

function hostname(args: string[], env: ExecEnv): ExecResult {
  if (args.includes('-I')) return done(`${guestAddress(env.guest.vmid, 0)} \n`);
  return done(`${guestHostname(env.guest)}\n`);
}

/** Human sizes as df -h prints them (1K units, one decimal below 10). */
function human(bytes: number): string {
  const units = ['', 'K', 'M', 'G', 'T'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return String(bytes);
  const shown = value < 10 ? (Math.ceil(value * 10) / 10).toFixed(1) : String(Math.ceil(value));
  return `${shown}${units[unit]}`;
}

function df(args: string[], env: ExecEnv): ExecResult {
  const h = args.some((a) => /^-\w*h/.test(a));
  const mem = Number(/(\d+)/.exec(env.guest.config.memory ?? '2048')?.[1] ?? 2048) * 1024 ** 2;
  const rows: [string, number, number, string][] = [
    ['udev', Math.round(mem * 0.48), 0, '/dev'],
    ['tmpfs', Math.round(mem * 0.1), 598_016, '/run'],
    ...guestFilesystems(env.guest).map((fs): [string, number, number, string] => [
      fs.dev,
      fs.total,
      fs.used,
      fs.mountpoint,
    ]),
    ['tmpfs', Math.round(mem * 0.5), 0, '/dev/shm'],
    ['tmpfs', 5 * 1024 ** 2, 0, '/run/lock'],
  ];
  const size = (n: number) => (h ? human(n) : String(Math.ceil(n / 1024)));
  const lines = rows.map(([fs, total, used, mount]) => {
    const pct = total === 0 ? 0 : Math.ceil((used * 100) / total);
    return [
      fs.padEnd(15),
      size(total).padStart(h ? 5 : 9),
      size(used).padStart(h ? 5 : 9),
      size(total - used).padStart(h ? 5 : 9),
      `${pct}%`.padStart(4),
      mount,
    ].join(' ');
  });
  const head = h
    ? 'Filesystem      Size  Used Avail Use% Mounted on'
    : 'Filesystem      1K-blocks      Used Available Use% Mounted on';
  return done(`${[head, ...lines].join('\n')}\n`);
}

function sleep(args: string[]): ExecResult {
  if (args.length === 0) return fail('sleep', 'missing operand');
  let ms = 0;
  for (const arg of args) {
    if (arg === 'infinity' || arg === 'inf') return { ...done(''), durationMs: undefined };
    const match = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(arg);
    if (!match) return fail('sleep', `invalid time interval '${arg}'`);
    const factor = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] ?? ''] ?? 1;
    ms += Number(match[1]) * factor * 1000;
  }
  return { ...done(''), durationMs: Math.round(ms) };
}

function seq(args: string[]): ExecResult {
  if (args.length === 0) return fail('seq', 'missing operand');
  const bad = args.find((a) => !/^[+-]?\d+$/.test(a));
  if (bad !== undefined) return fail('seq', `invalid floating point argument: '${bad}'`);
  const [first, step, last] =
    args.length === 1
      ? [1, 1, Number(args[0])]
      : args.length === 2
        ? [Number(args[0]), 1, Number(args[1])]
        : [Number(args[0]), Number(args[1]), Number(args[2])];
  const chunks: string[] = [];
  let size = 0;
  for (let n = first; step > 0 ? n <= last : n >= last; n += step) {
    const line = `${n}\n`;
    chunks.push(line);
    size += line.length;
    if (size >= GENERATE_LIMIT || step === 0) break;
  }
  return done(chunks.join(''));
}

function ls(args: string[], env: ExecEnv): ExecResult {
  const paths = args.filter((a) => !a.startsWith('-'));
  let out = '';
  let err = '';
  for (const path of paths.length > 0 ? paths : ['/']) {
    const found = lookupFile(env.guest, path);
    if (found.kind === 'missing') err += `ls: cannot access '${path}': No such file or directory\n`;
    else if (found.kind === 'file') out += `${path}\n`;
    else out += found.entries.map((e) => `${e}\n`).join('');
  }
  return done(out, err ? 2 : 0, err);
}

function date(args: string[], env: ExecEnv): ExecResult {
  const d = new Date(env.now);
  if (args.includes('+%s')) return done(`${Math.floor(env.now / 1000)}\n`);
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  const day = String(d.getUTCDate()).padStart(2, ' ');
  return done(
    `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${day} ${time} UTC ${d.getUTCFullYear()}\n`,
  );
}

function uptime(_args: string[], env: ExecEnv): ExecResult {
  const d = new Date(env.now);
  const up = Math.max(0, Math.floor((env.now - (env.guest.bootedAt ?? env.now)) / 1000));
  const days = Math.floor(up / 86_400);
  const hm = `${Math.floor((up % 86_400) / 3600)}:${two(Math.floor((up % 3600) / 60))}`;
  const upText = days > 0 ? `${days} day${days === 1 ? '' : 's'}, ${hm.padStart(5)}` : hm;
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  return done(` ${time} up ${upText},  0 users,  load average: 0.08, 0.03, 0.01\n`);
}

type Program = (args: string[], env: ExecEnv) => ExecResult;

const LINUX: Readonly<Record<string, Program>> = {
  echo,
  cat,
  uname,
  hostname,
  whoami: () => done('root\n'),
  id: () => done('uid=0(root) gid=0(root) groups=0(root)\n'),
  systemctl,
  df,
  sleep,
  true: () => done(''),
  false: () => done('', 1),
  seq,
  yes: () => ({ ...done(''), durationMs: undefined }),
  ls,
  date,
  uptime,
  sh: (args, env) => shell('sh', args, env, runProgram),
  bash: (args, env) => shell('bash', args, env, runProgram),
};

const WINDOWS: Readonly<Record<string, Program>> = {
  hostname: (_a, env) => done(`${guestHostname(env.guest)}\r\n`),
  whoami: () => done('nt authority\\system\r\n'),
  cmd: windowsCmd,
};

function windowsCmd(args: string[], env: ExecEnv): ExecResult {
  const index = args.findIndex((a) => /^\/c$/i.test(a));
  if (index < 0) return done('Microsoft Windows [Version 10.0.26100.6584]\r\n');
  const [name = '', ...rest] = args.slice(index + 1);
  if (/^echo$/i.test(name)) return done(`${rest.join(' ')}\r\n`);
  if (/^ver$/i.test(name)) return done('\r\nMicrosoft Windows [Version 10.0.26100.6584]\r\n');
  const program = WINDOWS[name.toLowerCase().replace(/\.exe$/, '')];
  if (program && name.toLowerCase() !== 'cmd') return program(rest, env);
  return done(
    '',
    1,
    `'${name}' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n`,
  );
}

const LINUX_DIRS = ['/bin', '/usr/bin', '/sbin', '/usr/sbin', '/usr/local/bin'];

/** PATH lookup (G_SPAWN_SEARCH_PATH), or the glib spawn error qemu-ga reports. */
function resolve(guest: Guest, argv0: string): Program {
  const windows = guestOs(guest).family === 'windows';
  const table = windows ? WINDOWS : LINUX;
  const missing = () =>
    new SpawnError(`Failed to execute child process “${argv0}” (No such file or directory)`);
  if (windows) {
    const base =
      argv0
        .split(/[\\/]/)
        .pop()
        ?.toLowerCase()
        .replace(/\.exe$/, '') ?? '';
    const program = table[base];
    if (!program) throw missing();
    return program;
  }
  if (!argv0.includes('/')) {
    const program = Object.hasOwn(table, argv0) ? table[argv0] : undefined;
    if (!program) throw missing();
    return program;
  }
  const path = guestPath(guest, argv0);
  const dir = path.slice(0, path.lastIndexOf('/')) || '/';
  const base = path.slice(path.lastIndexOf('/') + 1);
  const program = Object.hasOwn(table, base) ? table[base] : undefined;
  if (program && LINUX_DIRS.includes(dir)) return program;
  if (lookupFile(guest, path).kind !== 'missing') {
    throw new SpawnError(`Failed to execute child process “${argv0}” (Permission denied)`);
  }
  throw missing();
}

/** Run one program as qemu-ga's guest-exec starts it; throws SpawnError if it cannot start. */
export function runProgram(argv: readonly string[], env: ExecEnv): ExecResult {
  const [argv0 = '', ...args] = argv;
  return resolve(env.guest, argv0)([...args], env);
}
