// `npm run bench`: starts the simulator and the Worker (wrangler dev) with real sign-in (OAuth,
// dev identity provider), then measures in one run, one call of each series in turn, in a new
// random order each turn, so machine noise hits every series alike:
//   - a direct HTTP GET to the simulator (the floor any Proxmox client pays);
//   - on one server, MCP tool calls through the MCP SDK client over /mcp by people whom the
//     policy treats differently (its rules are scoped with `principals`): no rules; 3 argument
//     rules; the rules and a grant-scoped limit (a counter Durable Object round trip); the rules
//     and a session-scoped limit (the session's own storage). Same server, so the difference is
//     the policy's cost, not one server's luck;
//   - the same no-rules call on a second, identical server (how much servers differ), and on a
//     third without the audit trail (what auditing costs);
//   - with BENCH_BASELINE=<another checkout> (e.g. `git worktree add /tmp/base main`), the same
//     calls on a server running that checkout's Worker: a before/after in one run;
//   - pve_list_vms from an MCP 2026-07-28 client (stateless; the SDK v2 client, and plain fetch as
//     the bare route is called) and from a 2025 session, all with the rules, a grant-scoped limit
//     and the audit on, against a bare Worker route that only makes the same Proxmox GET
//     (bench/bare-worker.ts): what MCP, OAuth and policy add;
//   - pve_get_vm_status from a 2026-07-28 client, on the main server, by a person one rule over
//     what a call touches is for (target.tags: the guest's own status answers it, the read the
//     call makes anyway), by one another such rule is for (target.pool: one more read, the
//     cluster's list), and by two others: what reading the guest's facts before deciding costs,
//     paired round by round with one more upstream GET from the bare route (the list's GET twice
//     minus once, and made before the guest's status GET minus that GET alone), and how far two
//     series of one call differ;
//   - pve_get_vm_status from a 2026-07-28 client on a server that exports spans to a local OTLP
//     receiver, its sampler's ratio 0: under a client's unsampled traceparent (sampling off:
//     nothing recorded) and under a sampled one (every span recorded and exported), beside the
//     same call on the main server, which has no tracing configured; and, sampled there, the same
//     call by the target.pool rule's person: the receiver keeps both series' spans, to say where
//     the rule's time goes inside the server (beside each of the bare route's GETs as that Worker
//     timed it);
//   - in-process, after the rounds: the policy evaluation alone, a call's spans alone (not
//     recorded, and recorded and encoded), and /admin/policy's page built from 10,000-line
//     versions (bench/policy-console.ts).
// Prints calls/s, p50, p99, each median's ratio to the direct call, and the added milliseconds.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  Client as Client2026,
  StreamableHTTPClientTransport as Transport2026,
} from '@modelcontextprotocol/client';
import { SIMULATOR_TOKENS } from '../simulator/server.ts';
import { startStack, type Stack } from '../scripts/dev-stack.ts';
import { evaluatePolicy } from '../src/policy/evaluate.ts';
import { loadPolicy } from '../src/policy/load.ts';
import { TOOL_CATALOG } from '../src/tools/index.ts';
import { devAccessToken, devSignedInClient } from '../test/support/oauth-node.ts';
import { otlpSpans } from '../test/support/otlp.ts';
import { reportPolicyConsole } from './policy-console.ts';
import { reportSpans } from './spans.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 30);
const WARMUP = 20;
// Trace id prefixes of the sampled calls whose spans the receiver keeps (see ownTrace).
const SAMPLED_TAG = 'b0b0';
const SAMPLED_POOL_TAG = 'b0b1';
const TAGS = [SAMPLED_TAG, SAMPLED_POOL_TAG];
const BASE_PORT = Number(process.env.BENCH_PORT ?? 8790);
// BENCH_ONLY=<regex>: only the series whose names match it (with the direct GET and the series
// they are measured against), e.g. for a longer run of a few:
// BENCH_ONLY='target rule|GET twice|GET first|another person' BENCH_ROUNDS=40.
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;

