// systemctl inside a simulated guest: `status` and `is-active` for the units a guest runs (ssh,
// cron, qemu-guest-agent, journald, plus nginx/apache2 on web*, postgresql on db*, smbd on files*,
// kubelet on k8s*), with systemd 257's status layout; an unknown unit exits 4.
import type { Guest } from './cluster-state.ts';
import { guestHostname } from './guest-os.ts';
import { DAYS, done, type ExecEnv, type ExecResult, MONTHS, two } from './program-result.ts';

interface Unit {
  readonly name: string;
  readonly description: string;
  readonly state: 'running' | 'exited' | 'dead';
  readonly docs: readonly string[];
  readonly main?: string;
}

function units(guest: Guest): Unit[] {
  const name = guest.config.name ?? '';
  const list: Unit[] = [
    {
      name: 'ssh.service',
      description: 'OpenBSD Secure Shell server',
      state: 'running',
      docs: ['man:sshd(8)', 'man:sshd_config(5)'],
      main: 'sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups',
    },
    {
      name: 'cron.service',
      description: 'Regular background program processing daemon',
      state: 'running',
      docs: ['man:cron(8)'],
      main: '/usr/sbin/cron -f',
    },
    {
      name: 'qemu-guest-agent.service',
      description: 'QEMU Guest Agent',
      state: 'running',
      docs: ['http://wiki.qemu.org/Features/GuestAgent'],
      main: '/usr/sbin/qemu-ga',
    },
    {
      name: 'systemd-journald.service',
      description: 'Journal Service',
      state: 'running',
      docs: ['man:systemd-journald.service(8)', 'man:journald.conf(5)'],
      main: '/usr/lib/systemd/systemd-journald',
    },
  ];
  if (/web/.test(name)) {
    list.push(
      {
        name: 'nginx.service',
        description: 'A high performance web server and a reverse proxy server',
        state: 'running',
        docs: ['man:nginx(8)'],
        main: 'nginx: master process /usr/sbin/nginx -g daemon on; master_process on;',
      },
      {
        name: 'apache2.service',
        description: 'The Apache HTTP Server',
        state: 'dead',
        docs: ['https://httpd.apache.org/docs/2.4/'],
      },
    );
  }
  if (/db/.test(name)) {
    list.push({
      name: 'postgresql.service',
      description: 'PostgreSQL RDBMS',
      state: 'exited',
      docs: [],
    });
  }
  if (/files/.test(name)) {
    list.push({
      name: 'smbd.service',
      description: 'Samba SMB Daemon',
      state: 'running',
      docs: ['man:smbd(8)', 'man:samba(7)', 'man:smb.conf(5)'],
      main: '/usr/sbin/smbd --foreground --no-process-group',
    });
  }
  if (/k8s/.test(name)) {
    list.push({
      name: 'kubelet.service',
      description: 'kubelet: The Kubernetes Node Agent',
      state: 'running',
      docs: ['https://kubernetes.io/docs/'],
      main: '/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml',
    });
  }
  return list;
}

const ALIASES: Readonly<Record<string, string>> = { 'sshd.service': 'ssh.service' };

function findUnit(guest: Guest, name: string): Unit | undefined {
  const full = /\.[a-z]+$/.test(name) ? name : `${name}.service`;
  const canonical = ALIASES[full] ?? full;
  return units(guest).find((u) => u.name === canonical);
}

/** systemd's "1 week 3 days ago" / "2h 5min ago" (the two largest units). */
function ago(ms: number): string {
  const parts: [number, string][] = [
    [7 * 86_400, ' week'],
    [86_400, ' day'],
    [3600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  let rest = Math.max(0, Math.floor(ms / 1000));
  const out: string[] = [];
  for (const [size, unit] of parts) {
    const n = Math.floor(rest / size);
    rest %= size;
    if (n === 0 || out.length === 2) continue;
    out.push(`${n}${unit}${unit.startsWith(' ') && n !== 1 ? 's' : ''}`);
  }
  return `${out.join(' ') || '0s'} ago`;
}

function stamp(ms: number, long: boolean): string {
  const d = new Date(ms);
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  if (!long) return `${MONTHS[d.getUTCMonth()]} ${two(d.getUTCDate())} ${time}`;
  const day = `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;
  return `${DAYS[d.getUTCDay()]} ${day} ${time} UTC`;
}

function unitStatus(unit: Unit, env: ExecEnv): ExecResult {
  const host = guestHostname(env.guest);
  const since = (env.guest.bootedAt ?? env.now) + 6000;
  const pid = 700 + ((unit.name.length * 37) % 400);
  const active = unit.state !== 'dead';
  const lines = [
    `${active ? '●' : '○'} ${unit.name} - ${unit.description}`,
    `     Loaded: loaded (/usr/lib/systemd/system/${unit.name}; ${active ? 'enabled' : 'disabled'}; preset: enabled)`,
    active
      ? `     Active: active (${unit.state}) since ${stamp(since, true)}; ${ago(env.now - since)}`
      : '     Active: inactive (dead)',
  ];
  for (const [i, doc] of unit.docs.entries()) {
    lines.push(`${i === 0 ? '       Docs:' : '            '} ${doc}`);
  }
  if (unit.state === 'running' && unit.main) {
    lines.push(
      `   Main PID: ${pid} (${unit.main.split(/[\s:]/)[0]?.split('/').pop()})`,
      '      Tasks: 1 (limit: 4602)',
      '     Memory: 3.1M (peak: 4.4M)',
      '        CPU: 45ms',
      `     CGroup: /system.slice/${unit.name}`,
      `             └─${pid} "${unit.main}"`,
    );
  }
  if (active) {
    lines.push(
      '',
      `${stamp(since, false)} ${host} systemd[1]: Starting ${unit.name} - ${unit.description}...`,
      `${stamp(since, false)} ${host} systemd[1]: Started ${unit.name} - ${unit.description}.`,
    );
  }
  return done(`${lines.join('\n')}\n`, active ? 0 : 3);
}

export function systemctl(args: string[], env: ExecEnv): ExecResult {
  const [verb = 'list-units', ...names] = args.filter((a) => !a.startsWith('-'));
  if (verb === 'is-active') {
    let out = '';
    let code = 0;
    for (const name of names) {
      const unit = findUnit(env.guest, name);
      const state = unit && unit.state !== 'dead' ? 'active' : 'inactive';
      if (state !== 'active') code = 3;
      out += `${state}\n`;
    }
    return done(out, code);
  }
  if (verb !== 'status') return done('', 1, `Unknown command verb '${verb}'.\n`);
  const results = names.map((name) => {
    const unit = findUnit(env.guest, name);
    if (unit) return unitStatus(unit, env);
    const full = /\.[a-z]+$/.test(name) ? name : `${name}.service`;
    return done('', 4, `Unit ${full} could not be found.\n`);
  });
  if (results.length === 0) return done(`● ${guestHostname(env.guest)}\n    State: running\n`);
  return {
    out: Buffer.concat(results.map((r) => r.out)),
    err: Buffer.concat(results.map((r) => r.err)),
    exitcode: Math.max(...results.map((r) => r.exitcode)),
    durationMs: 0,
  };
}
