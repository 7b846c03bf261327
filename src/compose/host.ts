// The composition root of a tool call: from the Worker's bindings and the era adapter's few
// parts (session id, where session-scoped limits count, who calls), the one CallHost that
// runCall uses. Everything a call touches is wired here and only here, with its deadline.

import { approvalStore } from '../approvals/config';
import { argsHasher } from '../audit/arg-hash';
import { AUDIT_LOST_OBJECT, AUDIT_OBJECT } from '../audit/names';
import type { AuditRecord } from '../audit/record';
import { makeScope } from '../calls/context';
import type { CallHost } from '../calls/host';
import { toolSet } from '../calls/tool-list';
import { ToolFailure } from '../calls/tool-spec';
import { counterObjectName, type CounterBackend, type CounterTarget } from '../counters/reserve';
import { configOf } from '../config';
import type { AppEnv } from '../env';
import type { Identity } from '../identity';
import { activePolicy } from '../policy/source';
import { scrubberFor } from '../secrets/scrub';
import { STORE_DEADLINE_MS, withDeadline } from '../stores/deadline';
import { TOOL_CATALOG, TOOLS } from '../tools';

/** The tools, validated and described once per isolate. */
export const TOOL_SET = toolSet(TOOLS);

/** Audit records are written after the answer: they may take longer than a call's stores. */
export const AUDIT_DEADLINE_MS = 10_000;

export interface EraParts {
  /** The MCP session, or `stateless`. */
  sessionId: string;
  /**
   * Where `session`-scoped limits count: the session's own storage (2025 sessions), or, for a
   * client without sessions (2026-07-28), the grant: never looser than a session would be.
   */
  sessionCounters: CounterTarget | 'per-grant';
  identity(): Identity | null;
  /** The public origin, for approval page links. */
  publicOrigin(): string;
  waitUntil(work: Promise<unknown>): void;
}

export function composeHost(env: AppEnv, era: EraParts): CallHost {
  return {
    scope: (requestId) => {
      const identity = era.identity();
      // No identity means the call did not come through our auth layer: fail closed.
      if (!identity)
        throw new ToolFailure('config', 'This session has no signed-in identity; reconnect.');
      return makeScope(env, identity, requestId);
    },
    sessionId: () => era.sessionId,
    policy: () => activePolicy(env.POLICY, TOOL_CATALOG),
    counters: () => counterBackend(env, era),
    approvals: () => ({
      store: () => approvalStore(env),
      url: (id) => `${era.publicOrigin()}/approvals/${id}`,
      ttlMs: configOf(env).approvals.ttlMs,
    }),
    audit: (record) => recordAudit(env, record, era.waitUntil),
    scrubber: () => scrubberFor(configOf(env).secrets),
    hashArgs: argsHasher(() => {
      const audit = env.AUDIT;
      return withDeadline(
        audit.get(audit.idFromName(AUDIT_OBJECT)).serverKey('args_hmac'),
        STORE_DEADLINE_MS,
        'audit key',
      );
    }),
  };
}

function counterBackend(env: AppEnv, era: EraParts): CounterBackend {
  const namespace = env.POLICY_COUNTERS;
  const objectTarget = (name: string, keyPrefix = ''): CounterTarget => {
    const stub = namespace.get(namespace.idFromName(name));
    const keyed = <T extends { key: string }>(items: T[]): T[] =>
      keyPrefix ? items.map((i) => ({ ...i, key: `${keyPrefix}${i.key}` })) : items;
    return {
      // A reservation that lands after its deadline was never counted on: give it back.
      reserve: (items, now) =>
        withDeadline(
          stub.reserve(keyed(items), now),
          STORE_DEADLINE_MS,
          `counters ${name}`,
          (late) => {
            if (late === null) era.waitUntil(stub.release(keyed(items)).catch(() => undefined));
          },
        ),
      release: (items) =>
        withDeadline(stub.release(keyed(items)), STORE_DEADLINE_MS, `counters ${name}`),
    };
  };
  return {
    target: (scope, identity) => {
      if (scope !== 'session') return objectTarget(counterObjectName(scope, identity));
      if (era.sessionCounters !== 'per-grant') return era.sessionCounters;
      // Session counters kept in the grant's object, apart from its grant counters of the same name.
      return objectTarget(counterObjectName('grant', identity), 'session|');
    },
  };
}

function recordAudit(
  env: AppEnv,
  record: AuditRecord,
  waitUntil: (work: Promise<unknown>) => void,
): void {
  if (!configOf(env).audit.enabled) return;
  const audit = env.AUDIT;
  const write = async (): Promise<void> => {
    try {
      await withDeadline(
        audit.get(audit.idFromName(AUDIT_OBJECT)).append(record),
        AUDIT_DEADLINE_MS,
        'audit append',
      );
    } catch (err) {
      // Never fail the call for its record; count the loss where the admin page shows it.
      console.error(
        JSON.stringify({
          msg: 'audit_lost',
          request_id: record.request_id,
          error: err instanceof Error ? err.message.slice(0, 200) : 'unknown',
        }),
      );
      await withDeadline(
        audit.get(audit.idFromName(AUDIT_LOST_OBJECT)).recordLost(1),
        AUDIT_DEADLINE_MS,
        'audit lost',
      ).catch(() => undefined);
    }
  };
  waitUntil(write());
}