const RULED = ['rules@bench', 'grant@bench', 'session@bench'];
const rule = (extra: object) => ({ principals: RULED, ...extra });
// Default allow: every tool is listed (tools/list's size is reported) and callable.
const POLICY = {
  version: '1',
  default: 'allow',
  tools: {
    pve_list_vms: {
      deny_if: [
        rule({ path: 'args.limit', op: 'gt', value: 5000 }),
        rule({ path: 'args.node', op: 'in', value: ['forbidden-1', 'forbidden-2'] }),
        rule({ path: 'args.name', op: 'regex', value: '^secret-' }),
      ],
      limits: [
        {
          counter: 'per_grant',
          window: 'minute',
          max: 1_000_000,
          scope: 'grant',
          principals: ['grant@bench'],
        },
        {
          counter: 'per_session',
          window: 'minute',
          max: 1_000_000,
          scope: 'session',
          principals: ['session@bench'],
        },
      ],
    },
    // One rule over what a call touches, for one person: the guest's tags are read first (from
    // its status, which the call shows); for another, its pool (from the cluster's list).
    pve_get_vm_status: {
      deny_if: [
        {
          path: 'target.tags',
          op: 'contains',
          value: 'no-guest-has-this-tag',
          principals: ['target@bench'],
        },
        { path: 'target.pool', op: 'eq', value: 'no-such-pool', principals: ['pool@bench'] },
      ],
    },
  },
};

/** Calls of the bare Worker route at `url`, with each GET's time as the Worker timed it. */
function bareSeries(name: string, url: string): Series {
  const inside: number[][] = [];
  return {
    name,
    run: async () => {
      const res = await fetch(url);
      if (!res.ok) throw new Error(`bare route ${res.status}`);
      await res.arrayBuffer();
      const timing = res.headers.get('server-timing') ?? '';
      inside.push([...timing.matchAll(/dur=(\d+(?:\.\d+)?)/g)].map((m) => Number(m[1])));
    },
    samples: [],
    rounds: [],
    elapsedMs: 0,
    inside,
  };
}

interface Series {
  name: string;
  run: () => Promise<void>;
  samples: number[];
  elapsedMs: number;
  /** Each round's median. */
  rounds: number[];
  /** Which series' median this one's "+ ms" is measured against. */
  against?: string;
  /** The bare route's: each call's GETs, in ms as the Worker timed them. */
  inside?: number[][];
}

