// The state of one simulated cluster (one per tenant): nodes, storages and their volumes, pools,
// guests (each with its PVE config, pending changes and snapshots), HA resources, replication
// jobs and worker tasks.
// Plain data plus small queries; the clock is always passed in (`now`, ms since epoch).

export interface NodeState {
  readonly name: string;
  online: boolean;
  /** corosync node id and ring address, as /cluster/status reports them. */
  readonly nodeid: number;
  readonly ip: string;
  readonly maxcpu: number;
  readonly cpuModel: string;
  readonly sockets: number;
  readonly maxmem: number;
  readonly mem: number;
  readonly cpu: number;
  readonly maxdisk: number;
  readonly disk: number;
  readonly swapTotal: number;
  readonly swapUsed: number;
  readonly loadavg: readonly [string, string, string];
  /** When the node booted (ms), so uptime grows while the simulator runs. */
  readonly bootedAt: number;
  readonly sslFingerprint: string;
  readonly bridges: readonly string[];
}

export type StorageType = 'dir' | 'lvmthin' | 'rbd' | 'zfspool' | 'pbs';

export interface StorageDef {
  readonly id: string;
  readonly type: StorageType;
  /** Display order as PVE prints it, e.g. 'backup,vztmpl,iso'. */
  readonly content: readonly string[];
  readonly shared: boolean;
  readonly maxdisk: number;
  readonly disk: number;
  /** Directory storages keep files below a path; block storages have none. */
  readonly path?: string;
  /** storage.cfg keys beside type/content/shared, as GET /storage lists them (never secrets). */
  readonly extra: Readonly<Record<string, string | number>>;
}

export type VolumeType = 'images' | 'rootdir' | 'iso' | 'vztmpl' | 'backup' | 'import' | 'snippets';

/** One volume on a storage; node-local storages hold one set per node. */
export interface Volume {
  readonly storage: string;
  /** The node holding it for node-local storages; undefined on shared ones. */
  node: string | undefined;
  /** The part after `storage:`, e.g. 'vm-100-disk-0' or 'iso/debian.iso'. */
  readonly volname: string;
  readonly vtype: VolumeType;
  readonly format: string;
  size: number;
  /** Seconds since epoch. */
  readonly ctime: number;
  /** The guest an image or backup belongs to. */
  readonly owner?: number;
  notes?: string;
  protected?: boolean;
  /** Backups: 'qemu' or 'lxc'. */
  readonly subtype?: string;
  /** A linked clone's base volume (volid), which must outlive the clone. */
  readonly parent?: string;
  /** Backups: the guest config the archive holds (qemu-server.conf / pct.conf), for restores. */
  readonly backupConfig?: Readonly<GuestConfig>;
  /** PBS backups: the last verify job's result, as the datastore's snapshot list reports it. */
  readonly verification?: { readonly state: 'ok' | 'failed'; readonly upid: string };
}

export type GuestType = 'qemu' | 'lxc';

/** A guest config as PVE stores it: option → value string (lock, parent, template included). */
export type GuestConfig = Record<string, string>;

/** QEMU's run state beside the process status (QMP query-status). */
export type QmpStatus = 'running' | 'paused' | 'prelaunch' | 'suspended';

export interface Guest {
  readonly vmid: number;
  readonly type: GuestType;
  node: string;
  config: GuestConfig;
  /** qemu [PENDING] section: values waiting for the next start, and options to delete then. */
  pending: GuestConfig;
  pendingDelete: string[];
  /** Snapshot sections by name; each holds the copied config plus snaptime/description/vmstate. */
  snapshots: Map<string, GuestConfig>;
  status: 'running' | 'stopped';
  qmpstatus: QmpStatus;
  /** Whether the QEMU guest agent inside the VM answers (only counts while it runs). */
  agentRunning: boolean;
  /** A container checkpointed by `suspend` (lxc-checkpoint), waiting for `resume`. */
  checkpointed?: boolean;
  /** Pool membership lives in user.cfg, not in the guest config. */
  pool?: string;
  cpu: number;
  mem: number;
  disk: number;
  netin: number;
  netout: number;
  diskread: number;
  diskwrite: number;
  bootedAt?: number;
  pid?: number;
  /** The guest agent's guest-exec processes of the current boot (qemu-ga forgets them on restart). */
  agentExec?: AgentExecTable;
}

