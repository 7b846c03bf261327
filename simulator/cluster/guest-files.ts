// The fake filesystem of a simulated guest, which guest-file-read and the simulated programs read:
// /etc (os-release, hostname, hosts, passwd, shadow, fstab, resolv.conf), /root/.ssh (a fake
// private key), /home/<user>/notes.txt (UTF-8), /var/log/syslog and a 20 MiB /var/log/syslog.1,
// and nginx's config on web guests; a few files under C:\\ on Windows. The secrets are fake and
// exist so that only the MCP server's own policy can keep them out.
import type { Guest } from './cluster-state.ts';
import { guestHostname, guestOs, type OsFamily } from './guest-os.ts';

const MIB = 1024 ** 2;

export type FileLookup =
  | { readonly kind: 'file'; readonly data: Buffer }
  | { readonly kind: 'dir'; readonly entries: readonly string[] }
  | { readonly kind: 'missing' };

const OS_RELEASE: Readonly<Record<Exclude<OsFamily, 'windows'>, string>> = {
  debian: [
    'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"',
    'NAME="Debian GNU/Linux"',
    'VERSION_ID="13"',
    'VERSION="13 (trixie)"',
    'VERSION_CODENAME=trixie',
    'DEBIAN_VERSION_FULL=13.1',
    'ID=debian',
    'HOME_URL="https://www.debian.org/"',
    'SUPPORT_URL="https://www.debian.org/support"',
    'BUG_REPORT_URL="https://bugs.debian.org/"',
    '',
  ].join('\n'),
  ubuntu: [
    'PRETTY_NAME="Ubuntu 24.04.3 LTS"',
    'NAME="Ubuntu"',
    'VERSION_ID="24.04"',
    'VERSION="24.04.3 LTS (Noble Numbat)"',
    'VERSION_CODENAME=noble',
    'ID=ubuntu',
    'ID_LIKE=debian',
    'HOME_URL="https://www.ubuntu.com/"',
    'SUPPORT_URL="https://help.ubuntu.com/"',
    'BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"',
    'PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"',
    'UBUNTU_CODENAME=noble',
    'LOGO=ubuntu-logo',
    '',
  ].join('\n'),
};

/** The size of /var/log/syslog.1, above PVE's 16 MiB file-read limit. */
export const BIG_LOG_BYTES = 20 * MIB + 4321;

let bigLog: Buffer | undefined;

/** A rotated syslog of BIG_LOG_BYTES, the same for every guest (built once, on first read). */
function bigLogData(): Buffer {
  if (bigLog) return bigLog;
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < BIG_LOG_BYTES; n++) {
    const sec = String(n % 60).padStart(2, '0');
    const min = String(Math.floor(n / 60) % 60).padStart(2, '0');
    const line = `2025-10-01T${String(Math.floor(n / 3600) % 24).padStart(2, '0')}:${min}:${sec}.${String(n % 1_000_000).padStart(6, '0')}+00:00 host app[${1200 + (n % 50)}]: request ${n} served in ${(n * 7) % 200}ms\n`;
    lines.push(line);
    size += line.length;
  }
  bigLog = Buffer.from(lines.join('')).subarray(0, BIG_LOG_BYTES);
  return bigLog;
}

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '000+00:00');

function syslog(guest: Guest, host: string): string {
  const boot = guest.bootedAt ?? 0;
  const at = (s: number) => `${iso(boot + s * 1000)} ${host}`;
  return [
    `${at(0)} kernel: Linux version ${guestOs(guest).osinfo['kernel-release']} (gcc 14.2.0)`,
    `${at(1)} systemd[1]: Detected virtualization kvm.`,
    `${at(1)} systemd[1]: Hostname set to <${host}>.`,
    `${at(3)} systemd[1]: Started systemd-journald.service - Journal Service.`,
    `${at(5)} systemd-networkd[412]: eth0: Gained carrier`,
    `${at(6)} systemd[1]: Started qemu-guest-agent.service - QEMU Guest Agent.`,
    `${at(6)} systemd[1]: Started ssh.service - OpenBSD Secure Shell server.`,
    `${at(7)} systemd[1]: Started cron.service - Regular background program processing daemon.`,
    `${at(7)} systemd[1]: Reached target multi-user.target - Multi-User System.`,
    `${at(3600)} CRON[2211]: (root) CMD (cd / && run-parts --report /etc/cron.hourly)`,
    `${at(3720)} sshd-session[2290]: Accepted publickey for debian from 10.10.0.5 port 51122 ssh2: ED25519 SHA256:simulatorFakeFingerprint`,
    `${at(3721)} sshd-session[2290]: pam_unix(sshd:session): session opened for user debian(uid=1000) by debian(uid=0)`,
    `${at(3900)} sudo[2330]:   debian : TTY=pts/0 ; PWD=/home/debian ; USER=root ; COMMAND=/usr/bin/apt update`,
    `${at(4200)} sshd-session[2290]: pam_unix(sshd:session): session closed for user debian`,
    `${at(7200)} CRON[2871]: (root) CMD (cd / && run-parts --report /etc/cron.hourly)`,
    '',
  ].join('\n');
}

