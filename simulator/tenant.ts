// Tenants isolate parallel tests: each has its own freshly seeded cluster, request log, fault
// queue and config, created on first use. The default tenant serves /api2/json and /_sim. A
// tenant starts from the full seed unless the simulator was told another for it (`seeds`), and a
// reset may change it (POST /_sim/reset {"seed": "small"}).
import type { ClusterState } from './cluster/cluster-state.ts';
import { FaultQueue } from './control/faults.ts';
import { RequestLog } from './http/request-log.ts';
import { seedCluster, type SeedName } from './cluster/seed.ts';

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
    private seed: SeedName = 'full',
  ) {
    this.state = this.seeded(now);
    this.config = { ...defaults };
  }

  /** The cluster as seeded: the full one is `pve-sim`; another is named after its tenant. */
  private seeded(now: number): ClusterState {
    return this.seed === 'full'
      ? seedCluster(now)
      : seedCluster(now, this.name || 'pve-sim', this.seed);
  }

  /**
   * Back to the seeded cluster (`seed`'s, from now on, if given): state, log, faults, config and
   * node online status.
   */
  reset(now: number, seed?: SeedName): void {
    if (seed) this.seed = seed;
    this.state = this.seeded(now);
    this.log.clear();
    this.faults.clear();
    this.config = { ...this.defaults };
  }
}

export class TenantRegistry {
  private readonly tenants = new Map<string, Tenant>();

  constructor(
    private readonly defaults: TenantConfig,
    /** The seed of each tenant named here; the others start from the full one. */
    private readonly seeds: Readonly<Record<string, SeedName>> = {},
  ) {}

  get(name: string, now: number): Tenant {
    let tenant = this.tenants.get(name);
    if (!tenant) {
      tenant = new Tenant(
        name,
        this.defaults,
        now,
        Object.hasOwn(this.seeds, name) ? this.seeds[name] : undefined,
      );
      this.tenants.set(name, tenant);
    }
    return tenant;
  }
}
