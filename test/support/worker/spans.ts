// A call's trace as the tests read it back: the spans the Worker exported to the project's OTLP
// receiver (test/support/setup/receivers.ts), from the OTLP/HTTP JSON bodies it received (each
// span with its resource's service, its attributes as a record, and the export's headers), and
// the `tool_call` log lines each test's calls wrote.

import { afterEach, beforeEach, expect, inject, vi } from 'vitest';
import { attributeRecord, otlpSpans } from '../otlp';
import type { Received } from '../setup/receivers';
import { sim } from './sim';

/** What a test reads of a call's `tool_call` log line. */
export interface ToolCallLine {
  request_id: string;
  trace_id?: string;
}

/**
 * Each test of the file begins from the seeded cluster with an empty request log, and keeps the
 * `tool_call` log lines its calls write: the function returned gives them, parsed.
 */
export function toolCallLinesOfEachTest(): () => ToolCallLine[] {
  let lines: string[] = [];
  beforeEach(async () => {
    await sim.reset();
    await sim.clearLog();
    lines = [];
    vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => {
      lines.push(a.map(String).join(' '));
    });
  });
  afterEach(() => vi.restoreAllMocks());
  return () =>
    lines.filter((l) => l.includes('"msg":"tool_call"')).map((l) => JSON.parse(l) as ToolCallLine);
}

export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  startNs: bigint;
  endNs: bigint;
  service: string;
  /** Which export carried it (the receiver's count), its headers, and how it was answered. */
  export: number;
  headers: Record<string, string>;
  answered: number | null;
}

/** Every span every export carried, as received (the receiver keeps them for the project's run). */
export async function exportedSpans(): Promise<ExportedSpan[]> {
  const received = (await (await fetch(`${inject('receiverUrl')}/_spans`)).json()) as Received[];
  return received.flatMap((entry, n) =>
    otlpSpans(entry.body).map(({ span, resource }) => ({
      traceId: span.traceId,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId ?? '',
      name: span.name,
      kind: span.kind,
      attributes: attributeRecord(span.attributes),
      status: span.status?.code ?? 0,
      startNs: BigInt(span.startTimeUnixNano),
      endNs: BigInt(span.endTimeUnixNano),
      service: String(attributeRecord(resource)['service.name']),
      export: n,
      headers: entry.headers,
      answered: entry.answered,
    })),
  );
}

/**
 * The spans of the call `requestId` (its own, its stages', its requests'), once its export has
 * come (a call's spans go in one export, after its audit record is written).
 */
export async function spansOfCall(requestId: string): Promise<ExportedSpan[]> {
  let spans: ExportedSpan[] = [];
  await expect
    .poll(
      async () => {
        const all = await exportedSpans();
        const call = all.find((s) => s.attributes['proxmox_mcp.request_id'] === requestId);
        spans = call ? all.filter((s) => s.export === call.export) : [];
        return spans.length;
      },
      { timeout: 10_000, interval: 100 },
    )
    .toBeGreaterThan(0);
  return spans;
}