async function main(): Promise<void> {
  const state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-bench-'));
  const baseline = process.env.BENCH_BASELINE
    ? path.resolve(process.env.BENCH_BASELINE)
    : undefined;
  // A collector for the traced server's spans: takes each export, counts its spans.
  const otlp = await otlpReceiver();
  const servers: Record<string, Record<string, string>> = {
    main: {},
    twin: {},
    noAudit: { AUDIT_ENABLED: 'false' },
    traced: {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer bench',
      OTEL_TRACES_SAMPLER_ARG: '0',
    },
    ...(baseline ? { baseline: {} } : {}),
  };
  const stacks = new Map<string, Stack>();
  const clients: Client[] = [];
  const closers: (() => Promise<void>)[] = [() => otlp.close()];
  try {
    await Promise.all(
      Object.keys(servers).map(async (name, i) => {
        const stack = await startStack({
          ...(name === 'baseline' ? { root: baseline } : {}),
          port: BASE_PORT + i,
          inspectorPort: BASE_PORT + 100 + i,
          simPort: 0,
          simulator: { taskDurationMs: 50 },
          vars: {
            AUTH_MODE: 'oauth',
            IDP: 'dev',
            POLICY: JSON.stringify(POLICY),
            ...servers[name],
          },
          stdio: 'ignore',
          persistTo: path.join(state, name),
        });
        stacks.set(name, stack);
      }),
    );
    const as = async (server: string, user: string): Promise<Client> => {
      const client = await devSignedInClient(stacks.get(server)!.url, user);
      clients.push(client);
      return client;
    };
    const open = await as('main', 'open@bench');
    const sim = stacks.get('main')!.simulatorUrl!;
    // The bare Worker, beside the others, on the main server's simulator.
    const bare = await startStack({
      port: BASE_PORT + 50,
      inspectorPort: BASE_PORT + 150,
      simPort: 0,
      simulatorUrl: sim,
      config: path.join(import.meta.dirname, 'bare.wrangler.toml'),
      stdio: 'ignore',
      persistTo: path.join(state, 'bare'),
    });
    stacks.set('bare', bare);
    const modern = new Client2026(
      { name: 'bench-2026', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const modernToken = await devAccessToken(stacks.get('main')!.url, 'grant@bench');
    await modern.connect(
      new Transport2026(new URL(`${stacks.get('main')!.url}/mcp`), {
        authProvider: { token: async () => modernToken },
      }),
    );
    closers.push(() => modern.close());
    // The same call from a client that is only HTTP, as the bare route's is: what the server adds.
    const rawToken = await devAccessToken(stacks.get('main')!.url, 'grant@bench');
    const BARE = 'bare Worker route: the same Proxmox GET';
    // Its +ms: one more upstream GET from a Worker, as a target rule's read is.
    const BARE_TWICE = 'bare Worker route: that GET twice';
    // The GET pve_get_vm_status makes, alone and after the list's: that GET made first, before the
    // call's own, where a target rule's read is.
    const BARE_STATUS = 'bare Worker route: the guest status GET';
    const BARE_FIRST = 'bare Worker route: the list GET first, then that GET';
    const MODERN_SDK = 'MCP 2026-07-28 pve_list_vms, 3 rules + grant limit';
    const MODERN_RAW = 'MCP 2026-07-28 over plain fetch, same call';
    const auth = {
      Authorization: `PVEAPIToken=${SIMULATOR_TOKENS.admin.id}=${SIMULATOR_TOKENS.admin.secret}`,
    };
    const LIST = 'MCP pve_list_vms, no rules';
    const STATUS_2026 = 'MCP 2026-07-28 pve_get_vm_status, no rules';
    const TARGET = 'MCP 2026-07-28 pve_get_vm_status, a target rule (tags)';
    const POOL_RULE = 'MCP 2026-07-28 pve_get_vm_status, a target rule (pool)';
    const OTHER_2026 = 'MCP 2026-07-28 pve_get_vm_status, no rules, another person';
    const statusArgs = { node: 'pve1', vmid: 100 };
    const UNSAMPLED = 'MCP 2026-07-28 pve_get_vm_status, traced server, sampling off';
    const TWIN_STATUS = 'MCP 2026-07-28 pve_get_vm_status, twin server';
    const SAMPLED = 'MCP 2026-07-28 pve_get_vm_status, traced server, sampled (exported)';
    const SAMPLED_POOL =
      'MCP 2026-07-28 pve_get_vm_status, traced server, sampled, a target rule (pool)';
    const tracedToken = await devAccessToken(stacks.get('traced')!.url, 'grant@bench');
    const traceparent = (flags: string) => ({
      traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-${flags}`,
    });
    // A sampled traceparent with a trace id of its own for each call, starting with `tag`: the
    // receiver keeps those calls' spans apart (what each stage took, inside the server).
    const ownTrace = (tag: string) => {
      let n = 0;
      return () => ({
        traceparent: `00-${tag}${(++n).toString(16).padStart(32 - tag.length, '0')}-00f067aa0ba902b7-01`,
      });
    };
    const PREVIEW = 'MCP pve_create_qemu_vm preview, no rules';
    const previewArgs = {
      node: 'pve1',
      name: 'bench-vm',
      memory: 2048,
      cores: 2,
      net0: 'virtio,bridge=vmbr0,firewall=1',
      scsi0: 'local-lvm:32,iothread=1',
    };
    // pve_get_vm_status on the main server by `user`, beside the same call by grant@bench.
    const statusBy = async (name: string, user: string): Promise<Series> => ({
      ...rawModernSeries(
        name,
        stacks.get('main')!.url,
        await devAccessToken(stacks.get('main')!.url, user),
        'pve_get_vm_status',
        statusArgs,
      ),
      against: STATUS_2026,
    });
    const base = baseline ? await as('baseline', 'open@bench') : undefined;
    const baseRawToken = baseline
      ? await devAccessToken(stacks.get('baseline')!.url, 'grant@bench')
      : undefined;
    const series: Series[] = [
      {
        name: 'direct GET simulator /cluster/resources',
        run: async () => {
          const res = await fetch(`${sim}/api2/json/cluster/resources?type=vm`, { headers: auth });
          if (!res.ok) throw new Error(`simulator ${res.status}`);
          await res.arrayBuffer();
        },
        samples: [],
        rounds: [],
        elapsedMs: 0,
      },
      mcpSeries('MCP refused call (no upstream)', open, 'pve_list_vms', { limit: 0 }, true),
      mcpSeries(LIST, open, 'pve_list_vms', {}),
      mcpSeries(PREVIEW, open, 'pve_create_qemu_vm', previewArgs),
      mcpSeries('MCP pve_get_vm_status', open, 'pve_get_vm_status', { node: 'pve1', vmid: 100 }),
      mcpSeries('MCP pve_start_vm preview (reads the state)', open, 'pve_start_vm', {
        node: 'pve2',
        vmid: 104,
      }),
      {
        ...mcpSeries(
          'MCP pve_list_vms, 3 rules',
          await as('main', 'rules@bench'),
          'pve_list_vms',
          {},
        ),
        against: LIST,
      },
      {
        ...mcpSeries(
          'MCP pve_list_vms, 3 rules + grant limit',
          await as('main', 'grant@bench'),
          'pve_list_vms',
          {},
        ),
        against: LIST,
      },
      bareSeries(BARE, bare.url),
      { ...bareSeries(BARE_TWICE, `${bare.url}?gets=list,list`), against: BARE },
      bareSeries(BARE_STATUS, `${bare.url}?gets=status`),
      { ...bareSeries(BARE_FIRST, `${bare.url}?gets=list,status`), against: BARE_STATUS },
      { ...mcpSeries(MODERN_SDK, modern as unknown as Client, 'pve_list_vms', {}), against: BARE },
      {
        ...rawModernSeries(MODERN_RAW, stacks.get('main')!.url, rawToken, 'pve_list_vms', {}),
        against: BARE,
      },
      rawModernSeries(
        STATUS_2026,
        stacks.get('main')!.url,
        rawToken,
        'pve_get_vm_status',
        statusArgs,
      ),
      await statusBy(TARGET, 'target@bench'),
      await statusBy(POOL_RULE, 'pool@bench'),
      // The same call by a third person no rule is for: how far two such series differ.
      await statusBy(OTHER_2026, 'other@bench'),
      {
        // How far the same call differs on an identical server: the yardstick for the traced one.
        ...rawModernSeries(
          TWIN_STATUS,
          stacks.get('twin')!.url,
          await devAccessToken(stacks.get('twin')!.url, 'grant@bench'),
          'pve_get_vm_status',
          statusArgs,
        ),
        against: STATUS_2026,
      },
      {
        ...rawModernSeries(
          UNSAMPLED,
          stacks.get('traced')!.url,
          tracedToken,
          'pve_get_vm_status',
          statusArgs,
          traceparent('00'),
        ),
        against: STATUS_2026,
      },
      {
        ...rawModernSeries(
          SAMPLED,
          stacks.get('traced')!.url,
          tracedToken,
          'pve_get_vm_status',
          statusArgs,
          ownTrace(SAMPLED_TAG),
        ),
        against: UNSAMPLED,
      },
      {
        // The pool rule's call on the traced server, sampled: its spans say where its time went.
        ...rawModernSeries(
          SAMPLED_POOL,
          stacks.get('traced')!.url,
          await devAccessToken(stacks.get('traced')!.url, 'pool@bench'),
          'pve_get_vm_status',
          statusArgs,
          ownTrace(SAMPLED_POOL_TAG),
        ),
        against: SAMPLED,
      },
      {
        ...mcpSeries(
          'MCP pve_list_vms, 3 rules + session limit',
          await as('main', 'session@bench'),
          'pve_list_vms',
          {},
        ),
        against: LIST,
      },
      {
        ...mcpSeries(
          'MCP pve_list_vms, no rules, twin server',
          await as('twin', 'open@bench'),
          'pve_list_vms',
          {},
        ),
        against: LIST,
      },
      {
        ...mcpSeries(
          'MCP pve_list_vms, no rules, audit off',
          await as('noAudit', 'open@bench'),
          'pve_list_vms',
          {},
        ),
        against: LIST,
      },
      ...(base
        ? [
            {
              ...mcpSeries('MCP pve_list_vms, no rules, BASELINE', base, 'pve_list_vms', {}),
              against: LIST,
            },
            {
              ...mcpSeries(
                'MCP create preview, no rules, BASELINE',
                base,
                'pve_create_qemu_vm',
                previewArgs,
              ),
              against: PREVIEW,
            },
            {
              ...rawModernSeries(
                'MCP 2026-07-28 over plain fetch, BASELINE',
                stacks.get('baseline')!.url,
                baseRawToken!,
                'pve_list_vms',
                {},
              ),
              against: MODERN_RAW,
            },
          ]
        : []),
    ];
    const chosen = ONLY
      ? series.filter(
          (s, i) =>
            i === 0 ||
            ONLY.test(s.name) ||
            series.some((o) => ONLY.test(o.name) && o.against === s.name),
        )
      : series;
    for (const s of chosen) {
      for (let i = 0; i < WARMUP; i++) await s.run();
      s.inside?.splice(0);
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Call by call: one call of each series in turn, in a new order each time, so that what
      // slows a moment of the run (the machine, another server's background work) falls on every
      // series alike, and no series always follows the same one.
      const taken = new Map<Series, number[]>(chosen.map((s) => [s, []]));
      for (let i = 0; i < PER_ROUND; i++)
        for (const s of shuffled(chosen)) {
          const t = performance.now();
          await s.run();
          taken.get(s)!.push(performance.now() - t);
        }
      for (const [s, times] of taken) {
        s.elapsedMs += times.reduce((sum, ms) => sum + ms, 0);
        s.samples.push(...times);
        s.rounds.push(median(times));
      }
    }
    report(chosen);
    reportTargetRule(
      chosen,
      {
        ruled: [
          { name: TARGET, what: 'on its tags (its status, read once)' },
          { name: POOL_RULE, what: "on its pool (the cluster's list)" },
        ],
        unruled: STATUS_2026,
        other: OTHER_2026,
      },
      { twice: BARE_TWICE, once: BARE, first: BARE_FIRST, alone: BARE_STATUS },
    );
    reportTracing(
      chosen,
      {
        off: STATUS_2026,
        twin: TWIN_STATUS,
        unsampled: UNSAMPLED,
        sampled: SAMPLED,
        alsoSampled: SAMPLED_POOL,
      },
      otlp,
    );
    // The last calls' exports are sent after their answers: a moment for them to arrive.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    reportInside(
      otlp.stages(SAMPLED_POOL_TAG),
      otlp.stages(SAMPLED_TAG),
      chosen.find((s) => s.name === BARE_TWICE)?.inside,
      ROUNDS * PER_ROUND,
    );
    if (ONLY) return;
    const p50 = (name: string) => median(series.find((x) => x.name === name)!.samples);
    const bareP50 = p50(BARE);
    console.log(
      `\npve_list_vms with 3 rules, a grant-scoped limit and the audit on, p50 ÷ the bare route's (${bareP50.toFixed(2)} ms): ` +
        `2026-07-28 over plain fetch (the bare route's kind of client) ${(p50(MODERN_RAW) / bareP50).toFixed(2)}×, ` +
        `2026-07-28 SDK v2 client ${(p50(MODERN_SDK) / bareP50).toFixed(2)}×, ` +
        `2025 session ${(p50('MCP pve_list_vms, 3 rules + grant limit') / bareP50).toFixed(2)}×.`,
    );
    await reportToolList(open);
    reportEvaluation();
    await reportSpans();
    await reportPolicyConsole();
  } finally {
    await Promise.allSettled([
      ...clients.map((c) => c.close()),
      ...closers.map((close) => close()),
    ]);
    await Promise.allSettled([...stacks.values()].map((s) => s.stop()));
    rmSync(state, { recursive: true, force: true });
  }
}

function mcpSeries(
  name: string,
  client: Client,
  tool: string,
  args: Record<string, unknown>,
  expectError = false,
): Series {
  return {
    name,
    run: async () => {
      const result = await client.callTool({ name: tool, arguments: args });
      if (Boolean(result.isError) !== expectError)
        throw new Error(`${tool}: unexpected result ${JSON.stringify(result.content)}`);
    },
    samples: [],
    rounds: [],
    elapsedMs: 0,
  };
}

/**
 * A 2026-07-28 tools/call as a plain HTTP client makes it (one POST, headers and envelope as the
 * spec says), checking the answer is the tool's result and not an error.
 */
function rawModernSeries(
  name: string,
  base: string,
  token: string,
  tool: string,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | (() => Record<string, unknown>) = {},
): Series {
  let id = 0;
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': tool,
  };
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'bench-plain', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return {
    name,
    run: async () => {
      const _meta = { ...envelope, ...(typeof meta === 'function' ? meta() : meta) };
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: tool, arguments: args, _meta },
      });
      const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body });
      const text = await res.text();
      if (!res.ok || !text.includes('"structuredContent"') || text.includes('"isError":true'))
        throw new Error(`${tool}: ${res.status} ${text.slice(0, 200)}`);
    },
    samples: [],
    rounds: [],
    elapsedMs: 0,
  };
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

