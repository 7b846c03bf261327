// A call's trace context (W3C Trace Context): continued from the client's `traceparent` (the
// request's `_meta.traceparent`, as MCP 2026-07-28 carries it and a 2025 client may; else the
// HTTP header, either era), or started here. The call is one span of that trace, and each request
// it makes to Proxmox a child span that carries its own `traceparent` (and the client's
// `tracestate`, as W3C asks of a service that continues a trace): ./spans.ts. The trace id is in
// the call's log line and its audit record. Parsing is OpenTelemetry's (@opentelemetry/core); ids
// come from crypto.getRandomValues.

import { TraceFlags } from '@opentelemetry/api';
import { parseTraceParent, TraceState } from '@opentelemetry/core';

export interface CallTrace {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** The client's span the call continues, if it sent one. */
  parentSpanId: string | null;
  /** The client's sampled flag (false for a trace started here: ./spans.ts samples those). */
  sampled: boolean;
  /** The client's `tracestate`, checked and passed on (only with its valid `traceparent`). */
  tracestate: string | null;
}

/** What a request says of its trace: its `_meta` first, then its HTTP headers. */
export interface TraceInput {
  traceparent: readonly unknown[];
  tracestate: readonly unknown[];
}

/** What a request says of its trace, its `_meta` before its HTTP headers (either era). */
export function traceInput(
  meta: Readonly<Record<string, unknown>> | undefined,
  headers: { traceparent?: unknown; tracestate?: unknown } | undefined,
): TraceInput {
  return {
    traceparent: [meta?.traceparent, headers?.traceparent],
    tracestate: [meta?.tracestate, headers?.tracestate],
  };
}

/** Random bytes as lowercase hex, never all zeros (an all-zero id is invalid). */
export function randomId(bytes: number): string {
  for (;;) {
    const id = [...crypto.getRandomValues(new Uint8Array(bytes))]
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('');
    if (/[^0]/.test(id)) return id;
  }
}

/**
 * The call's trace: the first valid `traceparent` given (a malformed one, or one with an
 * all-zero id, is passed over, as W3C says), with the `tracestate` that came beside it; else a
 * new trace.
 */
export function callTrace(input: TraceInput = { traceparent: [], tracestate: [] }): CallTrace {
  for (const [i, raw] of input.traceparent.entries()) {
    if (typeof raw !== 'string' || raw.length > 256) continue;
    const parent = parseTraceParent(raw);
    if (!parent) continue;
    const state = input.tracestate[i];
    const tracestate =
      typeof state === 'string' && state.length <= 4096 ? new TraceState(state).serialize() : '';
    return {
      traceId: parent.traceId,
      parentSpanId: parent.spanId,
      sampled: (parent.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
      tracestate: tracestate || null,
    };
  }
  return {
    traceId: randomId(16),
    parentSpanId: null,
    sampled: false,
    tracestate: null,
  };
}
