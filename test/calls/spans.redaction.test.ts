// A call's spans, exported to a local OTLP/HTTP receiver (test/support/setup/receivers.ts): a
// 2026-07-28 call with `_meta.traceparent` and a 2025 session's call with a `traceparent` header
// each give one span of the call under the client's span, one per stage it passed, and a client
// span per request to Proxmox under the stage that made it, whose id is the one Proxmox got in its
// `traceparent` (the simulator's request log); the call's audit record and log line carry the
// same trace id. The export carries the configured key, and no span a secret or an argument value.
//
// Project redaction: IDP=dev, spans exported to the receiver with a key (OTLP_KEY), every trace
// recorded; its policy, test/support/policies/spans.ts, put in force by an editor.

import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { OTLP_KEY } from '../support/notify-secret';
import { SPANS_POLICY } from '../support/policies/spans';
import { auditRecords } from '../support/worker/audit';
import { signedInToken } from '../support/worker/eras';
import { connect2026 } from '../support/worker/mcp-2026';
import { ORIGIN, workerFetch } from '../support/worker/mcp';
import { asEditor } from '../support/worker/oauth';
import { usePolicy } from '../support/worker/policy';
import { sim } from '../support/worker/sim';
import { type ExportedSpan, spansOfCall, toolCallLinesOfEachTest } from '../support/worker/spans';

usePolicy(SPANS_POLICY, asEditor());

const CLIENT_SPAN = '00f067aa0ba902b7';
/** A trace of its own for each test: the receiver keeps every export of the project's run. */
const newTrace = (): string =>
  [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');

const toolCallLines = toolCallLinesOfEachTest();

/** The call of trace `trace`: its record, its log line, its spans and what Proxmox got. */
async function traced(trace: string) {
  const [record] = await auditRecords((r) => r.trace_id === trace);
  const log = toolCallLines().find((l) => l.request_id === record!.request_id);
  const spans = await spansOfCall(record!.request_id);
  return { record: record!, log, spans, requests: await sim.requests() };
}

/** The span named so (exactly one). */
function one(spans: readonly ExportedSpan[], name: string): ExportedSpan {
  const named = spans.filter((s) => s.name === name);
  expect(named.map((s) => s.name)).toEqual([name]);
  return named[0]!;
}

/** What every call's spans show alike: one trace, one call span under the client's, its stages. */
function expectCallTree(
  spans: readonly ExportedSpan[],
  trace: string,
  tool: string,
  stages: readonly string[],
) {
  expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([trace]));
  const call = one(spans, `tools/call ${tool}`);
  expect(call).toMatchObject({
    kind: 2,
    parentSpanId: CLIENT_SPAN,
    service: 'proxmox-mcp',
    attributes: {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': tool,
      'gen_ai.operation.name': 'execute_tool',
      'proxmox_mcp.decision': 'allow',
      'proxmox_mcp.outcome': 'ok',
    },
  });
  // Every span a child of another of the call's (the call's own, of the client's).
  const ids = new Set(spans.map((s) => s.spanId));
  for (const span of spans) if (span !== call) expect(ids).toContain(span.parentSpanId);
  const internal = spans.filter((s) => s.kind === 1);
  expect([...new Set(internal.map((s) => s.name))].sort()).toEqual([...stages].sort());
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (const span of spans) {
    expect(span.attributes['gen_ai.tool.name']).toBe(tool);
    // Each span within the time of the call; a request's within its stage's.
    expect(span.startNs).toBeGreaterThanOrEqual(call.startNs);
    const parent = byId.get(span.parentSpanId);
    if (span.kind === 3 && parent) {
      expect(span.startNs).toBeGreaterThanOrEqual(parent.startNs);
      expect(span.endNs).toBeLessThanOrEqual(parent.endNs);
    }
  }
  // The stages between the call's start and its end run under it; the audit write after it.
  for (const name of ['admission', 'validation', 'policy', 'run', 'audit write'])
    expect(one(spans, name).parentSpanId).toBe(call.spanId);
  const policy = one(spans, 'policy');
  expect(policy.attributes['proxmox_mcp.decision']).toBe('allow');
  expect(one(spans, 'limits').parentSpanId).toBe(policy.spanId);
  // The export carried the key, as JSON, and the receiver took it.
  expect(call.headers['x-otlp-key']).toBe(OTLP_KEY);
  expect(call.headers['content-type']).toBe('application/json');
  expect(call.answered).toBe(200);
  return call;
}