function median(samples: number[]): number {
  return quantile(
    [...samples].sort((a, b) => a - b),
    0.5,
  );
}

function report(series: Series[]): void {
  const baseline = median(series[0]!.samples);
  const medians = new Map(series.map((s) => [s.name, median(s.samples)]));
  const mcpCalls = series.slice(1).reduce((n, s) => n + s.samples.length, 0);
  console.log(
    `\n${ROUNDS} rounds × ${PER_ROUND} calls per series, one call of each series in turn (in a new order each turn); ${mcpCalls} MCP tool calls in all, signed in (OAuth).`,
  );
  console.log(
    `${'series'.padEnd(44)} ${'calls/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'p50÷direct'.padStart(11)} ${'+ms'.padStart(7)}`,
  );
  for (const s of series) {
    const sorted = [...s.samples].sort((a, b) => a - b);
    const p50 = quantile(sorted, 0.5);
    const rate = (s.samples.length / s.elapsedMs) * 1000;
    const against = s.against === undefined ? undefined : medians.get(s.against);
    const added =
      s.against === undefined ? '' : against === undefined ? 'n/a' : (p50 - against).toFixed(2);
    console.log(
      `${s.name.padEnd(44)} ${rate.toFixed(0).padStart(8)} ${p50.toFixed(2).padStart(8)} ${quantile(sorted, 0.99).toFixed(2).padStart(8)} ${(p50 / baseline).toFixed(1).padStart(10)}× ${added.padStart(7)}`,
    );
  }
  console.log(
    '+ms: median minus the median of "pve_list_vms, no rules" on the main server, same run. The rules rows run',
  );
  console.log(
    'on that same server (rules scoped to the signed-in person); the twin row is an identical second server',
  );
  console.log(
    '(how much servers differ); audit off is a third server without the audit trail; the target rule rows are',
  );
  console.log(
    "the main server's pve_get_vm_status by a person whose rule reads the guest's tags, or its pool, first (+ms against the same call by another); BASELINE rows run",
  );
  console.log(
    "the BENCH_BASELINE checkout's Worker (+ms against the same call on this one: negative means this is slower);",
  );
  console.log(
    "the 2026-07-28 pve_list_vms rows' +ms and the bare route's twice row are against the bare Worker route (one GET), its list-first row against its status GET alone;",
  );
  console.log(
    "the traced server's target rule row is the pool rule's call there, sampled (+ms against the same sampled call by another); n/a: not run.",
  );
}

