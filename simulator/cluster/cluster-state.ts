// The state of one simulated cluster (one per tenant): nodes, storages, pools, guests and tasks.
// Plain data plus small queries; the clock is always passed in (`now`, ms since epoch).

export interface NodeState {
  readonly name: string;
  online: boolean;
  readonly maxcpu: number;
  readonly maxmem: number;
  readonly mem: number;
  readonly cpu: number;
  readonly maxdisk: number;
  readonly disk: number;
  /** When the node booted (ms), so uptime grows while the simulator runs. */
  readonly bootedAt: number;
  readonly sslFingerprint: string;
  readonly bridges: readonly string[];
  /** Files under `local:iso/` on this node (the `local` storage is node-local). */
  readonly isos: readonly string[];
  readonly templates: readonly string[];
}

export interface StorageDef {
  readonly id: string;
  readonly type: 'dir' | 'lvmthin' | 'rbd';
  /** Display order as PVE prints it, e.g. 'backup,vztmpl,iso'. */
  readonly content: readonly string[];
  readonly shared: boolean;
  readonly maxdisk: number;
  readonly disk: number;
}

export type GuestType = 'qemu' | 'lxc';

export interface Guest {
  readonly vmid: number;
  readonly type: GuestType;
  readonly node: string;
  name: string;
  status: 'running' | 'stopped';
  template: boolean;
  cpus: number;
  maxmem: number;
  mem: number;
  maxdisk: number;
  disk: number;
  maxswap?: number;
  cpu: number;
  netin: number;
  netout: number;
  diskread: number;
  diskwrite: number;
  bootedAt?: number;
  pid?: number;
  tags?: string;
  pool?: string;
  lock?: string;
}

/** A worker task; its node, pid, type, id and user are encoded in the UPID. */
export interface Task {
  readonly upid: string;
  readonly node: string;
  /** When the task stops (ms); before that its status is 'running'. */
  readonly endsAt: number;
  readonly exitStatus: string;
  readonly log: string[];
  /** Applied once when the task stops: unlock, start or remove the guest. */
  readonly finish: () => void;
  finished: boolean;
}

export interface ClusterState {
  readonly nodes: NodeState[];
  readonly storages: StorageDef[];
  readonly pools: Map<string, { readonly comment: string }>;
  readonly guests: Map<number, Guest>;
  readonly tasks: Map<string, Task>;
}

export function findNode(state: ClusterState, name: string): NodeState | undefined {
  return state.nodes.find((node) => node.name === name);
}

export function findStorage(state: ClusterState, id: string): StorageDef | undefined {
  return state.storages.find((storage) => storage.id === id);
}

export function guestsSorted(state: ClusterState): Guest[] {
  return [...state.guests.values()].sort((a, b) => a.vmid - b.vmid);
}

/** PVE nextid: the lowest id from 100 (datacenter.cfg default) not used by any guest. */
export function nextFreeVmid(state: ClusterState): number | undefined {
  for (let id = 100; id < 1_000_000; id++) if (!state.guests.has(id)) return id;
  return undefined;
}

export function uptimeSeconds(bootedAt: number | undefined, now: number): number {
  return bootedAt === undefined ? 0 : Math.max(0, Math.floor((now - bootedAt) / 1000));
}

/** Stop every task whose time is up; called before each request instead of using timers. */
export function settleTasks(state: ClusterState, now: number): void {
  for (const task of state.tasks.values()) {
    if (task.finished || now < task.endsAt) continue;
    task.finished = true;
    task.finish();
  }
}
