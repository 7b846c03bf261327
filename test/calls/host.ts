// An in-memory host for the call seam (src/calls/): the real Proxmox client against the real
// simulator, the real policy engine, the real counter logic (WindowCounters over a Map), an
// approvals store kept in memory under the real rules, the audit trail as an array, a clock the
// test sets. No workerd, no OAuth, no MCP client: runCall is driven directly.

import { inject } from 'vitest';
import { mayConsume } from '../../src/approvals/rules';
import type { Approval, ApprovalRequest, ApprovalStore } from '../../src/approvals/types';
import { argsHmacer } from '../../src/audit/arg-hash';
import type { AuditRecord } from '../../src/audit/record';
import { makeScope } from '../../src/calls/context';
import type { CallHost } from '../../src/calls/host';
import type { Clock } from '../../src/clock';
import {
  type CounterBackend,
  type CounterTarget,
  counterObjectName,
} from '../../src/counters/reserve';
import { WindowCounters } from '../../src/counters/window-counters';
import type { Identity } from '../../src/identity';
import { loadPolicy } from '../../src/policy/load';
import type { ActivePolicy } from '../../src/policy/source';
import { PveClient } from '../../src/proxmox/client';
import { scrubberFor } from '../../src/secrets/scrub';
import { STORE_DEADLINE_MS, withDeadline } from '../../src/stores/deadline';
import { TOOL_CATALOG } from '../../src/tools';

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
    };
    this.rows.set(id, approval);
    return approval;
  }
  async consume(
    id: string,
    call: { tool: string; args_hmac: string; grant_id: string },
    now: number,
  ) {
    const approval = this.rows.get(id) ?? null;
    const refusal = mayConsume(approval, call, now);
    if (!refusal && approval) Object.assign(approval, { status: 'used', used_at: now });
    return refusal;
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
  clock: TestClock;
  approvals: MemoryApprovals;
  audit: AuditRecord[];
  /** The counters of one scope key, as the store holds them. */
  counters(name: string): Promise<WindowCounters>;
  /** The argument HMAC's key (base64), to check a record's args_hmac. */
  key: string;
}

export const ALICE: Identity = {
  userId: 'alice@example.com',
  email: 'alice@example.com',
  groups: ['ops'],
  clientId: 'test-client',
  grantId: 'grant-alice',
};

export interface HostOptions {
  policy: object;
  identity?: Identity;
  /** Stores that never answer: a call to them waits for the deadline. */
  hang?: { counters?: boolean; approvals?: boolean };
  /** The deadline the host puts on its stores (the Runtime's is STORE_DEADLINE_MS). */
  deadlineMs?: number;
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

export function testHost(options: HostOptions): TestHost {
  const clock = new TestClock();
  const approvals = new MemoryApprovals();
  const audit: AuditRecord[] = [];
  const ms = options.deadlineMs ?? STORE_DEADLINE_MS;
  const loaded = loadPolicy(options.policy, TOOL_CATALOG);
  const active: ActivePolicy = loaded.ok
    ? { ok: true, origin: 'POLICY', policy: loaded.policy }
    : { ok: false, origin: 'POLICY', errors: loaded.errors };
  const stores = new Map<string, Promise<WindowCounters>>();
  const counters = (name: string): Promise<WindowCounters> => {
    if (!stores.has(name)) stores.set(name, WindowCounters.load(memoryStorage()));
    return stores.get(name)!;
  };
  const target = (name: string): CounterTarget => ({
    reserve: (items, now) =>
      withDeadline(
        options.hang?.counters ? never() : counters(name).then((c) => c.reserve(items, now)),
        ms,
        `counters ${name}`,
      ),
    release: (items) =>
      withDeadline(
        counters(name).then((c) => c.release(items)),
        ms,
        `counters ${name}`,
      ),
  });
  const backend: CounterBackend = {
    // A session limit counts per grant here, as for a client without sessions (2026-07-28).
    target: (scope, identity) =>
      target(counterObjectName(scope === 'session' ? 'grant' : scope, identity)),
  };
  const approvalStore: ApprovalStore = options.hang?.approvals
    ? { create: never, consume: never, restore: never, spendOnce: never }
    : approvals;
  const timed: ApprovalStore = {
    create: (...a) => withDeadline(approvalStore.create(...a), ms, 'approvals'),
    consume: (...a) => withDeadline(approvalStore.consume(...a), ms, 'approvals'),
    restore: (...a) => withDeadline(approvalStore.restore(...a), ms, 'approvals'),
    spendOnce: (...a) => withDeadline(approvalStore.spendOnce(...a), ms, 'approvals'),
  };
  const secret = inject('simulatorTokenSecret');
  const key = btoa(String.fromCharCode(...new Uint8Array(32).map((_, i) => i + 1)));
  const pveConfig = {
    baseUrl: `${inject('simulatorUrl')}/api2/json`,
    tokenId: inject('simulatorTokenId'),
    tokenSecret: secret,
    timeoutMs: 2_000,
  };
  const identity = options.identity ?? ALICE;
  const host: CallHost = {
    clock,
    scope: (requestId) =>
      makeScope(() => new PveClient(pveConfig, clock), clock, identity, requestId),
    sessionId: () => 'test-session',
    policy: () => active,
    counters: () => backend,
    approvals: () => ({
      store: () => timed,
      url: (id) => `https://mcp.example.test/approvals/${id}`,
      ttlMs: 15 * 60_000,
    }),
    audit: (record) => void audit.push(record),
    scrubber: () => scrubberFor([secret]),
    hmacArgs: argsHmacer(async () => key),
  };
  return { host, clock, approvals, audit, counters, key };
}