/** Each named series' round medians (undefined where the series was not run). */
function roundsOf(series: Series[], names: readonly string[]): (number[] | undefined)[] {
  return names.map((name) => series.find((s) => s.name === name)?.rounds);
}

/** Round by round, `a` minus `b`. */
const minus = (a: number[], b: number[]): number[] => a.map((x, i) => x - b[i]!);

/** A paired difference's median (signed) and quartiles, in ms. */
function spread(xs: number[]): string {
  const sorted = [...xs].sort((x, y) => x - y);
  const f = (q: number) => quantile(sorted, q).toFixed(2);
  const median = quantile(sorted, 0.5);
  return `${median >= 0 ? '+' : ''}${f(0.5)} ms (quartiles ${f(0.25)} to ${f(0.75)})`;
}

/**
 * Each target rule's cost beside one more upstream GET's, paired round by round: in each round,
 * the rule's series minus the same call's without it, beside what one more GET costs the bare
 * route, measured two ways: the list's GET twice minus once, and the list's GET made first, before
 * the guest's status GET, minus that GET alone (where the rule's read is: before the call's own).
 * What slows a whole round (the machine, the other servers) cancels out.
 */
function reportTargetRule(
  series: Series[],
  {
    ruled,
    unruled,
    other,
  }: { ruled: { name: string; what: string }[]; unruled: string; other: string },
  bare: { twice: string; once: string; first: string; alone: string },
): void {
  const [b, e, twice, once, first, alone] = roundsOf(series, [
    unruled,
    other,
    bare.twice,
    bare.once,
    bare.first,
    bare.alone,
  ]);
  if (!b) return;
  const gets = [
    twice && once && { what: 'the list GET twice minus once', cost: minus(twice, once) },
    first &&
      alone && {
        what: "the list GET first, then the guest's status GET, minus the status GET alone",
        cost: minus(first, alone),
      },
  ].filter((get) => !!get);
  if (!gets.length) return;
  console.log(`
Target rules' cost, paired within each of ${b.length} rounds (round medians):`);
  for (const { what, cost } of gets)
    console.log(`  one more upstream GET from the bare route (${what}): ${spread(cost)}`);
  if (e)
    console.log(
      `  no rule either way (a third person's call minus the same call): ${spread(minus(e, b))}`,
    );
  for (const { name, what } of ruled) {
    const [a] = roundsOf(series, [name]);
    if (!a) continue;
    const rule = minus(a, b);
    console.log(`  a rule ${what}: its call minus the same call without it: ${spread(rule)}`);
    for (const get of gets) {
      const beyond = minus(rule, get.cost);
      console.log(
        `    minus the GET (${get.what}): ${spread(beyond)}; rounds where the rule cost no more: ${beyond.filter((x) => x <= 0).length} of ${beyond.length}`,
      );
    }
  }
}

