// An OTLP/HTTP export's JSON body as a collector reads it: its spans, each with its resource's
// attributes, or why it is not an ExportTraceServiceRequest of whole spans (a trace id of 32 hex
// digits, a span id of 16, a name). One reader for the tests' receiver (./setup/receivers.ts),
// the tests that read the spans back (./worker/spans.ts) and the bench's receiver.

export interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

export interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

/** A span with its resource's attributes. */
export interface ReceivedSpan {
  span: OtlpSpan;
  resource: OtlpAttribute[];
}

/** The spans of an export's body; throws, saying why, where it is not one with whole spans. */
export function otlpSpans(body: string): ReceivedSpan[] {
  let request: OtlpRequest;
  try {
    request = JSON.parse(body) as OtlpRequest;
  } catch {
    throw new Error('not JSON');
  }
  if (!Array.isArray(request?.resourceSpans)) throw new Error('no resourceSpans');
  const spans = request.resourceSpans.flatMap((r) =>
    (r.scopeSpans ?? []).flatMap((s) =>
      (s.spans ?? []).map((span) => ({ span, resource: r.resource?.attributes ?? [] })),
    ),
  );
  const whole = ({ span }: ReceivedSpan): boolean =>
    /^[0-9a-f]{32}$/.test(String(span.traceId)) &&
    /^[0-9a-f]{16}$/.test(String(span.spanId)) &&
    typeof span.name === 'string';
  if (!spans.length || !spans.every(whole)) throw new Error('not an export of whole spans');
  return spans;
}

/** An attribute's value as a plain one. */
function attributeValue(v: OtlpValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue ?? '';
}

/** Attributes as a record. */
export function attributeRecord(
  list: readonly OtlpAttribute[] = [],
): Record<string, string | number | boolean> {
  return Object.fromEntries(list.map((a) => [a.key, attributeValue(a.value)]));
}
