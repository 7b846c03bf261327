// Power actions on a guest: POST /nodes/{node}/{qemu|lxc}/{vmid}/status/{action}, each starting a
// Proxmox task. Each is judged against the guest's state first (PVE would fail the task anyway,
// later and less clearly), and its preview says what it means for the guest as it is now.

import { z } from 'zod';
import type { ToolSpec } from '../calls/tool-spec';
import { confirm, guestTarget, waitArgs } from './common';
import { defineGuestAction, type Verdict } from '../writes/guest-action';
import { guestLabel, guestPath, type GuestRef, type GuestState } from '../proxmox/guest-state';

const baseInput = z.strictObject({ ...guestTarget, confirm, ...waitArgs });

/** Locks block every power action but resuming a hibernated VM (its lock is `suspended`). */
function locked(g: GuestRef, s: GuestState, allow: string[] = []): Verdict | null {
  if (!s.lock || allow.includes(s.lock)) return null;
  return {
    ok: false,
    reason: `${guestLabel(g, s.name ?? undefined)} is locked (${s.lock}): Proxmox refuses this until the operation holding the lock ends.`,
  };
}

const paused = (s: GuestState): boolean =>
  s.qmpstatus === 'paused' || s.qmpstatus === 'suspended' || s.qmpstatus === 'prelaunch';

function mustRun(g: GuestRef, s: GuestState): Verdict | null {
  if (s.status === 'running') return null;
  return {
    ok: false,
    reason: `${guestLabel(g, s.name ?? undefined)} is not running (it is ${s.status}).`,
  };
}

/** Asks a running guest's OS to act: refused unless it runs and no lock holds it. */
const askGuest = (g: GuestRef, s: GuestState, note: string): Verdict =>
  mustRun(g, s) ?? locked(g, s) ?? { ok: true, note };

/** The guest is as the action would leave it: nothing is sent. */
const already = (note: string): Verdict => ({ ok: 'unchanged', note });

interface PowerSpec {
  action: 'start' | 'shutdown' | 'stop' | 'reboot' | 'suspend' | 'resume';
  title: string;
  description: string;
  destructive: boolean;
  idempotent: boolean;
  judge(g: GuestRef, s: GuestState, args: { force_stop?: boolean }): Verdict;
}

const POWER: PowerSpec[] = [
  {
    action: 'start',
    title: 'Start a guest',
    description:
      'Start a VM or container. Requires confirm=true; previews (with its current state) otherwise.',
    destructive: false,
    idempotent: true,
    judge: (g, s) => {
      const who = guestLabel(g, s.name ?? undefined);
      if (s.template)
        return {
          ok: false,
          reason: `${who} is a template; templates never run (clone it to get a guest that can).`,
        };
      if (s.status === 'running') {
        return paused(s)
          ? { ok: false, reason: `${who} is running but paused: resume it with pve_resume_vm.` }
          : already('It is already running.');
      }
      return (
        locked(g, s, ['suspended']) ?? {
          ok: true,
          note:
            s.lock === 'suspended'
              ? 'It was hibernated: starting resumes it from its saved state.'
              : 'It boots the guest.',
        }
      );
    },
  },
  {
    action: 'shutdown',
    title: 'Shut down a guest',
    description:
      'Cleanly shut down a VM or container (the guest OS is asked); force_stop stops it after timeout s. Requires confirm=true.',
    destructive: false,
    idempotent: true,
    judge: (g, s, args) => {
      if (s.status === 'stopped') return already('It is already stopped.');
      if (g.vm_type === 'qemu' && paused(s) && !args.force_stop) {
        return {
          ok: false,
          reason: `${guestLabel(g, s.name ?? undefined)} is paused, and a paused VM cannot shut down: resume it first, or pass force_stop: true.`,
        };
      }
      return askGuest(
        g,
        s,
        'A clean shutdown: the guest OS is asked (ACPI or the QEMU guest agent) and decides; if it does not stop in time the task fails, unless force_stop stops it then.',
      );
    },
  },
  {
    action: 'stop',
    title: 'Stop a guest (hard power-off)',
    description:
      'Hard power-off of a VM or container: unsaved data in the guest is lost. Prefer pve_shutdown_vm. Requires confirm=true.',
    destructive: true,
    idempotent: true,
    judge: (g, s) => {
      if (s.status === 'stopped') return already('It is already stopped.');
      return (
        locked(g, s) ?? {
          ok: true,
          note: 'Stop is a hard power-off: the guest OS is not asked, and what it had not written to disk is lost. Use pve_shutdown_vm for a clean shutdown.',
        }
      );
    },
  },
  {
    action: 'reboot',
    title: 'Reboot a guest',
    description:
      'Cleanly reboot a running VM or container (the guest OS is asked). Requires confirm=true.',
    destructive: false,
    idempotent: false,
    judge: (g, s) =>
      askGuest(
        g,
        s,
        'A clean reboot: the guest OS is asked to restart; running programs are ended by it.',
      ),
  },
  {
    action: 'suspend',
    title: 'Suspend a guest',
    description:
      'Pause a running VM (its memory stays) or checkpoint a container. Resume with pve_resume_vm. Requires confirm=true.',
    destructive: false,
    idempotent: true,
    judge: (g, s) => {
      const notRunning = mustRun(g, s);
      if (notRunning) return notRunning;
      if (paused(s)) return already('It is already paused.');
      const note =
        g.vm_type === 'qemu'
          ? 'The VM is paused: its CPUs stop, its memory stays; nothing is lost.'
          : 'The container is checkpointed to disk and stopped until pve_resume_vm restores it.';
      return locked(g, s) ?? { ok: true, note };
    },
  },
  {
    action: 'resume',
    title: 'Resume a suspended guest',
    description: 'Resume a paused VM or a checkpointed container. Requires confirm=true.',
    destructive: false,
    idempotent: true,
    judge: (g, s) => {
      // A suspended container is checkpointed and stopped (lxc-checkpoint); Proxmox decides.
      if (g.vm_type === 'lxc')
        return (
          locked(g, s) ?? {
            ok: true,
            note: 'The container is restored from its checkpoint and carries on.',
          }
        );
      const notRunning = mustRun(g, s);
      if (notRunning) return notRunning;
      if (!paused(s)) return already('It is running, not paused.');
      return locked(g, s) ?? { ok: true, note: 'The VM carries on where it was paused.' };
    },
  },
];

const shutdownInput = baseInput.extend({
  timeout: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .optional()
    .describe('Seconds to wait for the guest to shut down.'),
  force_stop: z
    .boolean()
    .optional()
    .describe('Stop the guest if it has not shut down after timeout.'),
});

export const POWER_TOOLS: ToolSpec[] = POWER.map((p) =>
  defineGuestAction({
    name: `pve_${p.action}_vm`,
    scope: 'pve:operate',
    title: p.title,
    description: p.description,
    destructive: p.destructive,
    idempotent: p.idempotent,
    input: p.action === 'shutdown' ? shutdownInput : baseInput,
    request: (args) => {
      const params: Record<string, string> = {};
      const a = args as z.output<typeof shutdownInput>;
      if (a.timeout !== undefined) params.timeout = String(a.timeout);
      if (a.force_stop !== undefined) params.forceStop = a.force_stop ? '1' : '0';
      return { method: 'POST', path: guestPath(args, 'status', p.action), params };
    },
    judge: (args, state) => p.judge(args, state, args as { force_stop?: boolean }),
    doing: () => p.action,
  }),
);