/**
 * What tracing costs a call, paired round by round as the target rule's is: sampling off on the
 * traced server minus the same call on the main server (no tracing configured), beside the twin
 * server's minus the main one's (how far two identical servers differ), and sampled minus
 * sampling off on the traced server (one server: no spread between servers in it).
 */
function reportTracing(
  series: Series[],
  names: { off: string; twin: string; unsampled: string; sampled: string; alsoSampled: string },
  otlp: { exports: () => number; spans: () => number },
): void {
  const [off, twin, unsampled, sampled] = roundsOf(series, [
    names.off,
    names.twin,
    names.unsampled,
    names.sampled,
  ]);
  if (!off || !twin || !unsampled || !sampled) return;
  console.log(`
Tracing's cost, paired within each of ${off.length} rounds (round medians):`);
  console.log(
    `  sampling off (traced server) minus no tracing (main server): ${spread(minus(unsampled, off))}`,
  );
  console.log(
    `  an identical server minus the main one, the same call (no tracing either): ${spread(minus(twin, off))}`,
  );
  console.log(
    `  sampled, spans exported, minus sampling off (same server): ${spread(minus(sampled, unsampled))}`,
  );
  // Every sampled call exports its spans: the pool rule's on the traced server too.
  const calls = series
    .filter((s) => s.name === names.sampled || s.name === names.alsoSampled)
    .reduce((sum, s) => sum + s.samples.length + WARMUP, 0);
  console.log(
    `  the OTLP receiver took ${otlp.exports()} exports of ${otlp.spans()} spans for ${calls} sampled calls (warm-up included)`,
  );
}

