// A call's spans alone, in-process: what src/calls/spans.ts costs one call (nine stages, two
// requests to Proxmox) without any I/O around it: with no tracing configured and with sampling
// off (either way only each request's traceparent is made), and sampled (the SDK's spans, then the
// OTLP/HTTP JSON body the export sends). Prints the median µs per call. Run alone with
// `node --import tsx bench/spans.ts`, or as part of `npm run bench`.

import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { callSpans, STAGES } from '../src/calls/spans.ts';
import { callTrace } from '../src/calls/trace.ts';
import { systemClock } from '../src/clock.ts';
import type { TracingSettings } from '../src/core/tracing-settings.ts';

const SETTINGS: TracingSettings = {
  endpoint: 'http://127.0.0.1:4318/v1/traces',
  headers: {},
  ratio: 0,
  parentBased: true,
  serviceName: 'proxmox-mcp',
};
const FACTS = {
  tool: 'pve_get_vm_status',
  session: 'stateless',
  requestId: 'r',
  scrub: (text: string) => text,
  callersPaths: false,
};
const BATCHES = 30;
const PER_BATCH = 2_000;

/** What one call's spans came to: how many were recorded, and the export's body (bytes). */
interface Made {
  spans: number;
  body: number;
}

/** One call's spans, from its trace to the body its export would send. */
async function oneCall(flags: '00' | '01', settings: TracingSettings | null): Promise<Made> {
  const trace = callTrace({
    traceparent: [`00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-${flags}`],
    tracestate: [],
  });
  const spans = callSpans(trace, settings, systemClock, FACTS);
  for (const stage of STAGES)
    await spans.stage(stage, () => {
      if (stage !== 'target reads' && stage !== 'run') return;
      const request = spans.request('GET', '/nodes/pve1/qemu/100/status/current');
      if (!request.headers.traceparent) throw new Error('a request without its traceparent');
      request.end(200);
    });
  spans.end({ 'proxmox_mcp.decision': 'allow' });
  const ended = spans.ended();
  const body = ended.length ? (JsonTraceSerializer.serializeRequest([...ended])?.length ?? 0) : 0;
  return { spans: ended.length, body };
}

async function microsPerCall(
  flags: '00' | '01',
  settings: TracingSettings | null,
): Promise<Made & { us: number }> {
  let made: Made = { spans: 0, body: 0 };
  for (let i = 0; i < 200; i++) made = await oneCall(flags, settings);
  const batches: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const t = performance.now();
    for (let i = 0; i < PER_BATCH; i++) await oneCall(flags, settings);
    batches.push(((performance.now() - t) * 1000) / PER_BATCH);
  }
  batches.sort((a, b) => a - b);
  return { ...made, us: batches[Math.floor(batches.length / 2)]! };
}

export async function reportSpans(): Promise<void> {
  console.log(
    `\n${`a call's spans alone (in-process; ${STAGES.length} stages, 2 requests)`.padEnd(60)} ${'µs/call p50'.padStart(12)}`,
  );
  const row = (name: string, us: number) =>
    console.log(`${`  ${name}`.padEnd(60)} ${us.toFixed(1).padStart(12)}`);
  row(
    "no tracing configured: each request's traceparent only",
    (await microsPerCall('01', null)).us,
  );
  row(
    "sampling off (a client's unsampled trace): the same",
    (await microsPerCall('00', SETTINGS)).us,
  );
  const on = await microsPerCall('01', SETTINGS);
  row(
    `sampled: ${on.spans} spans recorded, a ${(on.body / 1024).toFixed(1)} KiB OTLP JSON body`,
    on.us,
  );
}

if (import.meta.filename === process.argv[1]) {
  reportSpans().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
