// A call's spans as src/calls/spans.ts records them with OpenTelemetry's SDK, in-process: which
// calls are recorded (the samplers), how spans nest (stages under the call, requests under the
// stage that sent them), what a request's span says of its answer, the cluster on each, a route
// scrubbed of the call's hidden values, and tracing that fails leaving the call's trace intact.
// The end to end (both MCP eras, an OTLP receiver, Proxmox's request log) is
// test/calls/spans.redaction.test.ts.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CallSpanFacts, callSpans } from '../../src/calls/spans';
import { callTrace } from '../../src/calls/trace';
import type { TracingSettings } from '../../src/core/tracing-settings';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const W3C = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

const SETTINGS: TracingSettings = {
  endpoint: 'https://otlp.example.com/v1/traces',
  headers: {},
  ratio: 1,
  parentBased: true,
  serviceName: 'proxmox-mcp',
};

/** A clock that moves 1 ms at each reading. */
const clock = (() => {
  let at = Date.UTC(2026, 11, 6, 12);
  return { now: () => at++ };
})();

const FACTS: CallSpanFacts = {
  tool: 'pve_stop_vm',
  session: 's1',
  requestId: 'r1',
  scrub: (text) => text,
  callersPaths: false,
};

const from = (flags: string | null) =>
  callTrace({
    traceparent: flags ? [`00-${TRACE}-${CLIENT_SPAN}-${flags}`] : [],
    tracestate: [],
  });

afterEach(() => vi.restoreAllMocks());

describe('which calls are recorded', () => {
  it.each([
    ['no tracing configured, a sampled client trace', null, '01', false],
    ['parent-based, a sampled client trace, ratio 0', { ratio: 0 }, '01', true],
    ['parent-based, an unsampled client trace, ratio 1', {}, '00', false],
    ['parent-based, a trace started here, ratio 1', {}, null, true],
    ['parent-based, a trace started here, ratio 0', { ratio: 0 }, null, false],
    ['traceidratio 0: a sampled client trace too', { ratio: 0, parentBased: false }, '01', false],
    ['traceidratio 1: an unsampled client trace too', { parentBased: false }, '00', true],
  ])('%s: recorded %s', (_what, settings, flags, recorded) => {
    const trace = from(flags);
    const spans = callSpans(trace, settings ? { ...SETTINGS, ...settings } : null, clock, FACTS);
    expect(spans.recording).toBe(recorded);
    const [, traceId, , sampled] = W3C.exec(spans.request('GET', '/version').headers.traceparent!)!;
    expect(traceId).toBe(flags ? TRACE : trace.traceId);
    // Proxmox is told the trace is sampled where it is recorded, or where the client said so
    // and no sampler here decided (no tracing configured).
    expect(sampled).toBe(recorded || (settings === null && flags === '01') ? '01' : '00');
    spans.end({});
    expect(spans.ended().length > 0).toBe(recorded);
  });
});

