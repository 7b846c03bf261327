// Tenants isolate parallel tests: each has its own freshly seeded cluster, request log, fault
// queue and config, created on first use. The default tenant serves /api2/json and /_sim.
import type { ClusterState } from './cluster/cluster-state.ts';
import { FaultQueue } from './control/faults.ts';
import { RequestLog } from './http/request-log.ts';
import { seedCluster } from './cluster/seed.ts';

export interface TenantConfig {
  authFailDelayMs: number;
  taskDurationMs: number;
  /** Refuse unknown bridges at create time; real PVE only fails when the VM starts. */
  strictBridges: boolean;
}

export const TENANT_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;
export const DEFAULT_TENANT = '';

export class Tenant {
  state: ClusterState;
  readonly log = new RequestLog();
  readonly faults = new FaultQueue();
  config: TenantConfig;

  constructor(
    readonly name: string,
    private readonly defaults: TenantConfig,
    now: number,
  ) {
    this.state = seedCluster(now);
    this.config = { ...defaults };
  }

  /** Back to the seeded cluster: state, log, faults, config and node online status. */
  reset(now: number): void {
    this.state = seedCluster(now);
    this.log.clear();
    this.faults.clear();
    this.config = { ...this.defaults };
  }
}

export class TenantRegistry {
  private readonly tenants = new Map<string, Tenant>();

  constructor(private readonly defaults: TenantConfig) {}

  get(name: string, now: number): Tenant {
    let tenant = this.tenants.get(name);
    if (!tenant) {
      tenant = new Tenant(name, this.defaults, now);
      this.tenants.set(name, tenant);
    }
    return tenant;
  }
}
