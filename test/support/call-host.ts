// An in-memory Runtime for the call seam (src/calls/): the Worker's own Runtime (buildRuntime:
// its configuration parsed from variables, its ports with their deadlines, the policy source,
// the Proxmox client against the real simulator, the scrubber) and its own composition of a call
// (composeHost), over in-memory stand-ins for the Durable Objects: the real counter logic
// (WindowCounters over a Map), approvals kept in memory under the real rules, the audit trail as
// an array, a fixed server key. A clock the test sets. No workerd, no OAuth, no MCP client:
// runCall is driven directly.

import { inject } from 'vitest';
import { mayConsume } from '../../src/approvals/rules';
import type {
  Approval,
  ApprovalRequest,
  ApprovalStore,
  ConsumeCall,
} from '../../src/approvals/types';
import { AUDIT_LOST_OBJECT, AUDIT_OBJECT } from '../../src/audit/names';
import type { AuditRecord } from '../../src/audit/record';
import type { CallHost } from '../../src/calls/host';
import type { Clock } from '../../src/clock';
import { composeHost } from '../../src/compose/call-host';
import { buildRuntime, type Runtime } from '../../src/compose/runtime';
import { WindowCounters } from '../../src/counters/window-counters';
import type { AppEnv } from '../../src/env';
import type { Identity } from '../../src/core/identity';
import { sha256Hex } from '../../src/encoding';
import { SCOPES } from '../../src/core/scopes';

/** A clock the test moves; each reading also moves it a little, so timings are not all zero. */
export class TestClock implements Clock {
  constructor(private at = Date.UTC(2026, 11, 1, 12, 0, 5)) {}
  now(): number {
    this.at += 1;
    return this.at;
  }
  set(ms: number): void {
    this.at = ms;
  }
}

/** A Durable Object storage as WindowCounters uses it (list, put, delete), in a Map. */
function memoryStorage(): DurableObjectStorage {
  const data = new Map<string, unknown>();
  return {
    async list<T>({ prefix = '' }: { prefix?: string } = {}) {
      return new Map([...data].filter(([k]) => k.startsWith(prefix))) as Map<string, T>;
    },
    put(entries: Record<string, unknown>) {
      for (const [k, v] of Object.entries(entries)) data.set(k, v);
      return Promise.resolve();
    },
    delete(keys: string | string[]) {
      for (const k of Array.isArray(keys) ? keys : [keys]) data.delete(k);
      return Promise.resolve(true);
    },
  } as unknown as DurableObjectStorage;
}

/** Approvals under the real rules (mayConsume), kept in memory. */
export class MemoryApprovals implements ApprovalStore {
  readonly rows = new Map<string, Approval>();
  private readonly spent = new Set<string>();
  private next = 0;

  async create(request: ApprovalRequest, now: number, ttlMs: number): Promise<Approval> {
    const id = `approval-${String(++this.next).padStart(16, '0')}`;
    const approval: Approval = {
      ...request,
      id,
      status: 'pending',
      created_at: now,
      expires_at: now + ttlMs,
      decided_by: null,
      decided_at: null,
      used_at: null,
      approved_by: [],
    };
    this.rows.set(id, approval);
    return approval;
  }
  async consume(id: string, call: ConsumeCall, now: number) {
    const approval = this.rows.get(id) ?? null;
    const refusal = mayConsume(approval, call, now);
    if (refusal) return refusal;
    Object.assign(approval!, { status: 'used', used_at: now });
    return { upstream: approval!.upstream };
  }
  async restore(id: string): Promise<void> {
    const approval = this.rows.get(id);
    if (approval?.status === 'used') Object.assign(approval, { status: 'approved', used_at: null });
  }
  async spendOnce(token: string): Promise<boolean> {
    if (this.spent.has(token)) return false;
    this.spent.add(token);
    return true;
  }
  /** What a person does on the approval page. */
  approve(id: string, by: string, now: number): void {
    Object.assign(this.rows.get(id)!, { status: 'approved', decided_by: by, decided_at: now });
  }
}

export interface TestHost {
  host: CallHost;
  runtime: Runtime;
  clock: TestClock;
  approvals: MemoryApprovals;
  /** The audit records written, and how many could not be (the count /admin shows). */
  audit: AuditRecord[];
  /** The Analytics Engine data points written (CALL_METRICS, kept here as the platform would). */
  points: AnalyticsEngineDataPoint[];
  lost(): number;
  /** The counters of one scope key (`grant:<id>`, `user:...`), as the store holds them. */
  counters(name: string): Promise<WindowCounters>;
  /** The argument HMAC's key (base64), to check a record's args_hmac. */
  key: string;
  /** Work the call left running after its answer (its audit record), done. */
  settle(): Promise<void>;
  /** An editor activates `policy` as the next version in the store (isolates see it when they check). */
  activate(policy: object): void;
}

export const ALICE: Identity = {
  userId: 'alice@example.com',
  email: 'alice@example.com',
  groups: ['ops'],
  clientId: 'test-client',
  grantId: 'grant-alice',
  scopes: SCOPES,
};

