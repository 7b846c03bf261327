// A call's spans (OpenTelemetry): the call itself (`tools/call <tool>`, a server span under the
// client's, where it sent one), a span per stage it passes (admission, validation, resolve, target
// reads, policy, approval wait, limits, run, audit write), and a client span per request to
// Proxmox (`GET /nodes/{node}/qemu/{vmid}/status/current`) under the stage that made it, whose id
// is the one its `traceparent` header gives Proxmox. Recorded only where tracing is configured
// (../config/tracing.ts) and the trace is sampled (OpenTelemetry's samplers: by default a
// client's sampled flag decides its own trace, OTEL_TRACES_SAMPLER_ARG one started here). A call
// that is not recorded records nothing: its requests still carry a `traceparent` (a span id of
// their own each; not sampled, or with no tracing configured the client's flag as it came). Spans
// are made by OpenTelemetry's SDK, a tracer and span processor per call, no span shared between
// requests; they carry names, routes, statuses and the policy's decision, never an argument value
// (a route is scrubbed of the call's hidden values and the configured secrets besides). Timed by
// the Runtime's clock. Tracing never fails a call: what cannot be recorded is left out.

import {
  type Attributes,
  defaultTextMapSetter,
  type Context,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace as traceApi,
  type Tracer,
} from '@opentelemetry/api';
import { TraceState, W3CTraceContextPropagator } from '@opentelemetry/core';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Clock } from '../clock';
import type { TracingSettings } from '../core/tracing-settings';
import { errorText, logLine } from '../log';
import type { RequestTrace } from '../proxmox/client';
import { pathTemplate } from '../proxmox/path-template';
import { type CallTrace, randomId } from './trace';

/** The stages of a call in the order a call passes them, each a span of its own where recorded. */
export const STAGES = [
  'admission',
  'validation',
  'resolve',
  'target reads',
  'policy',
  'approval wait',
  'limits',
  'run',
  'audit write',
] as const;
export type Stage = (typeof STAGES)[number];

/** A stage's span, for what is learnt inside it (the policy's decision). */
export interface StageSpan {
  set(attributes: Attributes): void;
}

/** One request to Proxmox: the headers that carry its span, and its end. */
export type RequestSpan = RequestTrace;

export interface CallSpans {
  /** Whether the call's spans are recorded (then exported). */
  readonly recording: boolean;
  /** Runs `work` as a stage: a child of the stage it runs in (or of the call). */
  stage<T>(name: Stage, work: (span: StageSpan) => Promise<T> | T): Promise<T>;
  /**
   * A request to Proxmox, a child of the stage it is made in; `cluster`: the cluster it goes to,
   * where the server reaches several.
   */
  request(method: string, path: string, cluster?: string): RequestSpan;
  /** The cluster the call is for: the call's span and every span after say which. */
  onCluster(name: string): void;
  /** Ends the call's span, with what the call came to. */
  end(attributes: Attributes, error?: string): void;
  /** The spans recorded and ended so far (none where not recording). */
  ended(): readonly ReadableSpan[];
}

/** What a call's spans say of it from the start. */
export interface CallSpanFacts {
  tool: string;
  session: string;
  requestId: string;
  /** Removes the call's hidden values and the configured secrets from a request's route. */
  scrub: (text: string) => string;
  /** Its requests' paths are the caller's own text (a raw request): only the API's words kept. */
  callersPaths: boolean;
}

/** Attribute names: OpenTelemetry's (MCP, GenAI, HTTP) where it has one, else ours. */
export const SPAN_ATTRIBUTES = {
  mcpMethod: 'mcp.method.name',
  mcpSession: 'mcp.session.id',
  operation: 'gen_ai.operation.name',
  tool: 'gen_ai.tool.name',
  errorType: 'error.type',
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  urlTemplate: 'url.template',
  requestId: 'proxmox_mcp.request_id',
  decision: 'proxmox_mcp.decision',
  rule: 'proxmox_mcp.rule',
  cluster: 'proxmox_mcp.cluster',
  outcome: 'proxmox_mcp.outcome',
  approval: 'proxmox_mcp.approval',
  dropped: 'proxmox_mcp.spans_dropped',
} as const;
const A = SPAN_ATTRIBUTES;

const propagator = new W3CTraceContextPropagator();