/**
 * Where the pool rule's time goes inside the server, from the traced server's own spans of its
 * sampled calls (each span's mean, the rule's calls beside the same call by a person with no
 * rule): how much longer the call's span is, beside what its one more request (the cluster's
 * list) took, as the server timed it; and the bare route's two GETs as that Worker timed them.
 */
function reportInside(
  ruled: Map<string, number[]>,
  unruled: Map<string, number[]>,
  bareTwice: number[][] | undefined,
  expected: number,
): void {
  if (!ruled.size || !unruled.size) return;
  // Spans are timed with Date.now(), in whole milliseconds, so a median is one of a few values:
  // the mean of many calls is what a span takes.
  const mean = (samples: number[] | undefined) =>
    samples?.length ? samples.reduce((sum, ms) => sum + ms, 0) / samples.length : undefined;
  const shown = (ms: number | undefined) => (ms === undefined ? '-' : ms.toFixed(2));
  console.log(`
Inside the traced server, its spans of sampled pve_get_vm_status calls after the warm-up (mean ms, timed with Date.now()):`);
  const cell = (spans: number[] | undefined) =>
    `${shown(mean(spans))} (${spans?.length ?? 0})`.padStart(16);
  console.log(
    `  ${'span (its count)'.padEnd(50)} ${'pool rule'.padStart(16)} ${'no rule'.padStart(16)}`,
  );
  for (const name of new Set([...ruled.keys(), ...unruled.keys()]))
    console.log(`  ${name.padEnd(50)} ${cell(ruled.get(name))} ${cell(unruled.get(name))}`);
  const call = [...ruled.keys()].find((name) => name.startsWith('tools/call '));
  const a = mean(ruled.get(call ?? '')),
    b = mean(unruled.get(call ?? '')),
    get = mean(ruled.get('GET /cluster/resources'));
  if (a === undefined || b === undefined || get === undefined) return;
  const signed = (ms: number) => `${ms >= 0 ? '+' : ''}${ms.toFixed(2)} ms`;
  console.log(
    `  the call's span, the rule's minus none: ${signed(a - b)}; the list's GET in it: ${get.toFixed(2)} ms; the difference: ${signed(a - b - get)}`,
  );
  // Each call exports its spans in the background after its answer: a short count says some
  // had not arrived (or were lost), and the means are of fewer calls.
  for (const [who, spans] of [
    ['pool rule', ruled.get(call ?? '')],
    ['no rule', unruled.get(call ?? '')],
  ] as const)
    if (spans?.length !== expected)
      console.log(`  (${who}: ${spans?.length ?? 0} calls' spans, not ${expected})`);
  if (!bareTwice?.length) return;
  const first = mean(bareTwice.map((gets) => gets[0] ?? Number.NaN));
  const second = mean(bareTwice.map((gets) => gets[1] ?? Number.NaN));
  console.log(
    `  the bare route's "GET twice" series, each GET as that Worker timed it (mean ms): the first ${shown(first)}, the second ${shown(second)}`,
  );
}