export interface HostOptions {
  policy: object;
  identity?: Identity;
  /** Stores that never answer: a call to them meets the Runtime's store deadline. */
  hang?: { counters?: boolean; approvals?: boolean };
  /** The audit object fails every write (storage full). */
  auditFails?: boolean;
}

/** A Durable Object namespace over in-memory objects, made on first use by name. */
function namespace(make: (name: string) => object): DurableObjectNamespace {
  const objects = new Map<string, object>();
  return {
    idFromName: (name: string) => ({ name }),
    get: ({ name }: { name: string }) => {
      if (!objects.has(name)) objects.set(name, make(name));
      return objects.get(name)!;
    },
  } as unknown as DurableObjectNamespace;
}

/** An object every method of which waits for ever. */
const hung = new Proxy(
  {},
  { get: (_t, prop) => (prop === 'then' ? undefined : () => new Promise(() => undefined)) },
);

export function testHost(options: HostOptions): TestHost {
  const clock = new TestClock();
  const approvals = new MemoryApprovals();
  const audit: AuditRecord[] = [];
  const points: AnalyticsEngineDataPoint[] = [];
  let lost = 0;
  const counterStores = new Map<string, Promise<WindowCounters>>();
  /** Versions activated after the first (the deployed POLICY), oldest first. */
  const versions: string[] = [];
  let deployedText: string | undefined;
  const counters = (name: string): Promise<WindowCounters> => {
    if (!counterStores.has(name)) counterStores.set(name, WindowCounters.load(memoryStorage()));
    return counterStores.get(name)!;
  };
  const key = btoa(String.fromCharCode(...new Uint8Array(32).map((_, i) => i + 1)));
  const simulator = inject('simulatorUrl');
  if (!simulator) throw new Error('no simulator: the project needs test/support/setup/servers.ts');
  const env = {
    PVE_BASE_URL: `${simulator}/api2/json`,
    PVE_TOKEN_ID: inject('simulatorTokenId'),
    PVE_TOKEN_SECRET: inject('simulatorTokenSecret'),
    PVE_TIMEOUT_MS: '2000',
    POLICY: JSON.stringify(options.policy),
    AUTH_MODE: 'none',
    POLICY_COUNTERS: namespace((name) =>
      options.hang?.counters
        ? hung
        : {
            reserve: async (...a: Parameters<WindowCounters['reserve']>) =>
              (await counters(name)).reserve(...a),
            release: async (...a: Parameters<WindowCounters['release']>) =>
              (await counters(name)).release(...a),
            list: async (now: number) => (await counters(name)).list(now),
          },
    ),
    APPROVALS: namespace(() => (options.hang?.approvals ? hung : approvals)),
    AUDIT: namespace((name) => {
      if (name === AUDIT_LOST_OBJECT)
        return {
          recordLost: async (n: number) => {
            lost += n;
          },
        };
      if (name !== AUDIT_OBJECT) throw new Error(`no audit object ${name}`);
      return {
        append: async (record: AuditRecord) => {
          if (options.auditFails) throw new Error('SQLITE_FULL: database or disk is full');
          audit.push(record);
        },
      };
    }),
    // The policy store: the deployed POLICY as version 1, until the test activates another.
    POLICY_STORE: namespace(() => ({
      head: async (deployed: { sha256: string; text?: string }, known: number | null) => {
        deployedText ??= deployed.text;
        if (deployedText === undefined)
          return { generation: 0, active: null, shadow: null, needsDeployText: true };
        const text = versions.at(-1) ?? deployedText;
        return {
          generation: versions.length + 1,
          active: {
            version: versions.length + 1,
            sha256: await sha256Hex(text),
            ...(known === versions.length + 1 ? {} : { text }),
          },
          shadow: null,
        };
      },
      recordDisagreement: async () => undefined,
    })),
    CALL_METRICS: { writeDataPoint: (point: AnalyticsEngineDataPoint) => void points.push(point) },
    SERVER_KEYS: namespace(() => ({
      key: async (name: string) => (name === 'args_hmac' ? key : btoa(name.padEnd(32, '.'))),
    })),
  } as unknown as AppEnv;
  const runtime = buildRuntime(env, clock);
  const identity = options.identity ?? ALICE;
  const pending: Promise<unknown>[] = [];
  const host = composeHost(runtime, {
    sessionId: 'test-session',
    // A client without sessions (2026-07-28): session limits count per grant.
    sessionCounters: 'per-grant',
    identity: () => identity,
    publicOrigin: () => 'https://mcp.example.test',
    waitUntil: (work) => void pending.push(work),
  });
  return {
    host,
    runtime,
    clock,
    approvals,
    audit,
    points,
    lost: () => lost,
    counters,
    key,
    settle: async () => {
      await Promise.all(pending.splice(0));
    },
    activate: (next) => void versions.push(JSON.stringify(next)),
  };
}
