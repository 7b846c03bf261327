// `npm run bench`: starts the simulator and the Worker (wrangler dev), then measures, in one
// run and interleaved round by round so machine noise hits every series alike:
//   - a direct HTTP GET to the simulator (the floor: what any Proxmox client pays),
//   - pve_list_vms and a pve_create_qemu_vm preview through the MCP SDK client over /mcp.
// Prints calls/s, p50 and p99 per series, and each median's ratio to the direct call.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SIMULATOR_TOKENS } from '../simulator/server.ts';
import { startStack } from '../scripts/dev-stack.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 30);
const WARMUP = 20;

interface Series {
  name: string;
  run: () => Promise<void>;
  samples: number[];
  elapsedMs: number;
}

async function main(): Promise<void> {
  const state = mkdtempSync(path.join(os.tmpdir(), 'pve-mcp-bench-'));
  const stack = await startStack({
    port: Number(process.env.BENCH_PORT ?? 8797),
    simPort: 0,
    simulator: { taskDurationMs: 50 },
    stdio: 'ignore',
    persistTo: state,
  });
  try {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
    const auth = { Authorization: `PVEAPIToken=${SIMULATOR_TOKENS.admin.id}=${SIMULATOR_TOKENS.admin.secret}` };
    const series: Series[] = [
      {
        name: 'direct GET simulator /cluster/resources',
        run: async () => {
          const res = await fetch(`${stack.simulatorUrl}/api2/json/cluster/resources?type=vm`, { headers: auth });
          if (!res.ok) throw new Error(`simulator ${res.status}`);
          await res.arrayBuffer();
        },
        samples: [],
        elapsedMs: 0,
      },
      mcpSeries('MCP refused call (no upstream)', client, 'pve_list_vms', { limit: 0 }, true),
      mcpSeries('MCP pve_list_vms (limit 100)', client, 'pve_list_vms', {}),
      mcpSeries('MCP pve_create_qemu_vm preview', client, 'pve_create_qemu_vm', {
        node: 'pve1',
        name: 'bench-vm',
        memory: 2048,
        cores: 2,
        net0: 'virtio,bridge=vmbr0,firewall=1',
        scsi0: 'local-lvm:32,iothread=1',
      }),
    ];
    for (const s of series) for (let i = 0; i < WARMUP; i++) await s.run();
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of series) {
        const started = performance.now();
        for (let i = 0; i < PER_ROUND; i++) {
          const t = performance.now();
          await s.run();
          s.samples.push(performance.now() - t);
        }
        s.elapsedMs += performance.now() - started;
      }
    }
    await client.close();
    report(series);
  } finally {
    await stack.stop();
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

function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

function report(series: Series[]): void {
  const baseline = median(series[0]!.samples);
  const mcpCalls = series.slice(1).reduce((n, s) => n + s.samples.length, 0);
  console.log(`\n${ROUNDS} interleaved rounds × ${PER_ROUND} sequential calls per series; ${mcpCalls} MCP tool calls in all.`);
  console.log(`${'series'.padEnd(42)} ${'calls/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'p50 ÷ direct'.padStart(13)}`);
  for (const s of series) {
    const sorted = [...s.samples].sort((a, b) => a - b);
    const p50 = quantile(sorted, 0.5);
    const rate = (s.samples.length / s.elapsedMs) * 1000;
    console.log(
      `${s.name.padEnd(42)} ${rate.toFixed(0).padStart(8)} ${p50.toFixed(2).padStart(8)} ${quantile(sorted, 0.99).toFixed(2).padStart(8)} ${(p50 / baseline).toFixed(1).padStart(12)}×`,
    );
  }
}

function median(samples: number[]): number {
  return quantile([...samples].sort((a, b) => a - b), 0.5);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