describe('a recorded call', () => {
  it('nests stages under the call, under the client span, and requests under their stage', async () => {
    const spans = callSpans(from('01'), SETTINGS, clock, FACTS);
    const sent: string[] = [];
    await spans.stage('admission', () => undefined);
    await spans.stage('policy', async (policy) => {
      await spans.stage('limits', () => undefined);
      policy.set({ 'proxmox_mcp.decision': 'allow' });
    });
    await spans.stage('run', async () => {
      // Two requests open together (as a list across clusters has them): both under the stage.
      const requests = [
        spans.request('GET', '/nodes/pve1/qemu/100/status/current'),
        spans.request('POST', '/nodes/pve1/qemu/100/status/stop'),
      ];
      for (const r of requests) {
        sent.push(W3C.exec(r.headers.traceparent!)![2]!);
        r.end(200);
      }
    });
    spans.end({ 'proxmox_mcp.decision': 'allow' });
    const ended = spans.ended();
    const byName = new Map(ended.map((s) => [s.name, s]));
    const id = (name: string) => byName.get(name)!.spanContext().spanId;
    const parent = (name: string) => byName.get(name)!.parentSpanContext?.spanId;
    expect([...byName.keys()].sort()).toEqual([
      'GET /nodes/{node}/qemu/{vmid}/status/current',
      'POST /nodes/{node}/qemu/{vmid}/status/stop',
      'admission',
      'limits',
      'policy',
      'run',
      'tools/call pve_stop_vm',
    ]);
    expect(ended.every((s) => s.spanContext().traceId === TRACE)).toBe(true);
    expect(parent('tools/call pve_stop_vm')).toBe(CLIENT_SPAN);
    for (const stage of ['admission', 'policy', 'run'])
      expect(parent(stage)).toBe(id('tools/call pve_stop_vm'));
    expect(parent('limits')).toBe(id('policy'));
    expect(parent('GET /nodes/{node}/qemu/{vmid}/status/current')).toBe(id('run'));
    // The span id each request's traceparent gave Proxmox is its span's.
    expect(sent).toEqual([
      id('GET /nodes/{node}/qemu/{vmid}/status/current'),
      id('POST /nodes/{node}/qemu/{vmid}/status/stop'),
    ]);
    expect(byName.get('policy')!.attributes['proxmox_mcp.decision']).toBe('allow');
  });

  it.each([
    ['a refusal', 403, undefined, { 'http.response.status_code': 403, 'error.type': '403' }],
    ['a timeout', null, 'timeout', { 'error.type': 'timeout' }],
    ['an answer that is not what was asked', 200, 'bad_response', { 'error.type': 'bad_response' }],
  ])('says what became of a request: %s', (_what, status, error, attributes) => {
    const spans = callSpans(from('01'), SETTINGS, clock, FACTS);
    spans.request('GET', '/cluster/resources').end(status, error);
    const [span] = spans.ended();
    expect(span!.attributes).toMatchObject(attributes);
    expect(span!.status.code).toBe(2);
  });

  it('names the cluster: each request its own, the call and the stages after it the one it is for', async () => {
    const spans = callSpans(from('01'), SETTINGS, clock, FACTS);
    await spans.stage('admission', () => undefined);
    spans.onCluster('prod');
    await spans.stage('run', () => spans.request('GET', '/version', 'lab').end(200));
    spans.end({});
    const cluster = Object.fromEntries(
      spans.ended().map((s) => [s.name, s.attributes['proxmox_mcp.cluster']]),
    );
    expect(cluster).toEqual({
      admission: undefined,
      'GET /version': 'lab',
      run: 'prod',
      'tools/call pve_stop_vm': 'prod',
    });
  });

  it("scrubs the call's hidden values from a route", () => {
    const spans = callSpans(from('01'), SETTINGS, clock, {
      ...FACTS,
      scrub: (text) => text.replaceAll('hushhush', '[redacted]'),
    });
    spans.request('GET', '/cluster/hushhush/status').end(200);
    expect(spans.ended()[0]!.name).toBe('GET /cluster/[redacted]/status');
  });

  it("names a raw request's span by the API's words only, none of the caller's", () => {
    const spans = callSpans(from('01'), SETTINGS, clock, { ...FACTS, callersPaths: true });
    spans.request('GET', '/cluster/my-secret-project').end(200);
    spans.request('GET', '/nodes/pve1/qemu/100/agent/hunter-two').end(200);
    expect(spans.ended().map((s) => s.name)).toEqual([
      'GET /cluster/{id}',
      'GET /nodes/{node}/qemu/{vmid}/{id}/{id}',
    ]);
  });

  it('keeps at most 256 spans of a call, its own always, and says how many it left out', () => {
    const spans = callSpans(from('01'), SETTINGS, clock, FACTS);
    for (let i = 0; i < 300; i++) spans.request('GET', '/cluster/tasks').end(200);
    spans.end({});
    const ended = spans.ended();
    expect(ended).toHaveLength(256);
    const call = ended.find((s) => s.name === 'tools/call pve_stop_vm')!;
    expect(call.attributes['proxmox_mcp.spans_dropped']).toBe(45);
  });

  it('leaves a request unrecorded, its trace still carried, when recording it fails', () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const spans = callSpans(from('01'), SETTINGS, clock, {
      ...FACTS,
      scrub: () => {
        throw new Error('scrubber broke');
      },
    });
    const request = spans.request('GET', '/version');
    expect(request.headers.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    request.end(200);
    spans.end({});
    expect(spans.ended().map((s) => s.name)).toEqual(['tools/call pve_stop_vm']);
    expect(console.error).toHaveBeenCalledWith(expect.stringContaining('"msg":"spans_lost"'));
  });

  it("marks a stage that threw, by its error's class, and lets the error through", async () => {
    const spans = callSpans(from('01'), SETTINGS, clock, FACTS);
    await expect(
      spans.stage('run', () => {
        throw new TypeError('a value the message may quote');
      }),
    ).rejects.toThrow(TypeError);
    const [run] = spans.ended();
    expect(run!.attributes['error.type']).toBe('TypeError');
    expect(JSON.stringify(run!.attributes)).not.toContain('a value the message may quote');
  });
});
