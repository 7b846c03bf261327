// A call as one Workers Analytics Engine data point (the CALL_METRICS binding): what the audit
// record says of it, in fixed positions, so that counts and latencies scale past what one Durable
// Object can count and are queried with Analytics Engine's SQL API (docs/observability.md gives
// the layout and a query). Pure.

import type { AuditRecord } from './record';

/** Analytics Engine keeps an index of at most 96 bytes. */
const MAX_INDEX = 96;
/** Each blob is text; all of a point's blobs together at most 16 KiB: a rule is cut here. */
const MAX_BLOB = 1_024;

/**
 * index1: the tool. blob1 tool, blob2 decision, blob3 rule (empty: none), blob4 outcome, blob5
 * cluster, blob6 the tool's scope, blob7 error kind, blob8 trace id. double1 the call's duration
 * (ms), double2 its time in Proxmox requests (ms, 0 where none was sent), double3 1 where it sent
 * Proxmox anything, else 0 (so that an average of double2 can leave out calls that sent nothing),
 * double4 how long it waited for an approval (ms, a person's answer or the store's), double5 1
 * where the policy wanted an approval, else 0 (as double3 is to double2).
 */
export function callPoint(
  record: AuditRecord,
  scope: string,
  approvalWaitMs: number | null = null,
): AnalyticsEngineDataPoint {
  const cut = (text: string | null | undefined) => (text ?? '').slice(0, MAX_BLOB);
  return {
    indexes: [record.tool.slice(0, MAX_INDEX)],
    blobs: [
      cut(record.tool),
      record.decision,
      cut(record.rule),
      record.outcome,
      cut(record.cluster),
      scope,
      cut(record.error_kind),
      cut(record.trace_id),
    ],
    doubles: [
      record.latency_ms,
      record.upstream_ms ?? 0,
      record.upstream_ms === null ? 0 : 1,
      approvalWaitMs ?? 0,
      approvalWaitMs === null ? 0 : 1,
    ],
  };
}
