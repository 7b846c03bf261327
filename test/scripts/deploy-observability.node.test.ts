// Every configuration the repository ships (wrangler.toml and deploy/*.toml, which
// npm run deploy:check runs through wrangler), as wrangler reads it, keeps what
// docs/observability.md says it turns on: Workers Logs with invocation logs, Workers traces
// head-sampled for a busy endpoint (below 1), the CALL_METRICS Analytics Engine dataset, and a
// sampler ratio for the server's own spans; and none sends spans anywhere by itself (the endpoint
// is the operator's to set).

import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { experimental_readRawConfig } from 'wrangler';

const root = path.resolve(import.meta.dirname, '../..');
const FILES = [
  'wrangler.toml',
  ...readdirSync(path.join(root, 'deploy'))
    .filter((f) => f.endsWith('.toml'))
    .map((f) => `deploy/${f}`),
];

/** A configuration as wrangler reads it. */
function read(file: string) {
  return experimental_readRawConfig({ config: path.join(root, file) }).rawConfig as {
    observability?: {
      enabled?: boolean;
      logs?: { enabled?: boolean; invocation_logs?: boolean };
      traces?: { enabled?: boolean; head_sampling_rate?: number };
    };
    analytics_engine_datasets?: { binding: string; dataset: string }[];
    vars?: Record<string, string>;
  };
}

describe.each(FILES)('%s', (file) => {
  const raw = read(file);

  it('turns on Workers Logs and head-sampled Workers traces', () => {
    expect(raw.observability).toMatchObject({
      enabled: true,
      logs: { enabled: true, invocation_logs: true },
      traces: { enabled: true },
    });
    const rate = raw.observability!.traces!.head_sampling_rate!;
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThan(1);
  });

  it('binds the calls dataset', () => {
    expect(raw.analytics_engine_datasets).toContainEqual({
      binding: 'CALL_METRICS',
      dataset: 'proxmox_mcp_calls',
    });
  });
});

describe.each(FILES.filter((f) => f.startsWith('deploy/')))('%s, a template', (file) => {
  it('samples 1 in 20 of the traces it starts, and names no collector of its own', () => {
    const { vars } = read(file);
    expect(vars?.OTEL_TRACES_SAMPLER_ARG).toBe('0.05');
    expect(vars?.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).toBeUndefined();
    expect(vars?.OTEL_EXPORTER_OTLP_HEADERS).toBeUndefined();
  });
});