/** Each request Proxmox got is one client span, under `parent`, with the id its traceparent gave. */
function expectRequestSpans(
  spans: readonly ExportedSpan[],
  requests: readonly { method: string; path: string; headers: Record<string, string> }[],
  trace: string,
) {
  const clients = spans.filter((s) => s.kind === 3);
  expect(clients.length).toBe(requests.length);
  for (const request of requests) {
    const [, traceId, spanId, flags] = request.headers.traceparent!.split('-');
    expect([traceId, flags]).toEqual([trace, '01']);
    const span = clients.find((s) => s.spanId === spanId);
    expect(span, `${request.method} ${request.path}`).toBeDefined();
    expect(span!.attributes['http.request.method']).toBe(request.method);
    expect(span!.attributes['http.response.status_code']).toBe(200);
    // Named by its route, never by a guest's id or a node's name.
    expect(span!.name).toBe(`${request.method} ${span!.attributes['url.template']}`);
    expect(span!.name).not.toMatch(/pve\d|\/\d/);
  }
  return clients;
}

/** `user` starts a guest from a 2026-07-28 client, under a sampled trace of its own. */
async function startAs(user: string, guest: { node: string; vmid: number }) {
  const trace = newTrace();
  const client = await connect2026({ token: await signedInToken(user) });
  try {
    const result = await client.callTool({
      name: 'pve_start_vm',
      arguments: { ...guest, confirm: true },
      _meta: { traceparent: `00-${trace}-${CLIENT_SPAN}-01` },
    });
    return { trace, result };
  } finally {
    await client.close();
  }
}

describe("a call's spans at an OTLP receiver", () => {
  it('a 2026-07-28 call with _meta.traceparent: one span per stage, its requests under them', async () => {
    const { trace, result } = await startAs('spans-2026@example.com', { node: 'pve2', vmid: 104 });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const { record, log, spans, requests } = await traced(trace);
    expect([record.trace_id, log?.trace_id]).toEqual([trace, trace]);
    expectCallTree(spans, trace, 'pve_start_vm', [
      'admission',
      'validation',
      'target reads',
      'policy',
      'limits',
      'run',
      'audit write',
    ]);
    const clients = expectRequestSpans(spans, requests, trace);
    // The guest's facts were read before the policy decided; the start was sent in the run.
    const start = one(clients, 'POST /nodes/{node}/qemu/{vmid}/status/start');
    expect(start.parentSpanId).toBe(one(spans, 'run').spanId);
    const reads = one(spans, 'target reads');
    expect(clients.filter((s) => s.parentSpanId === reads.spanId).length).toBeGreaterThan(0);
  });

  it("a 2025 session's call with a traceparent header, approved in the conversation", async () => {
    const trace = newTrace();
    const token = await signedInToken('spans-2025@example.com');
    const client = new Client2025(
      { name: 'traced-2025', version: '1' },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { approve: true },
    }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: workerFetch,
        requestInit: {
          headers: {
            authorization: `Bearer ${token}`,
            traceparent: `00-${trace}-${CLIENT_SPAN}-01`,
          },
        },
      }),
    );
    try {
      const result = await client.callTool({
        name: 'pve_stop_vm',
        arguments: { node: 'pve2', vmid: 103, confirm: true },
      });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    } finally {
      await client.close();
    }
    const { record, log, spans, requests } = await traced(trace);
    expect(record).toMatchObject({ trace_id: trace, approval_channel: 'conversation' });
    expect(log?.trace_id).toBe(trace);
    expectCallTree(spans, trace, 'pve_stop_vm', [
      'admission',
      'validation',
      'target reads',
      'policy',
      'approval wait',
      'limits',
      'run',
      'audit write',
    ]);
    const wait = one(spans, 'approval wait');
    expect(wait.parentSpanId).toBe(one(spans, 'policy').spanId);
    // The rule that asked, and what came of it.
    expect(wait.attributes).toMatchObject({
      'proxmox_mcp.rule': '/tools/pve_stop_vm/action',
      'proxmox_mcp.approval': 'approved',
    });
    const clients = expectRequestSpans(spans, requests, trace);
    const stop = one(clients, 'POST /nodes/{node}/qemu/{vmid}/status/stop');
    expect(stop.parentSpanId).toBe(one(spans, 'run').spanId);
  });

  it('a refused call: the policy span names the rule, nothing is sent, the spans still go', async () => {
    const { trace, result } = await startAs('spans-refused@example.com', {
      node: 'pve1',
      vmid: 101,
    });
    expect(result.isError).toBe(true);
    const { spans, requests } = await traced(trace);
    expect(requests.filter((r) => r.method !== 'GET')).toEqual([]);
    const call = one(spans, 'tools/call pve_start_vm');
    expect(call.attributes).toMatchObject({
      'proxmox_mcp.decision': 'deny',
      'proxmox_mcp.rule': '/tools/pve_start_vm/deny_if/0',
      'proxmox_mcp.outcome': 'denied',
    });
    expect(one(spans, 'policy').attributes['proxmox_mcp.rule']).toBe(
      '/tools/pve_start_vm/deny_if/0',
    );
    expect(spans.map((s) => s.name)).not.toContain('run');
  });
});
