// The QEMU guest agent's read-only commands (qemu-server API2/Qemu/Agent.pm register_command):
// network-get-interfaces, ping (POST), info, get-osinfo, get-fsinfo, get-host-name. Each needs
// the agent configured, the VM running and the agent answering, in that order
// (assert_agent_available), and answers QGA's reply wrapped in {result}.
import { perm } from '../access/permissions.ts';
import type { Guest } from '../cluster/cluster-state.ts';
import { agentEnabled, parseProps } from '../cluster/guest-config.ts';
import { fsinfo, guestAddress, guestHostname, guestOs } from '../cluster/guest-os.ts';
import { dieError } from '../schema/pve-error.ts';
import {
  GUEST_PARAMS,
  type HandlerContext,
  type HttpMethod,
  type Route,
} from './handler-context.ts';
import { loadGuest } from './guest-helpers.ts';

/** assert_agent_available: configured, running (on this node), answering guest-ping. */
export function assertAgentAvailable(guest: Guest): void {
  if (guest.config.agent === undefined) throw dieError('No QEMU guest agent configured');
  if (guest.status !== 'running') throw dieError(`VM ${guest.vmid} is not running`);
  // guest-ping times out when the agent is down, the VM is paused, or (agent: 0) there is no channel
  const answers = guest.agentRunning && agentEnabled(guest.config) && guest.qmpstatus === 'running';
  if (!answers) throw dieError('QEMU guest agent is not running');
}

/** load_config, then assert_agent_available. */
export function agentGuest(ctx: HandlerContext): Guest {
  const guest = loadGuest(ctx, 'qemu');
  assertAgentAvailable(guest);
  return guest;
}

/** A stable address per VM and NIC in the seeded 10.10.0.0/24 LAN. */
const address = guestAddress;

function interfaces(guest: Guest, now: number): unknown[] {
  const stats = (n: number) => ({
    'rx-bytes': guest.netin + n,
    'rx-packets': Math.floor(guest.netin / 1400) + n,
    'rx-errs': 0,
    'rx-dropped': 0,
    'tx-bytes': guest.netout + n,
    'tx-packets': Math.floor(guest.netout / 1400) + n,
    'tx-errs': 0,
    'tx-dropped': 0,
  });
  const loopback = {
    name: 'lo',
    'hardware-address': '00:00:00:00:00:00',
    'ip-addresses': [
      { 'ip-address-type': 'ipv4', 'ip-address': '127.0.0.1', prefix: 8 },
      { 'ip-address-type': 'ipv6', 'ip-address': '::1', prefix: 128 },
    ],
    statistics: stats(now % 1000),
  };
  const nics = Object.keys(guest.config)
    .filter((key) => /^net\d+$/.test(key))
    .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)))
    .map((key) => {
      const index = Number(key.slice(3));
      const net = parseProps(guest.config[key] ?? '', 'model');
      const mac =
        Object.entries(net).find(
          ([k]) => k !== 'bridge' && /^[0-9A-F]{2}(:[0-9A-F]{2}){5}$/i.test(net[k] ?? ''),
        )?.[1] ??
        net.macaddr ??
        '';
      const suffix = mac.toLowerCase().split(':').slice(3).join('');
      return {
        name: `eth${index}`,
        'hardware-address': mac.toLowerCase(),
        'ip-addresses': [
          { 'ip-address-type': 'ipv4', 'ip-address': address(guest.vmid, index), prefix: 24 },
          {
            'ip-address-type': 'ipv6',
            'ip-address': `fe80::be24:11ff:fe${suffix.slice(0, 2)}:${suffix.slice(2)}`,
            prefix: 64,
          },
        ],
        statistics: stats(index),
      };
    });
  return [loopback, ...nics];
}

function networkGetInterfaces(ctx: HandlerContext): unknown {
  const guest = agentGuest(ctx);
  return { result: interfaces(guest, ctx.now) };
}

/** QGA's command list (guest-info), as qemu-ga 8.x-10.x registers them on Linux. */
const QGA_COMMANDS = [
  'guest-sync-delimited',
  'guest-sync',
  'guest-ping',
  'guest-get-time',
  'guest-set-time',
  'guest-info',
  'guest-shutdown',
  'guest-file-open',
  'guest-file-close',
  'guest-file-read',
  'guest-file-write',
  'guest-file-seek',
  'guest-file-flush',
  'guest-fsfreeze-status',
  'guest-fsfreeze-freeze',
  'guest-fsfreeze-freeze-list',
  'guest-fsfreeze-thaw',
  'guest-fstrim',
  'guest-suspend-disk',
  'guest-suspend-ram',
  'guest-suspend-hybrid',
  'guest-network-get-interfaces',
  'guest-get-vcpus',
  'guest-set-vcpus',
  'guest-get-disks',
  'guest-get-fsinfo',
  'guest-set-user-password',
  'guest-get-memory-blocks',
  'guest-set-memory-blocks',
  'guest-get-memory-block-info',
  'guest-exec-status',
  'guest-exec',
  'guest-get-host-name',
  'guest-get-users',
  'guest-get-timezone',
  'guest-get-osinfo',
  'guest-get-devices',
  'guest-ssh-get-authorized-keys',
  'guest-ssh-add-authorized-keys',
  'guest-ssh-remove-authorized-keys',
  'guest-get-diskstats',
  'guest-get-cpustats',
];

/** Commands whose success QGA never reports (the guest is gone by then). */
const NO_SUCCESS_RESPONSE = new Set([
  'guest-shutdown',
  'guest-suspend-disk',
  'guest-suspend-ram',
  'guest-suspend-hybrid',
]);

const COMMANDS: Readonly<Record<string, (guest: Guest) => unknown>> = {
  ping: () => ({}),
  info: (guest) => ({
    version: guestOs(guest).agentVersion,
    supported_commands: QGA_COMMANDS.map((name) => ({
      name,
      enabled: true,
      'success-response': !NO_SUCCESS_RESPONSE.has(name),
    })),
  }),
  'get-osinfo': (guest) => ({ ...guestOs(guest).osinfo }),
  'get-fsinfo': (guest) => fsinfo(guest),
  'get-host-name': (guest) => ({ 'host-name': guestHostname(guest) }),
};

/** One register_command endpoint: perms `<priv>` or VM.GuestAgent.Unrestricted. */
function command(name: keyof typeof COMMANDS, method: HttpMethod): Route {
  const run = COMMANDS[name];
  return {
    method,
    path: `/nodes/{node}/qemu/{vmid}/agent/${name}`,
    permissions: perm('/vms/{vmid}', ['VM.GuestAgent.Audit', 'VM.GuestAgent.Unrestricted'], true),
    schema: GUEST_PARAMS,
    handle: (ctx) => ({ result: run?.(agentGuest(ctx)) }),
  };
}

export const AGENT_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces',
    permissions: perm('/vms/{vmid}', ['VM.GuestAgent.Audit', 'VM.GuestAgent.Unrestricted'], true),
    schema: GUEST_PARAMS,
    handle: networkGetInterfaces,
  },
  command('ping', 'POST'),
  command('info', 'GET'),
  command('get-osinfo', 'GET'),
  command('get-fsinfo', 'GET'),
  command('get-host-name', 'GET'),
];
