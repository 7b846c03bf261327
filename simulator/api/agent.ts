// GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces (qemu-server API2/Qemu/Agent.pm):
// the guest agent must be configured, the VM running and the agent answering, in that order
// (assert_agent_available); the answer is QGA's interface list wrapped in {result}.
import { perm } from '../access/permissions.ts';
import type { Guest } from '../cluster/cluster-state.ts';
import { agentEnabled, parseProps } from '../cluster/guest-config.ts';
import { dieError } from '../schema/pve-error.ts';
import { GUEST_PARAMS, type HandlerContext, type Route } from './handler-context.ts';
import { loadGuest } from './guest-helpers.ts';

/** A stable address per VM and NIC in the seeded 10.10.0.0/24 LAN. */
function address(vmid: number, index: number): string {
  return `10.10.${index}.${(vmid % 200) + 20}`;
}

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
  const guest = loadGuest(ctx, 'qemu');
  if (guest.config.agent === undefined) throw dieError('No QEMU guest agent configured');
  if (guest.status !== 'running') throw dieError(`VM ${guest.vmid} is not running`);
  // guest-ping times out when the agent is down, the VM is paused, or (agent: 0) there is no channel
  const answers = guest.agentRunning && agentEnabled(guest.config) && guest.qmpstatus === 'running';
  if (!answers) throw dieError('QEMU guest agent is not running');
  return { result: interfaces(guest, ctx.now) };
}

export const AGENT_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces',
    permissions: perm('/vms/{vmid}', ['VM.GuestAgent.Audit', 'VM.GuestAgent.Unrestricted'], true),
    schema: GUEST_PARAMS,
    handle: networkGetInterfaces,
  },
];
