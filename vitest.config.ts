import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

// Two projects: `workers` runs inside workerd (the Worker, its Durable Objects, the MCP
// transports) against a real HTTP Proxmox simulator started by the global setup; `node` runs
// the simulator's own tests and checks that need Node (schema conformance, scripts).
export default defineConfig({
  test: {
    // The per-call JSON log lines are asserted where they matter; elsewhere they are noise.
    onConsoleLog: (log) => !log.includes('"msg":"tool_call"'),
    projects: [
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            main: './src/index.ts',
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                PVE_BASE_URL: `${inject('simulatorUrl')}/api2/json`,
                PVE_TOKEN_ID: inject('simulatorTokenId'),
                PVE_TOKEN_SECRET: inject('simulatorTokenSecret'),
                AUTH_MODE: 'none',
                PVE_TIMEOUT_MS: '2000',
                SIMULATOR_URL: inject('simulatorUrl'),
              },
            },
          })),
        ],
        test: {
          name: 'workers',
          include: ['test/worker/**/*.test.ts'],
          globalSetup: ['./test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          // One simulator serves every file; its request log and faults are shared state.
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/node/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