/** One process started through guest-exec: its output as bytes, and when (if ever) it ends. */
export interface AgentProcess {
  readonly pid: number;
  /** ms; undefined: it never ends by itself (`yes`, `sleep infinity`). */
  readonly endsAt: number | undefined;
  readonly exitcode?: number;
  readonly signal?: number;
  readonly out: Buffer;
  readonly err: Buffer;
  readonly outTruncated: boolean;
  readonly errTruncated: boolean;
}

export interface AgentExecTable {
  /** The boot (bootedAt) the table belongs to. */
  readonly boot: number;
  nextPid: number;
  readonly processes: Map<number, AgentProcess>;
}

/** An HA resource (ha/resources.cfg section `vm: 100`): the sid is `<type>:<vmid>`. */
export interface HaResource {
  readonly type: 'vm' | 'ct';
  /** The requested state; the CRM's service state follows it. */
  state: 'started' | 'stopped' | 'disabled' | 'ignored';
  readonly max_restart?: number;
  readonly max_relocate?: number;
  readonly failback?: 0 | 1;
  readonly comment?: string;
}

/** A storage replication job (replication.cfg section `local: 120-0`), id `<guest>-<jobnum>`. */
export interface ReplicationJob {
  readonly type: 'local';
  readonly guest: number;
  readonly jobnum: number;
  target: string;
  /** The node the guest ran on when the job last ran (a migration swaps it with the target). */
  source?: string;
  readonly schedule?: string;
  readonly rate?: number;
  readonly comment?: string;
  readonly disable?: 0 | 1;
}

/** A worker task; its node, pid, type, id and user are encoded in the UPID. */
export interface Task {
  readonly upid: string;
  readonly node: string;
  /** The guest whose config lock the worker takes (PVE's flock serializes them), if any. */
  readonly vmid?: number;
  /** When the worker gets the guest's lock and starts (ms). */
  readonly startsAt: number;
  /** When the task stops (ms); before that its status is 'running'. */
  readonly endsAt: number;
  readonly log: string[];
  /** Runs at startsAt: the worker's checks and locks. */
  readonly begin: () => void;
  /** Runs at endsAt: applies the outcome and sets exitStatus. */
  readonly finish: () => void;
  /** Kills the worker early (abort_guest_tasks): its work is undone. */
  readonly abort: () => void;
  exitStatus: string;
  begun: boolean;
  finished: boolean;
}

export interface ClusterState {
  readonly name: string;
  readonly nodes: NodeState[];
  readonly storages: StorageDef[];
  volumes: Volume[];
  readonly pools: Map<string, { readonly comment: string }>;
  readonly guests: Map<number, Guest>;
  /** ha/resources.cfg sections by sid ('vm:120'), in file order. */
  readonly haResources: Map<string, HaResource>;
  /** replication.cfg jobs by id ('120-0'). */
  readonly replication: Map<string, ReplicationJob>;
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

/** pmxcfs needs a majority of nodes online to allow writes. */
export function isQuorate(state: ClusterState): boolean {
  return state.nodes.filter((n) => n.online).length * 2 > state.nodes.length;
}

/** A config-less guest record, as a freshly written `lock: create` config leaves it. */
export function blankGuest(
  vmid: number,
  type: GuestType,
  node: string,
  config: GuestConfig = { lock: 'create' },
): Guest {
  return {
    vmid,
    type,
    node,
    config,
    pending: {},
    pendingDelete: [],
    snapshots: new Map(),
    status: 'stopped',
    qmpstatus: 'running',
    agentRunning: false,
    cpu: 0,
    mem: 0,
    disk: 0,
    netin: 0,
    netout: 0,
    diskread: 0,
    diskwrite: 0,
  };
}
