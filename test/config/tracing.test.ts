// Where spans go, read from OpenTelemetry's own variables (src/config/tracing.ts): the endpoint
// (the traces one, else the base one with /v1/traces), which addresses it may have, the headers as
// OTLP exporters read them, the sampler's ratio, and what the scrubber is told to remove.

import { describe, expect, it } from 'vitest';
import { tracingSecrets, tracingSettings } from '../../src/config/tracing';

const LOCAL = { localDevelopment: true };
const DEPLOYED = { localDevelopment: false };

function read(env: Record<string, string>, rules = DEPLOYED) {
  const problems: string[] = [];
  return { settings: tracingSettings(env, problems, rules), problems };
}

describe('tracingSettings', () => {
  it('records nothing without an endpoint', () => {
    expect(read({ OTEL_TRACES_SAMPLER_ARG: '0.05' })).toEqual({ settings: null, problems: [] });
  });

  it('takes the traces endpoint as given, else the base one with /v1/traces', () => {
    expect(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/otlp/' }).settings?.endpoint,
    ).toBe('https://otlp.example.com/otlp/v1/traces');
    expect(
      read({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/otlp',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/in',
      }).settings,
    ).toEqual({
      endpoint: 'https://traces.example.com/in',
      headers: {},
      ratio: 1,
      serviceName: 'proxmox-mcp',
    });
  });

  it.each([
    ['http://otlp.example.com/v1/traces', 'must be an https address'],
    ['https://10.0.0.5/v1/traces', 'must be a public address'],
    ['https://169.254.169.254/v1/traces', 'must be a public address'],
    ['https://user:pw@otlp.example.com/v1/traces', 'must not carry a user name or password'],
    ['http://127.0.0.1:4318/v1/traces', 'is a loopback address, taken only in local development'],
    ['not a url', 'is not a URL'],
  ])('refuses %s, never quoting it', (endpoint, why) => {
    const { settings, problems } = read({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint });
    expect(settings).toBeNull();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(why);
    expect(problems[0]).not.toContain(endpoint);
  });

  it('takes a collector on loopback, over http, in local development', () => {
    const { settings } = read(
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' },
      LOCAL,
    );
    expect(settings?.endpoint).toBe('http://127.0.0.1:4318/v1/traces');
  });

  it('reads headers as OTLP exporters do (percent-decoded; the traces ones win per key)', () => {
    const { settings, problems } = read({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/v1/traces',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20k1, x-tenant=lab',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=traces',
    });
    expect(problems).toEqual([]);
    expect(settings?.headers).toEqual({ authorization: 'Bearer k1', 'x-tenant': 'traces' });
    expect(tracingSecrets(settings)).toEqual([
      'https://otlp.example.com/v1/traces',
      'Bearer k1',
      'traces',
    ]);
  });

  it('leaves out a header HTTP does not allow, and says so', () => {
    const { settings, problems } = read({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/v1/traces',
      OTEL_EXPORTER_OTLP_HEADERS: 'bad name=1,ok=2',
    });
    expect(settings?.headers).toEqual({ ok: '2' });
    expect(problems).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS: a header name or value that HTTP does not allow is left out',
    ]);
  });

  it.each([
    ['0', 0],
    ['0.05', 0.05],
    ['1', 1],
  ])('samples %s of the traces started here', (arg, ratio) => {
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://o.example.com/v1/traces' };
    expect(read({ ...env, OTEL_TRACES_SAMPLER_ARG: arg }).settings?.ratio).toBe(ratio);
  });

  it('takes every trace for a ratio out of range, and says so', () => {
    const { settings, problems } = read({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://o.example.com/v1/traces',
      OTEL_TRACES_SAMPLER_ARG: '5%',
    });
    expect(settings?.ratio).toBe(1);
    expect(problems).toEqual([
      'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1; 1 (every trace) is used',
    ]);
  });
});
