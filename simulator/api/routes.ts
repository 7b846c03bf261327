// Every API route the simulator answers, in one table (the rest handler matches on it).
import { AGENT_ROUTES } from './agent.ts';
import { AGENT_EXEC_ROUTES } from './agent-exec.ts';
import { LXC_INTERFACE_ROUTES } from './lxc-interfaces.ts';
import { CLONE_ROUTES } from './clone.ts';
import { CLUSTER_ROUTES } from './cluster.ts';
import { CLUSTER_STATUS_ROUTES } from './cluster-status.ts';
import { CREATE_ROUTES } from './create-vm.ts';
import { DESTROY_ROUTES } from './destroy.ts';
import { EXTRA_ROUTES } from './extras.ts';
import { CONFIG_READ_ROUTES } from './guest-config-read.ts';
import { GUEST_ROUTES } from './guest-list.ts';
import { GUEST_STATUS_ROUTES } from './guest-status.ts';
import { HA_RESOURCE_ROUTES } from './ha-resources.ts';
import type { Route } from './handler-context.ts';
import { LXC_CONFIG_UPDATE_ROUTES } from './lxc-config-update.ts';
import { LXC_CREATE_ROUTES } from './lxc-create.ts';
import { LXC_POWER_ROUTES } from './lxc-power.ts';
import { MIGRATE_ROUTES } from './migrate.ts';
import { MIGRATE_PRECONDITION_ROUTES } from './migrate-precondition.ts';
import { QEMU_CONFIG_UPDATE_ROUTES } from './qemu-config-update.ts';
import { QEMU_POWER_ROUTES } from './qemu-power.ts';
import { QEMU_SUSPEND_ROUTES } from './qemu-suspend.ts';
import { REPLICATION_ROUTES } from './replication.ts';
import { RESIZE_ROUTES } from './resize.ts';
import { SNAPSHOT_OP_ROUTES } from './snapshot-ops.ts';
import { SNAPSHOT_ROUTES } from './snapshots.ts';
import { STORAGE_ROUTES } from './storage.ts';
import { STORAGE_VOLUME_ROUTES } from './storage-volume.ts';
import { TASK_ROUTES } from './tasks.ts';
import { VZDUMP_ROUTES } from './vzdump.ts';

export const ROUTES: readonly Route[] = [
  ...CLUSTER_ROUTES,
  ...CLUSTER_STATUS_ROUTES,
  ...HA_RESOURCE_ROUTES,
  ...REPLICATION_ROUTES,
  ...GUEST_ROUTES,
  ...GUEST_STATUS_ROUTES,
  ...CONFIG_READ_ROUTES,
  ...QEMU_CONFIG_UPDATE_ROUTES,
  ...LXC_CONFIG_UPDATE_ROUTES,
  ...CREATE_ROUTES,
  ...LXC_CREATE_ROUTES,
  ...CLONE_ROUTES,
  ...DESTROY_ROUTES,
  ...RESIZE_ROUTES,
  ...MIGRATE_ROUTES,
  ...MIGRATE_PRECONDITION_ROUTES,
  ...QEMU_POWER_ROUTES,
  ...QEMU_SUSPEND_ROUTES,
  ...LXC_POWER_ROUTES,
  ...SNAPSHOT_ROUTES,
  ...SNAPSHOT_OP_ROUTES,
  ...AGENT_ROUTES,
  ...AGENT_EXEC_ROUTES,
  ...LXC_INTERFACE_ROUTES,
  ...STORAGE_ROUTES,
  ...STORAGE_VOLUME_ROUTES,
  ...TASK_ROUTES,
  ...VZDUMP_ROUTES,
  ...EXTRA_ROUTES,
];
