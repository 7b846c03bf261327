// A call's spans, sent once to the configured OTLP destination (OTLP/HTTP, JSON, encoded by
// OpenTelemetry's @opentelemetry/otlp-transformer) after its audit record is written: one POST per
// recorded call, in the background (waitUntil), nothing batched or kept between requests (a
// Worker's request may not wait on I/O another request started). A failed export is logged with
// how many spans it lost, never retried and never the call's failure; the log line names neither
// the endpoint nor a header (either may hold a key).

import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { TracingSettings } from '../core/tracing-settings';
import { errorText, logLine } from '../log';
import type { Scrubber } from '../secrets/scrub';

/** One export's deadline: the background work a call leaves must end. */
export const SPAN_EXPORT_DEADLINE_MS = 5_000;

export async function exportSpans(
  settings: TracingSettings,
  spans: readonly ReadableSpan[],
  requestId: string,
  scrubber: Scrubber,
): Promise<void> {
  if (!spans.length) return;
  const lost = (reason: Record<string, unknown>): void =>
    logLine('error', 'spans_lost', { request_id: requestId, spans: spans.length, ...reason });
  try {
    const body = JsonTraceSerializer.serializeRequest([...spans]);
    if (!body) return lost({ error: 'the spans could not be encoded' });
    // The configured headers, then the body's type over any of theirs (whatever its case).
    const headers = new Headers(settings.headers);
    headers.set('content-type', 'application/json');
    const response = await fetch(settings.endpoint, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(SPAN_EXPORT_DEADLINE_MS),
    });
    await response.body?.cancel();
    if (!response.ok) lost({ status: response.status });
  } catch (err) {
    // Scrubbed before it is cut: a cut through the endpoint would leave part of its key.
    lost({ error: scrubber.text(errorText(err, 2_000, true)).slice(0, 200) });
  }
}
