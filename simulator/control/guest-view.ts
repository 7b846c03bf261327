// The shape of GET /_sim/guests/<vmid>: one guest as tests see it, past the API under test.
// Import-free on purpose, so the workerd tests' helpers can share the type.

export interface GuestView {
  vmid: number;
  type: 'qemu' | 'lxc';
  node: string;
  status: 'running' | 'stopped';
  /** QMP's status while running ('running', 'paused', 'prelaunch', 'suspended'), else 'stopped'. */
  qmpstatus: string;
  /** Whether the QEMU guest agent inside answers (whenever the VM runs). */
  agentRunning: boolean;
  lock: string | null;
  pool: string | null;
  /** A container suspended by lxc-checkpoint, waiting for resume. */
  checkpointed: boolean;
  /** The config as PVE stores it: option → value string. */
  config: Record<string, string>;
  /** The [PENDING] section: values and options to delete ('!' marks a forced delete). */
  pending: { values: Record<string, string>; delete: string[] };
  /** Snapshot sections by name. */
  snapshots: Record<string, Record<string, string>>;
  /** SHA-1 of the config file, as GET config's digest. */
  digest: string;
}
