// Where spans go, read from OpenTelemetry's own variables (src/config/tracing.ts): the endpoint
// (the traces one, else the base one with /v1/traces), which addresses it may have, the headers as
// OTLP exporters read them, the sampler's ratio, and what the scrubber is told to remove.

import { describe, expect, it } from 'vitest';
import { type TracingEnv, tracingSecrets, tracingSettings } from '../../src/config/tracing';

const LOCAL = { localDevelopment: true };
const DEPLOYED = { localDevelopment: false };

function read(env: TracingEnv, rules = DEPLOYED) {
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
      parentBased: true,
      serviceName: 'proxmox-mcp',
    });
  });

  it("keeps a base endpoint's query (a collector's key) after the path it adds, and scrubs both", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/?api-key=k3y0123456789' };
    const { settings } = read(env);
    expect(settings?.endpoint).toBe('https://otlp.example.com/v1/traces?api-key=k3y0123456789');
    expect(tracingSecrets(env, settings)).toEqual([
      'https://otlp.example.com/v1/traces?api-key=k3y0123456789',
      'https://otlp.example.com/?api-key=k3y0123456789',
    ]);
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
    const env = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/v1/traces',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%200a1b2c3d4e5f6a7b8c9d, x-tenant=lab',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=platform',
    };
    const { settings, problems } = read(env);
    expect(problems).toEqual([]);
    expect(settings?.headers).toEqual({
      authorization: 'Bearer 0a1b2c3d4e5f6a7b8c9d',
      'x-tenant': 'platform',
    });
    // A key is scrubbed wherever it would come back out; a tenant's short name is not a secret.
    expect(tracingSecrets(env, settings)).toEqual([
      'https://otlp.example.com/v1/traces',
      'Bearer 0a1b2c3d4e5f6a7b8c9d',
    ]);
  });

  it.each([
    ['a name with a space', 'bad name=1,ok=2'],
    ['a NUL in a value', 'bad=a%00b,ok=2'],
    ['a line feed in a value', 'bad=a%0Ab,ok=2'],
  ])('leaves out a header HTTP does not allow (%s), and says so', (_what, text) => {
    const { settings, problems } = read({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/v1/traces',
      OTEL_EXPORTER_OTLP_HEADERS: text,
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

  it.each([
    ['parentbased_traceidratio', { parentBased: true, ratio: 0.25 }],
    ['traceidratio', { parentBased: false, ratio: 0.25 }],
    ['always_off', { parentBased: false, ratio: 0 }],
    ['parentbased_always_on', { parentBased: true, ratio: 1 }],
  ])('OTEL_TRACES_SAMPLER=%s is OpenTelemetry sampler of that name', (name, expected) => {
    const { settings } = read({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://o.example.com/v1/traces',
      OTEL_TRACES_SAMPLER: name,
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    expect(settings).toMatchObject(expected);
  });

  it('takes the default sampler for one it does not know, and says so', () => {
    const { settings, problems } = read({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://o.example.com/v1/traces',
      OTEL_TRACES_SAMPLER: 'jaeger_remote',
    });
    expect(settings).toMatchObject({ parentBased: true, ratio: 1 });
    expect(problems[0]).toMatch(/^OTEL_TRACES_SAMPLER must be one of parentbased_traceidratio, /);
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
