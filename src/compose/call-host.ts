// The composition root of a tool call: from the Runtime (./runtime.ts) and the era adapter's
// few parts (session id, where session-scoped limits count, who calls), the one CallHost that
// runCall uses. Everything a call touches is wired here, from the Runtime's ports.

import { errorText, logLine } from '../log';
import { callPoint } from '../audit/call-point';
import type { AuditRecord } from '../audit/record';
import { makeScope } from '../calls/context';
import type { CallHost } from '../calls/host';
import { type CallSpans, callSpans } from '../calls/spans';
import { ToolFailure } from '../calls/tool-spec';
import { type CounterBackend, type CounterTarget, counterObjectName } from '../counters/reserve';
import type { Identity } from '../core/identity';
import { REDACTED } from '../audit/canonical';
import { chainScrubbers, hiddenValuesScrubber } from '../secrets/scrub';
import type { Runtime } from './runtime';
import { exportSpans } from './span-export';

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

export function composeHost(runtime: Runtime, era: EraParts): CallHost {
  const { config, stores } = runtime;
  return {
    clock: runtime.clock,
    spans: (trace, facts) => callSpans(trace, config.tracing, runtime.clock, facts),
    scope: (requestId, spans) => {
      const identity = era.identity();
      // No identity means the call did not come through our auth layer: fail closed.
      if (!identity)
        throw new ToolFailure('config', 'This session has no signed-in identity; reconnect.');
      return makeScope(
        runtime.pveClient,
        runtime.clock,
        identity,
        requestId,
        runtime.clusters,
        runtime.config.identities !== null,
        spans,
      );
    },
    clusters: runtime.clusters,
    sessionId: () => era.sessionId,
    policy: () => runtime.policy.active(era.waitUntil),
    shadowDisagreement: (d) =>
      era.waitUntil(
        stores
          .policies()
          .recordDisagreement(d)
          .catch((err: unknown) => {
            logLine('error', 'shadow_disagreement_lost', {
              request_id: d.request_id,
              error: errorText(err, 200),
            });
          }),
      ),
    counters: () => counterBackend(runtime, era),
    approvals: () => ({
      store: () => stores.approvals(),
      url: (id) => `${era.publicOrigin()}/approvals/${id}`,
      origin: () => era.publicOrigin(),
      ttlMs: config.approvals.ttlMs,
    }),
    audit: (record, call) => {
      const written = recordAudit(runtime, record, call.spans);
      measureCall(runtime, record, call.approvalWaitMs);
      const { tracing } = config;
      // The spans go once the audit write's own has ended.
      era.waitUntil(
        tracing && call.spans.recording
          ? written.then(() =>
              exportSpans(tracing, call.spans.ended(), record.request_id, runtime.scrubber),
            )
          : written,
      );
    },
    scrubber: (hidden) =>
      hidden?.length
        ? chainScrubbers(runtime.scrubber, hiddenValuesScrubber(hidden, REDACTED))
        : runtime.scrubber,
    hmacArgs: runtime.hmacArgs,
  };
}

function counterBackend(runtime: Runtime, era: EraParts): CounterBackend {
  const objectTarget = (name: string, keyPrefix = ''): CounterTarget => {
    const port = runtime.stores.counters(name, era.waitUntil);
    const keyed = <T extends { key: string }>(items: T[]): T[] =>
      keyPrefix ? items.map((i) => ({ ...i, key: `${keyPrefix}${i.key}` })) : items;
    return {
      reserve: (items, now) => port.reserve(keyed(items), now),
      release: (items) => port.release(keyed(items)),
    };
  };
  return {
    target: (scope, identity, guest) => {
      if (scope !== 'session') return objectTarget(counterObjectName(scope, identity, guest));
      if (era.sessionCounters !== 'per-grant') return era.sessionCounters;
      // Session counters kept in the grant's object, apart from its grant counters of the same name.
      return objectTarget(counterObjectName('grant', identity), 'session|');
    },
  };
}

/**
 * The call's data point, whatever AUDIT_ENABLED says (figures, never argument values). Written
 * without waiting: Analytics Engine takes it in the background, and a failure never fails a call.
 */
function measureCall(runtime: Runtime, record: AuditRecord, approvalWaitMs: number | null): void {
  if (!runtime.callMetrics) return;
  try {
    const scope = runtime.tools.get(record.tool)?.tool.scope ?? '';
    runtime.callMetrics.writeDataPoint(callPoint(record, scope, approvalWaitMs));
  } catch (err) {
    logLine('error', 'call_metrics_lost', {
      request_id: record.request_id,
      error: errorText(err, 200),
    });
  }
}

/** Writes the call's record (a span of the call's), in the background; never fails. */
async function recordAudit(runtime: Runtime, record: AuditRecord, spans: CallSpans): Promise<void> {
  if (!runtime.config.audit.enabled) return;
  try {
    await spans.stage('audit write', () =>
      runtime.stores.audit('records', AUDIT_DEADLINE_MS).append(record),
    );
  } catch (err) {
    // Never fail the call for its record; count the loss where the admin page shows it.
    logLine('error', 'audit_lost', { request_id: record.request_id, error: errorText(err, 200) });
    await runtime.stores
      .audit('lost', AUDIT_DEADLINE_MS)
      .recordLost(1)
      .catch(() => undefined);
  }
}