function linuxFiles(guest: Guest): Record<string, string | Buffer> {
  const os = guestOs(guest);
  const family = os.family === 'ubuntu' ? 'ubuntu' : 'debian';
  const host = guestHostname(guest);
  const user = family === 'ubuntu' ? 'ubuntu' : 'debian';
  const files: Record<string, string | Buffer> = {
    '/etc/os-release': OS_RELEASE[family],
    '/usr/lib/os-release': OS_RELEASE[family],
    '/etc/hostname': `${host}\n`,
    '/etc/hosts': `127.0.0.1\tlocalhost\n127.0.1.1\t${host}\n\n::1\tlocalhost ip6-localhost ip6-loopback\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n`,
    '/etc/resolv.conf': 'nameserver 10.10.0.53\nsearch lab.example.com\n',
    '/etc/passwd': `root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nsshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n${user}:x:1000:1000:${user}:/home/${user}:/bin/bash\n`,
    '/etc/shadow': `root:$y$j9T$SIMULATORfakeSALT$simulatorFakeHashNotARealPasswordHash000000:20300:0:99999:7:::\ndaemon:*:20300:0:99999:7:::\nsshd:!:20300::::::\n${user}:$y$j9T$SIMULATORfakeSALT2$simulatorFakeHashNotARealPasswordHash111111:20300:0:99999:7:::\n`,
    '/etc/fstab': `# /etc/fstab: static file system information.\nPARTUUID=${guest.vmid}0000-01 / ext4 rw,discard,errors=remount-ro,x-systemd.growfs 0 1\nPARTUUID=${guest.vmid}0000-0f /boot/efi vfat defaults 0 0\n`,
    '/root/.ssh/id_ed25519': `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nSIMULATOR+FAKE+KEY+NOT+A+REAL+PRIVATE+KEY+${guest.vmid}+DO+NOT+USE+ANYWHERE+\n-----END OPENSSH PRIVATE KEY-----\n`,
    '/root/.ssh/authorized_keys':
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsimulatorOnlyKeyNotARealOne ops@example.com\n',
    [`/home/${user}/notes.txt`]:
      'Wartungsfenster: Dienstag 22:00–23:00 Uhr. Grüße, das Ops-Team ✓\n',
    '/var/log/syslog': syslog(guest, host),
    '/var/log/syslog.1': bigLogData(),
  };
  const name = guest.config.name ?? '';
  if (/web/.test(name)) {
    files['/etc/nginx/nginx.conf'] =
      'user www-data;\nworker_processes auto;\npid /run/nginx.pid;\nevents {\n\tworker_connections 768;\n}\nhttp {\n\tinclude /etc/nginx/sites-enabled/*;\n}\n';
  }
  return files;
}

function windowsFiles(guest: Guest): Record<string, string | Buffer> {
  return {
    'C:\\Windows\\System32\\drivers\\etc\\hosts':
      '# Copyright (c) 1993-2009 Microsoft Corp.\r\n#\r\n# localhost name resolution is handled within DNS itself.\r\n#\t127.0.0.1       localhost\r\n',
    'C:\\Windows\\win.ini':
      '; for 16-bit app support\r\n[fonts]\r\n[extensions]\r\n[mci extensions]\r\n[files]\r\n[Mail]\r\nMAPI=1\r\n',
    [`C:\\Users\\Public\\Documents\\${guestHostname(guest)}.txt`]: 'lab machine\r\n',
  };
}

function normalizeLinuxPath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** A path as the guest resolves it (relative paths from qemu-ga's working directory, '/'). */
export function guestPath(guest: Guest, path: string): string {
  if (guestOs(guest).family !== 'windows') return normalizeLinuxPath(path);
  return path.replace(/\//g, '\\').toLowerCase();
}

/** Look a path up in the guest's fake filesystem. */
export function lookupFile(guest: Guest, path: string): FileLookup {
  const windows = guestOs(guest).family === 'windows';
  const files = windows ? windowsFiles(guest) : linuxFiles(guest);
  const key = guestPath(guest, path);
  const sep = windows ? '\\' : '/';
  const entries = new Set<string>();
  for (const [name, content] of Object.entries(files)) {
    const norm = windows ? name.toLowerCase() : name;
    if (norm === key) {
      return { kind: 'file', data: typeof content === 'string' ? Buffer.from(content) : content };
    }
    const prefix = key.endsWith(sep) ? key : `${key}${sep}`;
    if (norm.startsWith(prefix)) {
      entries.add(name.slice(prefix.length).split(sep)[0] ?? '');
    }
  }
  if (entries.size > 0 || key === '/') return { kind: 'dir', entries: [...entries].sort() };
  return { kind: 'missing' };
}
