// `npm run bench`: starts the simulator and the Worker (wrangler dev) under several policies,
// then measures, in one run and interleaved round by round so machine noise hits every series
// alike:
//   - a direct HTTP GET to the simulator (the floor any Proxmox client pays),
//   - MCP tool calls through the MCP SDK client over /mcp: a call refused by validation (no
//     upstream), pve_list_vms and a pve_create_qemu_vm preview, under an open policy,
//   - pve_list_vms under policy rules without a limit, with a grant-scoped limit (a counter
//     Durable Object round trip) and with a session-scoped limit (the session's own storage).
// Prints calls/s, p50 and p99 per series, each median's ratio to the direct call, and the
// policy's added cost per call (difference of medians against the open policy).

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SIMULATOR_TOKENS } from '../simulator/server.ts';
import { startStack, type Stack } from '../scripts/dev-stack.ts';
import { evaluatePolicy } from '../src/policy/evaluate.ts';
import { loadPolicy } from '../src/policy/load.ts';
import { TOOL_CATALOG } from '../src/tools/index.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 30);
const WARMUP = 20;
const BASE_PORT = Number(process.env.BENCH_PORT ?? 8790);

const RULES = {
  deny_if: [
    { path: 'args.limit', op: 'gt', value: 5000 },
    { path: 'args.node', op: 'in', value: ['forbidden-1', 'forbidden-2'] },
    { path: 'args.name', op: 'regex', value: '^secret-' },
  ],
};
const POLICIES: Record<string, object> = {
  open: { version: '1', default: 'allow' },
  // The same open policy on a second server: how much two identical servers differ in one run.
  control: { version: '1', default: 'allow' },
  // The open policy without the audit trail (AUDIT_ENABLED=false): what auditing costs.
  noAudit: { version: '1', default: 'allow' },
  rules: { version: '1', default: 'deny', tools: { pve_list_vms: RULES, pve_create_qemu_vm: {} } },
  grantLimit: {
    version: '1',
    default: 'deny',
    tools: { pve_list_vms: { ...RULES, limits: [{ counter: 'list', window: 'minute', max: 1_000_000, scope: 'grant' }] } },
  },
  sessionLimit: {
    version: '1',
    default: 'deny',
    tools: { pve_list_vms: { ...RULES, limits: [{ counter: 'list', window: 'minute', max: 1_000_000, scope: 'session' }] } },
  },
};

interface Series {
  name: string;
  run: () => Promise<void>;
  samples: number[];
  elapsedMs: number;
}

