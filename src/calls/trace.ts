// A call's trace context (W3C Trace Context): continued from the client's `traceparent` (MCP
// 2026-07-28 carries it in the request's `_meta`; either era may send it as an HTTP header), or
// started here. The call is one span of that trace; each request it makes to Proxmox is a child
// span, and carries its own `traceparent`, so that a trace follows the call through Proxmox's
// proxy. The trace id is in the call's log line and its audit record. Parsing and ids are
// OpenTelemetry's (@opentelemetry/core, @opentelemetry/sdk-trace).

import { isSpanContextValid, TraceFlags } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { RandomIdGenerator } from '@opentelemetry/sdk-trace';

const ids = new RandomIdGenerator();

export interface CallTrace {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** The call's own span (16 hex digits). */
  spanId: string;
  /** The client's span the call continues, if it sent one. */
  parentSpanId: string | null;
  /** Whether the trace is sampled (the client's flag; a trace started here is). */
  sampled: boolean;
}

/**
 * The call's trace: the client's `traceparent` continued where it is valid (a malformed or
 * all-zero one is ignored, as W3C says, and a new trace started), else a new one.
 */
export function callTrace(traceparent: unknown): CallTrace {
  const parent =
    typeof traceparent === 'string' && traceparent.length <= 256
      ? parseTraceParent(traceparent.trim())
      : null;
  if (parent && isSpanContextValid(parent))
    return {
      traceId: parent.traceId,
      spanId: ids.generateSpanId(),
      parentSpanId: parent.spanId,
      sampled: (parent.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
    };
  return {
    traceId: ids.generateTraceId(),
    spanId: ids.generateSpanId(),
    parentSpanId: null,
    sampled: true,
  };
}

/** The `traceparent` of a new child span of the call (one per request to Proxmox). */
export function childTraceparent(trace: CallTrace): string {
  return `00-${trace.traceId}-${ids.generateSpanId()}-${trace.sampled ? '01' : '00'}`;
}
