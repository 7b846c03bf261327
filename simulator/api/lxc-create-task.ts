// The vzcreate worker: allocate rootfs and mount points (STORAGE:SIZE, 4 GiB by default), unpack
// the template (it must exist on this node), detect the OS from it, write the config with PVE's
// defaults (hostname CT<vmid>, memory/swap 512, net hwaddr), add the pool, start if asked, and
// (ha-managed=1) add it to HA.
// On error the new volumes and the placeholder config are removed.
import { blankGuest } from '../cluster/cluster-state.ts';
import type { Guest, NodeState } from '../cluster/cluster-state.ts';
import { bootGuest } from '../cluster/power.ts';
import { type TaskLog, WorkerDie } from '../cluster/tasks.ts';
import { findVolume, removeVolume } from '../cluster/volumes.ts';
import { uniqueTags } from './create-vm-task.ts';
import { startGuestTask } from './guest-helpers.ts';
import type { HandlerContext } from './handler-context.ts';
import { mountValue } from './lxc-config-update.ts';
import { printLxcNet } from './net-config.ts';

export interface LxcCreateRequest {
  readonly vmid: number;
  readonly node: NodeState;
  readonly params: Record<string, string>;
  readonly ostemplate: string;
  readonly storage: string;
  readonly unprivileged: boolean;
  readonly start: boolean;
  /** ha-managed=1: the worker adds ct:<vmid> to HA (state started when it starts the CT). */
  readonly haManaged?: boolean;
  readonly pool?: string;
  readonly password?: string;
}

const OSTYPES = [
  'debian',
  'devuan',
  'ubuntu',
  'centos',
  'fedora',
  'opensuse',
  'archlinux',
  'alpine',
  'gentoo',
  'nixos',
];

/** What LXC::Setup detects: the distribution named at the start of the template file. */
function detectOstype(template: string): string {
  const file = template.split('/').pop() ?? '';
  return OSTYPES.find((os) => file.startsWith(os)) ?? 'unmanaged';
}

function unpackLines(req: LxcCreateRequest, hostname: string): string[] {
  const file = req.ostemplate.split('/').pop() ?? '';
  return [
    'Creating filesystem with 1048576 4k blocks and 262144 inodes',
    'Filesystem UUID: 4f0b5a55-6d3c-4bd4-9d8a-3b0f2f1c6a77',
    `extracting archive '/var/lib/vz/template/cache/${file}'`,
    'Total bytes read: 521717760 (498MiB, 151MiB/s)',
    'Detected container architecture: amd64',
    "Creating SSH host key 'ssh_host_ed25519_key' - this may take some time ...",
    `done: SHA256:p6Xc8n3VhY2mB0rQk1lJt5oW9sZ7dE4aF2gH6iU8yTc root@${hostname}`,
  ];
}

export function spawnLxcCreateTask(ctx: HandlerContext, req: LxcCreateRequest): string {
  const placeholder: Guest = blankGuest(req.vmid, 'lxc', req.node.name);
  ctx.state.guests.set(req.vmid, placeholder);
  const allocated: string[] = [];
  const fail = (reason: string) => new WorkerDie(`unable to create CT ${req.vmid} - ${reason}`);
  return startGuestTask(ctx, 'vzcreate', req.vmid, () => ({
    commit: (log: TaskLog, now: number) => {
      const params = { ...req.params };
      params.rootfs ??= `${req.storage}:4`;
      const before = new Set(ctx.state.volumes);
      for (const key of Object.keys(params)
        .filter((k) => k === 'rootfs' || /^mp\d+$/.test(k))
        .sort()) {
        params[key] = mountValue(ctx, placeholder, key, params[key] ?? '', log);
      }
      allocated.push(
        ...ctx.state.volumes.filter((v) => !before.has(v)).map((v) => `${v.storage}:${v.volname}`),
      );
      if (!findVolume(ctx.state, req.node.name, req.ostemplate))
        throw fail(`can't find file '${req.ostemplate}'`);
      const hostname = params.hostname ?? `CT${req.vmid}`;
      log.info(...unpackLines(req, hostname));
      for (const key of Object.keys(params).filter((k) => /^net\d+$/.test(k)))
        params[key] = printLxcNet(params[key] ?? '');
      if (params.tags !== undefined) params.tags = uniqueTags(params.tags);
      placeholder.config = {
        arch: 'amd64',
        ostype: detectOstype(req.ostemplate),
        ...params,
        hostname,
        memory: params.memory ?? '512',
        swap: params.swap ?? '512',
        ...(req.unprivileged ? { unprivileged: '1' } : {}),
      };
      if (req.pool !== undefined) placeholder.pool = req.pool;
      if (req.start) bootGuest(ctx.state, placeholder, now);
      if (req.haManaged) {
        log.info('Add as HA resource');
        ctx.state.haResources.set(`ct:${req.vmid}`, {
          type: 'ct',
          state: req.start ? 'started' : 'stopped',
        });
      }
    },
    undo: () => {
      ctx.state.guests.delete(req.vmid);
      for (const volid of allocated) removeVolume(ctx.state, req.node.name, volid);
    },
  }));
}