/** A local OTLP/HTTP receiver: answers each export as a collector does, and counts its spans. */
async function otlpReceiver(): Promise<{
  url: string;
  exports: () => number;
  spans: () => number;
  stages: (tag: string) => Map<string, number[]>;
  close: () => Promise<void>;
}> {
  let exports = 0;
  let spans = 0;
  /** Of the calls whose trace id starts with a TAGS tag: each span's name and milliseconds. */
  const tagged = new Map<string, { name: string; ms: number }[]>(TAGS.map((tag) => [tag, []]));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      try {
        const received = otlpSpans(body);
        spans += received.length;
        exports++;
        for (const { span } of received) {
          const tag = TAGS.find((t) => span.traceId.startsWith(t));
          // Not the warm-up's calls (ownTrace numbers each series' calls from 1).
          if (!tag || Number.parseInt(span.traceId.slice(tag.length), 16) <= WARMUP) continue;
          const ns = BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano);
          tagged.get(tag)!.push({ name: span.name, ms: Number(ns / 1000n) / 1000 });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => exports,
    spans: () => spans,
    stages: (tag) => {
      const by = new Map<string, number[]>();
      for (const { name, ms } of tagged.get(tag) ?? []) {
        const spans = by.get(name) ?? [];
        spans.push(ms);
        by.set(name, spans);
      }
      return by;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What tools/list costs each conversation's context: the answer's size, as a client receives it. */
async function reportToolList(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  const bytes = new TextEncoder().encode(JSON.stringify({ tools })).length;
  console.log(
    `\ntools/list: ${tools.length} tools, ${(bytes / 1024).toFixed(1)} KiB (${Math.round(bytes / tools.length)} bytes a tool)`,
  );
}

/** The pure evaluation alone, in-process: what the rules cost without any I/O around them. */
function reportEvaluation(): void {
  const loaded = loadPolicy(POLICY, TOOL_CATALOG);
  if (!loaded.ok) throw new Error('bench policy is invalid');
  const call = { tool: 'pve_list_vms', args: { limit: 100, node: 'pve1', name: 'web' } };
  console.log(`\n${'evaluatePolicy (pure, in-process)'.padEnd(44)} ${'µs/call p50'.padStart(12)}`);
  for (const user of ['open@bench', 'rules@bench', 'grant@bench']) {
    const identity = {
      userId: user,
      email: user,
      groups: [],
      clientId: 'c',
      grantId: 'g',
      scopes: [],
    };
    const batches: number[] = [];
    for (let b = 0; b < 30; b++) {
      const t = performance.now();
      for (let i = 0; i < 10_000; i++)
        evaluatePolicy(loaded.policy, call, identity, null, Date.now());
      batches.push(((performance.now() - t) * 1000) / 10_000);
    }
    console.log(`${`  as ${user}`.padEnd(44)} ${median(batches).toFixed(2).padStart(12)}`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
