// pve_get_vm_status: a guest's current state (status, CPU, memory, disk, uptime, lock), and with
// guest_ips its IP addresses: from the QEMU guest agent for a VM, from the container's own
// interfaces for LXC. When they cannot be had (stopped, no agent) the answer says why, as data.

import { z } from 'zod';
import { defineReadTool, type ToolContext } from '../../calls/tool-spec';
import { PveError } from '../../proxmox/errors';
import { agentInterfaces, lxcInterfaces } from '../../proxmox/schemas';
import { guestTarget, round2, toGib, toMib } from '../common';
import { outputExtras } from '../../calls/result';
import {
  describeState,
  guestAt,
  guestLabel,
  guestPath,
  readGuestState,
  type GuestRef,
  type GuestState,
} from '../../proxmox/guest-state';

const iface = z.object({
  name: z.string(),
  mac: z.string().nullable(),
  addresses: z.array(z.string()),
});
type Iface = z.output<typeof iface>;

export const getVmStatus = defineReadTool({
  name: 'pve_get_vm_status',
  title: 'Status of a guest',
  description:
    'State of a VM or container: status, CPU, memory, disk, uptime, lock; guest_ips adds its IP addresses.',
  input: z.strictObject({
    ...guestTarget,
    guest_ips: z
      .boolean()
      .default(false)
      .describe('Also read the IP addresses from inside the guest.'),
  }),
  output: z.object({
    vmid: z.number().optional(),
    name: z.string().nullable().optional(),
    status: z.string().optional(),
    qmpstatus: z.string().nullable().optional(),
    lock: z.string().nullable().optional(),
    template: z.boolean().optional(),
    cpu_percent: z.number().nullable().optional(),
    cpus: z.number().nullable().optional(),
    mem_mib: z.number().nullable().optional(),
    maxmem_mib: z.number().nullable().optional(),
    maxdisk_gib: z.number().nullable().optional(),
    uptime_s: z.number().nullable().optional(),
    agent_enabled: z.boolean().optional(),
    interfaces: z.array(iface).nullable().optional(),
    ips_note: z.string().nullable().optional(),
    ...outputExtras,
  }),
  // The guest it acts on, for target.* rules: those its status answers come from the status it
  // shows (../../proxmox/target-facts.ts).
  target: guestAt,
  async run(args, ctx) {
    // The guest as its policy read it a moment ago, where a target.* rule did: read once.
    // Never past a person's answer: the facts are then read again, and nothing before kept.
    const s = await readGuestState(ctx.pve(), args, true);
    const r = s.raw;
    const ips = args.guest_ips ? await readIps(ctx, args, s) : { interfaces: null, note: null };
    const structured = {
      vmid: args.vmid,
      name: s.name,
      status: s.status,
      qmpstatus: s.qmpstatus,
      lock: s.lock,
      template: s.template,
      cpu_percent: r.cpu === undefined ? null : round2(r.cpu * 100),
      cpus: r.cpus ?? null,
      mem_mib: toMib(r.mem),
      maxmem_mib: toMib(r.maxmem),
      maxdisk_gib: toGib(r.maxdisk),
      uptime_s: r.uptime ?? null,
      agent_enabled: s.agent,
      ...(args.guest_ips ? { interfaces: ips.interfaces, ips_note: ips.note } : {}),
    };
    const addresses =
      ips.interfaces?.flatMap((i) => i.addresses.map((a) => `${i.name} ${a}`)) ?? [];
    const text =
      `${guestLabel(args, s.name ?? undefined)} on ${args.node} is ${describeState(s)}${s.lock ? `, locked (${s.lock})` : ''}` +
      `${structured.cpu_percent !== null && s.status === 'running' ? `, CPU ${structured.cpu_percent}%` : ''}` +
      `${structured.maxmem_mib ? `, memory ${structured.mem_mib ?? 0}/${structured.maxmem_mib} MiB` : ''}.` +
      (args.guest_ips
        ? addresses.length
          ? `\nIP addresses:\n${addresses.join('\n')}`
          : `\nNo IP addresses: ${ips.note}`
        : '');
    return { structured, text };
  },
});

async function readIps(
  ctx: ToolContext,
  g: GuestRef,
  s: GuestState,
): Promise<{ interfaces: Iface[] | null; note: string | null }> {
  const who = guestLabel(g, s.name ?? undefined);
  if (s.status !== 'running') return { interfaces: null, note: `${who} is not running.` };
  if (g.vm_type === 'qemu' && !s.agent) {
    return {
      interfaces: null,
      note: `the QEMU guest agent is not enabled for ${who} (set agent: 1 in its config and run qemu-guest-agent inside it).`,
    };
  }
  try {
    if (g.vm_type === 'lxc') {
      const list = (await ctx.pve().get(guestPath(g, 'interfaces'), lxcInterfaces)) ?? [];
      const interfaces = list
        .filter((i) => i.name !== 'lo')
        .map((i) => ({
          name: i.name,
          mac: i.hwaddr ?? null,
          addresses: i['ip-addresses']
            ? i['ip-addresses'].flatMap((a) =>
                a['ip-address']
                  ? [`${a['ip-address']}${a.prefix !== undefined ? `/${a.prefix}` : ''}`]
                  : [],
              )
            : [i.inet, i.inet6].filter((a): a is string => !!a),
        }));
      return {
        interfaces,
        note: interfaces.some((i) => i.addresses.length)
          ? null
          : 'the container reports no addresses yet.',
      };
    }
    const answer = await ctx
      .pve()
      .get(guestPath(g, 'agent', 'network-get-interfaces'), agentInterfaces);
    const interfaces = answer.result
      .filter((i) => i.name !== 'lo')
      .map((i) => ({
        name: i.name,
        mac: i['hardware-address'] ?? null,
        addresses: (i['ip-addresses'] ?? []).map(
          (a) => `${a['ip-address']}${a.prefix !== undefined ? `/${a.prefix}` : ''}`,
        ),
      }));
    return {
      interfaces,
      note: interfaces.some((i) => i.addresses.length)
        ? null
        : 'the guest agent reports no addresses yet.',
    };
  } catch (err) {
    // The agent not answering is a normal state of a guest, not a failure of this call.
    if (g.vm_type === 'qemu' && err instanceof PveError && err.failure.kind === 'server_error') {
      return {
        interfaces: null,
        note: `the QEMU guest agent did not answer (${err.failure.message.replace(/\s+$/, '')}); is qemu-guest-agent running in ${who}?`,
      };
    }
    throw err;
  }
}
