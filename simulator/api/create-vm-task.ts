// The qmcreate worker: PVE writes a config holding only `lock: create`, forks a task that
// allocates disks and writes the real config, then drops the lock (or removes the VM on error).
// Here the task's outcome is decided up front and applied when its time is up (settleTasks).
import type { ClusterState, Guest, NodeState, Task } from '../cluster/cluster-state.ts';
import type { DrivePlan } from './create-vm-drives.ts';
import { splitList } from '../schema/formats.ts';
import { encodeUpid } from '../cluster/upid.ts';
import { parseVolname, volumeExists } from '../cluster/volumes.ts';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

export interface CreateRequest {
  readonly vmid: number;
  readonly node: NodeState;
  readonly user: string;
  readonly params: Readonly<Record<string, string>>;
  readonly drives: readonly DrivePlan[];
  readonly start: boolean;
  readonly pool?: string;
  readonly now: number;
  readonly durationMs: number;
  /** A `taskExitStatus` fault overriding the computed outcome. */
  readonly forcedExitStatus?: string;
}

const isSuccess = (status: string) => status === 'OK' || /^WARNINGS: \d+$/.test(status);

/** PVE::GuestHelpers::get_unique_tags with default tag-style: lower-cased, sorted, unique. */
function uniqueTags(tags: string): string {
  return [...new Set(splitList(tags).map((tag) => tag.toLowerCase()))].sort().join(';');
}

/** Simulate create_disks: log like PVE, fail on the first volume that does not exist. */
interface DiskRun {
  readonly log: string[];
  readonly error?: string;
  /** Bytes per drive key of the disks allocated. */
  readonly sizes: Map<string, number>;
}

function runDisks(state: ClusterState, req: CreateRequest): DiskRun {
  const log: string[] = [];
  const sizes = new Map<string, number>();
  const counters = new Map<string, number>();
  for (const plan of req.drives) {
    const suffix = Object.entries(plan.drive)
      .filter(([key]) => key !== 'file' && key !== 'import-from')
      .map(([key, value]) => `,${key}=${value}`)
      .join('');
    if (plan.kind === 'new' && plan.storage) {
      const index = counters.get(plan.storage.id) ?? 0;
      counters.set(plan.storage.id, index + 1);
      const name = `vm-${req.vmid}-disk-${index}`;
      const size = plan.key === 'efidisk0' ? '1M' : plan.key === 'tpmstate0' ? '4M' : `${plan.sizeGiB}G`;
      if (plan.storage.type === 'lvmthin') log.push(`  Logical volume "${name}" created.`);
      const volume = `${plan.storage.id}:${name}${suffix},size=${size}`;
      log.push(`${plan.key}: successfully created disk '${volume}'`);
      sizes.set(plan.key, Math.round((plan.sizeGiB ?? 0) * GIB));
    } else if (plan.kind === 'cloudinit' && plan.storage) {
      const volume = `${plan.storage.id}:vm-${req.vmid}-cloudinit,media=cdrom`;
      log.push(`${plan.key}: successfully created disk '${volume}'`);
    } else if (plan.kind === 'existing') {
      const volid = plan.drive.file ?? '';
      if (!volumeExists(state, req.node, parseVolname(state, volid))) {
        return { log, error: `unable to create VM ${req.vmid} - volume ${volid} does not exist`, sizes };
      }
    }
  }
  return { log, sizes };
}

/** The guest as its final config describes it (qemu-server vmstatus defaults otherwise). */
function finalGuest(placeholder: Guest, req: CreateRequest, sizes: Map<string, number>): Partial<Guest> {
  const { params } = req;
  const memory = /^(?:current=)?(\d+)$/.exec(params.memory ?? '')?.[1];
  const cpus = Number(params.vcpus ?? 0) || Number(params.sockets ?? 1) * Number(params.cores ?? 1);
  const bootOrder = /order=([^,]+)/.exec(params.boot ?? '')?.[1]?.split(';') ?? [];
  const firstDisk = [...bootOrder, ...sizes.keys()].find((key) => sizes.has(key));
  const tags = params.tags === undefined ? '' : uniqueTags(params.tags);
  return {
    name: params.name ?? placeholder.name,
    cpus: Math.min(cpus, req.node.maxcpu),
    maxmem: Number(memory ?? 512) * MIB,
    maxdisk: firstDisk ? (sizes.get(firstDisk) ?? 0) : 0,
    template: params.template === '1',
    ...(tags ? { tags } : {}),
    ...(req.pool !== undefined ? { pool: req.pool } : {}),
  };
}

/** Create the locked placeholder guest and the task; returns the UPID. */
export function spawnCreateTask(state: ClusterState, req: CreateRequest): string {
  const placeholder: Guest = {
    vmid: req.vmid, type: 'qemu', node: req.node.name, name: `VM ${req.vmid}`, status: 'stopped',
    template: false, cpus: 1, maxmem: 512 * MIB, mem: 0, maxdisk: 0, disk: 0, cpu: 0,
    netin: 0, netout: 0, diskread: 0, diskwrite: 0, lock: 'create',
  };
  state.guests.set(req.vmid, placeholder);
  const disks = runDisks(state, req);
  const exitStatus = req.forcedExitStatus ?? (disks.error ? disks.error : 'OK');
  const log = [...disks.log];
  const missingBridge = Object.entries(req.params)
    .filter(([key]) => /^net\d+$/.test(key))
    .map(([, value]) => /(?:^|,)bridge=([^,]+)/.exec(value)?.[1])
    .find((bridge) => bridge !== undefined && !req.node.bridges.includes(bridge));
  if (isSuccess(exitStatus) && req.start) log.push('Execute autostart');
  const upid = encodeUpid({
    node: req.node.name,
    pid: 100_000 + Math.floor(Math.random() * 3_000_000),
    pstart: Math.floor((req.now - req.node.bootedAt) / 10) + Math.floor(Math.random() * 5_000),
    starttime: Math.floor(req.now / 1000),
    type: 'qmcreate',
    id: String(req.vmid),
    user: req.user,
  });
  const endsAt = req.now + req.durationMs;
  const finish = () => {
    if (!isSuccess(exitStatus)) {
      state.guests.delete(req.vmid);
      log.push(`TASK ERROR: ${exitStatus}`);
      return;
    }
    Object.assign(placeholder, finalGuest(placeholder, req, disks.sizes));
    delete placeholder.lock;
    // vm_start runs as its own qmstart task; a missing bridge makes that one fail, not this one.
    if (req.start && missingBridge === undefined) {
      Object.assign(placeholder, { status: 'running', bootedAt: endsAt, pid: 200_000 + req.vmid });
      Object.assign(placeholder, { cpu: 0.0123, mem: Math.round(placeholder.maxmem * 0.3) });
    }
    log.push(exitStatus === 'OK' ? 'TASK OK' : `TASK ${exitStatus}`);
  };
  const task: Task = { upid, node: req.node.name, endsAt, exitStatus, log, finish, finished: false };
  state.tasks.set(upid, task);
  return upid;
}