/** The spans of one call: recorded where `settings` say so and the trace is sampled. */
export function callSpans(
  trace: CallTrace,
  settings: TracingSettings | null,
  clock: Clock,
  facts: CallSpanFacts,
): CallSpans {
  if (settings) {
    try {
      const parent = parentContext(trace);
      if (sampled(settings, parent, trace.traceId))
        return new RecordedCall(trace, settings, clock, facts, parent);
    } catch (err) {
      // Tracing never fails a call: one that cannot be recorded goes unrecorded.
      logLine('error', 'spans_lost', { request_id: facts.requestId, error: errorText(err, 200) });
    }
  }
  // Where a sampler decided, Proxmox is told the trace is not sampled; with none, what the
  // client said goes on.
  return new UnrecordedCall(trace, settings ? false : trace.sampled);
}

/** The client's span as the context the call's span starts in (none: a root). */
function parentContext(trace: CallTrace): Context {
  if (!trace.parentSpanId) return ROOT_CONTEXT;
  return traceApi.setSpanContext(ROOT_CONTEXT, {
    traceId: trace.traceId,
    spanId: trace.parentSpanId,
    traceFlags: trace.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
    ...(trace.tracestate ? { traceState: new TraceState(trace.tracestate) } : {}),
  });
}

/**
 * The sampler of each settings (immutable, kept per isolate): the ratio for the traces started
 * here, and for a client's too unless its flag decides (parent-based, the default).
 */
const samplers = new WeakMap<TracingSettings, Sampler>();

function sampled(settings: TracingSettings, parent: Context, traceId: string): boolean {
  let sampler = samplers.get(settings);
  if (!sampler) {
    const ratio = new TraceIdRatioBasedSampler(settings.ratio);
    sampler = settings.parentBased ? new ParentBasedSampler({ root: ratio }) : ratio;
    samplers.set(settings, sampler);
  }
  const { decision } = sampler.shouldSample(parent, traceId, 'tools/call', SpanKind.SERVER, {}, []);
  return decision === SamplingDecision.RECORD_AND_SAMPLED;
}

/** The `traceparent` (and `tracestate`) of a span, as W3C Trace Context writes them. */
function headersOf(context: SpanContext): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagator.inject(traceApi.setSpanContext(ROOT_CONTEXT, context), carrier, defaultTextMapSetter);
  return carrier;
}

/** A call whose spans are not recorded: its requests carry the trace, nothing more. */
/** A stage span that records nothing. */
const NO_SPAN: StageSpan = { set: () => undefined };

/** Runs `work`; a throw is logged (spans_lost) and swallowed: tracing never fails a call. */
function safely<T>(work: () => T): T | undefined {
  try {
    return work();
  } catch (err) {
    logLine('error', 'spans_lost', { error: errorText(err, 200) });
    return undefined;
  }
}

class UnrecordedCall implements CallSpans {
  readonly recording = false;
  private static readonly NO_END = (): void => undefined;
  private readonly state: TraceState | undefined;

  constructor(
    private readonly trace: CallTrace,
    private readonly sampled: boolean,
  ) {
    this.state = trace.tracestate ? new TraceState(trace.tracestate) : undefined;
  }

  async stage<T>(_name: Stage, work: (span: StageSpan) => Promise<T> | T): Promise<T> {
    return work(NO_SPAN);
  }

  request(): RequestSpan {
    const headers = headersOf({
      traceId: this.trace.traceId,
      spanId: randomId(8),
      traceFlags: this.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      ...(this.state ? { traceState: this.state } : {}),
    });
    return { headers, end: UnrecordedCall.NO_END };
  }

  onCluster(): void {}

  end(): void {}

  ended(): readonly ReadableSpan[] {
    return [];
  }
}

/** At most this many spans of one call are kept (a task polled for minutes makes many requests). */
export const MAX_CALL_SPANS = 256;

/** Keeps a call's ended spans for its one export (an SDK span processor of its own). */
class EndedSpans implements SpanProcessor {
  readonly spans: ReadableSpan[] = [];
  /** Those left out past MAX_CALL_SPANS (the call's own span is always kept). */
  dropped = 0;
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    if (this.spans.length < MAX_CALL_SPANS - 1 || span.kind === SpanKind.SERVER)
      this.spans.push(span);
    else this.dropped++;
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** The resource of each settings: the service the spans are of. */
const resources = new WeakMap<TracingSettings, Resource>();

function resourceOf(settings: TracingSettings): Resource {
  let resource = resources.get(settings);
  if (!resource) {
    resource = resourceFromAttributes({ 'service.name': settings.serviceName });
    resources.set(settings, resource);
  }
  return resource;
}

/** A call whose spans are recorded, by a tracer of its own. */
class RecordedCall implements CallSpans {
  readonly recording = true;
  private readonly processor = new EndedSpans();
  private readonly tracer: Tracer;
  private readonly call: Span;
  /** The stage running now (the call's span between stages): new spans' parent. */
  private current: Context;
  /** What every span of the call carries: the tool, and the cluster once known. */
  private common: Attributes;
  private readonly scrub: (text: string) => string;
  private readonly callersPaths: boolean;
  private readonly fallback: UnrecordedCall;