async function main(): Promise<void> {
  const state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-bench-'));
  const names = Object.keys(POLICIES);
  const stacks = new Map<string, Stack>();
  const clients: Client[] = [];
  try {
    await Promise.all(
      names.map(async (name, i) => {
        const stack = await startStack({
          port: BASE_PORT + i,
          inspectorPort: BASE_PORT + 100 + i,
          simPort: 0,
          simulator: { taskDurationMs: 50 },
          vars: { AUTH_MODE: 'none', POLICY: JSON.stringify(POLICIES[name]), ...(name === 'noAudit' ? { AUDIT_ENABLED: 'false' } : {}) },
          stdio: 'ignore',
          persistTo: path.join(state, name),
        });
        stacks.set(name, stack);
      }),
    );
    const connect = async (name: string): Promise<Client> => {
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${stacks.get(name)!.url}/mcp`)));
      clients.push(client);
      return client;
    };
    const open = await connect('open');
    const sim = stacks.get('open')!.simulatorUrl!;
    const auth = { Authorization: `PVEAPIToken=${SIMULATOR_TOKENS.admin.id}=${SIMULATOR_TOKENS.admin.secret}` };
    const series: Series[] = [
      {
        name: 'direct GET simulator /cluster/resources',
        run: async () => {
          const res = await fetch(`${sim}/api2/json/cluster/resources?type=vm`, { headers: auth });
          if (!res.ok) throw new Error(`simulator ${res.status}`);
          await res.arrayBuffer();
        },
        samples: [],
        elapsedMs: 0,
      },
      mcpSeries('MCP refused call (no upstream)', open, 'pve_list_vms', { limit: 0 }, true),
      mcpSeries('MCP pve_list_vms, open policy', open, 'pve_list_vms', {}),
      mcpSeries('MCP pve_create_qemu_vm preview, open policy', open, 'pve_create_qemu_vm', {
        node: 'pve1', name: 'bench-vm', memory: 2048, cores: 2, net0: 'virtio,bridge=vmbr0,firewall=1', scsi0: 'local-lvm:32,iothread=1',
      }),
      mcpSeries('MCP pve_list_vms, open policy, 2nd server', await connect('control'), 'pve_list_vms', {}),
      mcpSeries('MCP pve_list_vms, open policy, audit off', await connect('noAudit'), 'pve_list_vms', {}),
      mcpSeries('MCP pve_list_vms, 3 rules, no limit', await connect('rules'), 'pve_list_vms', {}),
      mcpSeries('MCP pve_list_vms, 3 rules + grant limit', await connect('grantLimit'), 'pve_list_vms', {}),
      mcpSeries('MCP pve_list_vms, 3 rules + session limit', await connect('sessionLimit'), 'pve_list_vms', {}),
    ];
    for (const s of series) for (let i = 0; i < WARMUP; i++) await s.run();
    for (let round = 0; round < ROUNDS; round++) {
      // A different order each round, so no series is always first (or last) after the others.
      for (const s of shuffled(series)) {
        const started = performance.now();
        for (let i = 0; i < PER_ROUND; i++) {
          const t = performance.now();
          await s.run();
          s.samples.push(performance.now() - t);
        }
        s.elapsedMs += performance.now() - started;
      }
    }
    report(series);
    reportEvaluation();
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.allSettled([...stacks.values()].map((s) => s.stop()));
    rmSync(state, { recursive: true, force: true });
  }
}

function mcpSeries(name: string, client: Client, tool: string, args: Record<string, unknown>, expectError = false): Series {
  return {
    name,
    run: async () => {
      const result = await client.callTool({ name: tool, arguments: args });
      if (Boolean(result.isError) !== expectError) throw new Error(`${tool}: unexpected result ${JSON.stringify(result.content)}`);
    },
    samples: [],
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
  return quantile([...samples].sort((a, b) => a - b), 0.5);
}

function report(series: Series[]): void {
  const baseline = median(series[0]!.samples);
  // Baseline: both audited servers under the open policy together, so neither one's luck decides.
  const open = median(series.filter((s) => s.name.startsWith('MCP pve_list_vms, open policy') && !s.name.endsWith('audit off')).flatMap((s) => s.samples));
  const mcpCalls = series.slice(1).reduce((n, s) => n + s.samples.length, 0);
  console.log(`\n${ROUNDS} interleaved rounds × ${PER_ROUND} sequential calls per series; ${mcpCalls} MCP tool calls in all.`);
  console.log(`${'series'.padEnd(46)} ${'calls/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'p50÷direct'.padStart(11)} ${'+ms'.padStart(11)}`);
  for (const s of series) {
    const sorted = [...s.samples].sort((a, b) => a - b);
    const p50 = quantile(sorted, 0.5);
    const rate = (s.samples.length / s.elapsedMs) * 1000;
    const added = s.name.startsWith('MCP pve_list_vms') ? `${(p50 - open >= 0 ? '+' : '')}${(p50 - open).toFixed(2)}` : '';
    console.log(
      `${s.name.padEnd(46)} ${rate.toFixed(0).padStart(8)} ${p50.toFixed(2).padStart(8)} ${quantile(sorted, 0.99).toFixed(2).padStart(8)} ${(p50 / baseline).toFixed(1).padStart(10)}× ${added.padStart(11)}`,
    );
  }
  console.log('+ms: median minus the median of pve_list_vms on the two audited open-policy servers together, same run;');
  console.log('their own two rows show the noise between identical servers. Audit off: the open policy without the');
  console.log('audit trail (its "+ms" is minus what auditing adds).');
}

/** The pure evaluation alone, in-process: what the rules cost without any I/O around them. */
function reportEvaluation(): void {
  const identity = { userId: 'bench', groups: ['ops'], clientId: 'c', grantId: 'g' };
  const call = { tool: 'pve_list_vms', args: { limit: 100, node: 'pve1', name: 'web' } };
  console.log(`\n${'evaluatePolicy (pure, in-process)'.padEnd(46)} ${'µs/call p50'.padStart(12)}`);
  for (const name of ['open', 'rules', 'grantLimit']) {
    const loaded = loadPolicy(POLICIES[name], TOOL_CATALOG);
    if (!loaded.ok) throw new Error(`bench policy ${name} is invalid`);
    const batches: number[] = [];
    for (let b = 0; b < 30; b++) {
      const t = performance.now();
      for (let i = 0; i < 10_000; i++) evaluatePolicy(loaded.policy, call, identity, null, Date.now());
      batches.push(((performance.now() - t) * 1000) / 10_000);
    }
    console.log(`${`  ${name} policy`.padEnd(46)} ${median(batches).toFixed(2).padStart(12)}`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
