// A call's trace (W3C Trace Context) through both eras: an MCP 2026-07-28 call's
// `_meta.traceparent` (or, without it, its `traceparent` header) and a 2025 session's header are
// continued, with their sampled flag and `tracestate`; a call without a valid one starts a trace
// of its own (not sampled); either way the call's log line and audit record carry the trace id,
// and every request Proxmox gets carries a `traceparent` of that trace, a span of its own each,
// read from the simulator's request log. This project exports spans to its receiver with the
// sampler's ratio at 0: a client's sampled trace is recorded and exported (its spans:
// test/calls/spans.redaction.test.ts), none other is.

import type { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { auditRecords } from '../support/worker/audit';
import { connect2026 } from '../support/worker/mcp-2026';
import { ORIGIN, workerFetch } from '../support/worker/mcp';
import { OPEN_POLICY, usePolicy } from '../support/worker/policy';
import { sim } from '../support/worker/sim';
import { exportedSpans, spansOfCall, toolCallLinesOfEachTest } from '../support/worker/spans';

usePolicy(OPEN_POLICY);

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE}-${CLIENT_SPAN}-01`;
const STATUS = { node: 'pve1', vmid: 100 };
const W3C = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

const toolCallLines = toolCallLinesOfEachTest();

/** What one call left behind: its trace id in the log line and the record, and Proxmox's view. */
async function traced(since: number) {
  const [log] = toolCallLines();
  const [record] = await auditRecords((r) => r.ts >= since && r.request_id === log!.request_id);
  const requests = await sim.requests();
  const upstream = requests.map((r) => W3C.exec(r.headers.traceparent ?? ''));
  return {
    requestId: log!.request_id,
    log: log!.trace_id,
    record: record!.trace_id,
    upstreamTraces: [...new Set(upstream.map((m) => m?.[1] ?? null))],
    upstreamSpans: upstream.map((m) => m?.[2] ?? null),
    upstreamFlags: [...new Set(upstream.map((m) => m?.[3] ?? null))],
    upstreamStates: [...new Set(requests.map((r) => r.headers.tracestate ?? null))],
  };
}

/**
 * No span of the call reached the receiver: a recorded call's export leaves as soon as its audit
 * record is written (traced waited for it), so once a sampled call made after it has had its
 * spans received, the first one's would have been too.
 */
async function expectNoSpans(requestId: string): Promise<void> {
  const marker = `${TRACE.slice(0, 24)}${requestId.replace(/-/g, '').slice(0, 8)}`;
  const client = await connect2026();
  try {
    await client.callTool({
      name: 'pve_get_vm_status',
      arguments: STATUS,
      _meta: { traceparent: `00-${marker}-${CLIENT_SPAN}-01` },
    });
  } finally {
    await client.close();
  }
  const [after] = await auditRecords((r) => r.trace_id === marker);
  await spansOfCall(after!.request_id);
  const mine = (await exportedSpans()).filter(
    (s) => s.attributes['proxmox_mcp.request_id'] === requestId,
  );
  expect(mine).toEqual([]);
}

describe("a call's trace", () => {
  it("continues a 2026-07-28 call's _meta.traceparent, to the log line, the record and Proxmox", async () => {
    const since = Date.now();
    const client = await connect2026();
    try {
      const result = await client.callTool({
        name: 'pve_get_vm_status',
        arguments: STATUS,
        _meta: { traceparent: TRACEPARENT, tracestate: 'vendor=abc,other=1' },
      });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const t = await traced(since);
    expect([t.log, t.record, t.upstreamTraces]).toEqual([TRACE, TRACE, [TRACE]]);
    // The client's sampled flag and its tracestate go on with each request.
    expect([t.upstreamFlags, t.upstreamStates]).toEqual([['01'], ['vendor=abc,other=1']]);
    // Each request a span of its own, none the client's.
    expect(t.upstreamSpans.length).toBeGreaterThan(0);
    expect(new Set(t.upstreamSpans).size).toBe(t.upstreamSpans.length);
    expect(t.upstreamSpans).not.toContain(CLIENT_SPAN);
    // Sampled by the client: recorded, each request's span the one its traceparent names.
    const spans = await spansOfCall(t.requestId);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([TRACE]));
    const requestSpans = spans.filter((s) => s.kind === 3).map((s) => s.spanId);
    expect(requestSpans.sort()).toEqual([...t.upstreamSpans].sort());
  });

  it("continues a 2025 session's traceparent header likewise, not sampled as it says", async () => {
    const since = Date.now();
    const client: Client2025 = new Client({ name: 'traced', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: workerFetch,
        requestInit: { headers: { traceparent: `00-${TRACE}-${CLIENT_SPAN}-00` } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'pve_get_vm_status', arguments: STATUS });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const t = await traced(since);
    expect([t.log, t.record, t.upstreamTraces]).toEqual([TRACE, TRACE, [TRACE]]);
    expect(t.upstreamSpans).not.toContain(CLIENT_SPAN);
    expect([t.upstreamFlags, t.upstreamStates]).toEqual([['00'], [null]]);
    await expectNoSpans(t.requestId);
  });

  it("takes a 2026-07-28 request's traceparent header where its _meta has no valid one", async () => {
    const since = Date.now();
    const client = await connect2026({
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('traceparent', TRACEPARENT);
        return workerFetch(input, { ...init, headers });
      },
    });
    try {
      await client.callTool({
        name: 'pve_get_vm_status',
        arguments: STATUS,
        _meta: { traceparent: '00-not-a-trace-01' },
      });
    } finally {
      await client.close();
    }
    const t = await traced(since);
    expect([t.log, t.record, t.upstreamTraces]).toEqual([TRACE, TRACE, [TRACE]]);
  });

  it.each([
    ['no traceparent', undefined],
    ['a malformed one', '00-not-a-trace-01'],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${CLIENT_SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${CLIENT_SPAN}-01`],
    ['version ff', `ff-${TRACE}-${CLIENT_SPAN}-01`],
  ])('starts a trace of its own for a call with %s', async (_what, traceparent) => {
    const since = Date.now();
    const client = await connect2026();
    try {
      await client.callTool({
        name: 'pve_get_vm_status',
        arguments: STATUS,
        ...(traceparent ? { _meta: { traceparent } } : {}),
      });
    } finally {
      await client.close();
    }
    const t = await traced(since);
    expect(t.log).toMatch(/^[0-9a-f]{32}$/);
    expect(t.log).not.toBe(TRACE);
    expect([t.record, t.upstreamTraces]).toEqual([t.log, [t.log]]);
    // Started here, where the sampler's ratio is 0: not sampled, and no span recorded.
    expect(t.upstreamFlags).toEqual(['00']);
    await expectNoSpans(t.requestId);
  });
});