  constructor(
    trace: CallTrace,
    settings: TracingSettings,
    private readonly clock: Clock,
    facts: CallSpanFacts,
    parent: Context,
  ) {
    const provider = new TracerProvider({
      resource: resourceOf(settings),
      // Sampled already (above): every span of the call is recorded.
      sampler: new AlwaysOnSampler(),
      // The trace's id is the one the call's log line and record carry; each span's, random.
      idGenerator: { generateTraceId: () => trace.traceId, generateSpanId: () => randomId(8) },
      spanProcessors: [this.processor],
    });
    this.tracer = provider.getTracer('proxmox-mcp');
    this.common = { [A.tool]: facts.tool };
    this.scrub = facts.scrub;
    this.callersPaths = facts.callersPaths;
    this.fallback = new UnrecordedCall(trace, true);
    this.call = this.tracer.startSpan(
      `tools/call ${facts.tool}`,
      {
        kind: SpanKind.SERVER,
        startTime: clock.now(),
        attributes: {
          [A.mcpMethod]: 'tools/call',
          [A.operation]: 'execute_tool',
          [A.mcpSession]: facts.session,
          [A.requestId]: facts.requestId,
          ...this.common,
        },
      },
      parent,
    );
    this.current = traceApi.setSpan(parent, this.call);
  }

  async stage<T>(name: Stage, work: (span: StageSpan) => Promise<T> | T): Promise<T> {
    const outer = this.current;
    const span = safely(() =>
      this.tracer.startSpan(
        name,
        { kind: SpanKind.INTERNAL, startTime: this.clock.now(), attributes: this.common },
        outer,
      ),
    );
    if (!span) return work(NO_SPAN);
    this.current = traceApi.setSpan(outer, span);
    try {
      return await work({ set: (attributes) => safely(() => span.setAttributes(attributes)) });
    } catch (err) {
      safely(() => {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute(A.errorType, errorType(err));
      });
      throw err;
    } finally {
      this.current = outer;
      safely(() => span.end(this.clock.now()));
    }
  }

  request(method: string, path: string, cluster?: string): RequestSpan {
    // Never the call's failure: a request that cannot be recorded goes unrecorded, its trace
    // still carried.
    return safely(() => this.requestSpan(method, path, cluster)) ?? this.fallback.request();
  }

  private requestSpan(method: string, path: string, cluster?: string): RequestSpan {
    const route = this.scrub(pathTemplate(path, this.callersPaths));
    const span = this.tracer.startSpan(
      `${method} ${route}`,
      {
        kind: SpanKind.CLIENT,
        startTime: this.clock.now(),
        attributes: {
          ...this.common,
          ...(cluster !== undefined ? { [A.cluster]: cluster } : {}),
          [A.httpMethod]: method,
          [A.urlTemplate]: route,
        },
      },
      this.current,
    );
    return {
      headers: headersOf(span.spanContext()),
      end: (status, error) =>
        safely(() => {
          if (status !== null) span.setAttribute(A.httpStatus, status);
          // As OpenTelemetry's HTTP conventions say: the status code from 400, else why it failed.
          const failed = status !== null && status >= 400 ? String(status) : error;
          if (failed) {
            span.setAttribute(A.errorType, failed);
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end(this.clock.now());
        }),
    };
  }

  onCluster(name: string): void {
    this.common = { ...this.common, [A.cluster]: name };
    safely(() => this.call.setAttribute(A.cluster, name));
  }

  end(attributes: Attributes, error?: string): void {
    safely(() => {
      this.call.setAttributes(attributes);
      if (error) {
        this.call.setAttribute(A.errorType, error);
        this.call.setStatus({ code: SpanStatusCode.ERROR });
      }
      if (this.processor.dropped) this.call.setAttribute(A.dropped, this.processor.dropped);
      this.call.end(this.clock.now());
    });
  }

  ended(): readonly ReadableSpan[] {
    return this.processor.spans;
  }
}

/** A thrown error as error.type: its class's name, never its message (it may quote a value). */
function errorType(err: unknown): string {
  return err instanceof Error ? err.name : 'non-error';
}
