// Where the server's spans go (OTLP over HTTP, JSON), read from OpenTelemetry's own environment
// variables as any OTLP exporter reads them: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL),
// else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added; OTEL_EXPORTER_OTLP_HEADERS and
// OTEL_EXPORTER_OTLP_TRACES_HEADERS (`key=value,...`, values percent-encoded; the traces one wins
// per key), OTEL_TRACES_SAMPLER_ARG (the share of traces started here that are recorded; a
// client's sampled flag decides its own), OTEL_SERVICE_NAME. Without an endpoint nothing is
// recorded. The endpoint and the header values are secrets (an API key in either): the scrubber
// removes them, and no message names them. Pure.

import { parseKeyPairsIntoRecord } from '@opentelemetry/core';
import type { TracingSettings } from '../core/tracing-settings';
import { classifyHost } from '../net/host-class';

export type { TracingSettings };

/** The variables read here, as ../env.ts declares them (typed apart: Node's bench reads this). */
export type TracingEnv = Partial<
  Record<
    | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
    | 'OTEL_EXPORTER_OTLP_ENDPOINT'
    | 'OTEL_EXPORTER_OTLP_HEADERS'
    | 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'
    | 'OTEL_TRACES_SAMPLER_ARG'
    | 'OTEL_SERVICE_NAME',
    string
  >
>;

const DEFAULT_SERVICE = 'proxmox-mcp';
/** A header name as HTTP allows one (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

/**
 * The tracing settings, or null (nothing recorded): without an endpoint, or with one that cannot
 * be used (`problems` says why). `localDevelopment`: the server answers loopback alone, so an
 * endpoint there (a collector on the developer's machine) may be plain http.
 */
export function tracingSettings(
  env: TracingEnv,
  problems: string[],
  rules: { localDevelopment: boolean },
): TracingSettings | null {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim().replace(/\/+$/, '');
  const [name, endpoint] = traces
    ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces]
    : ['OTEL_EXPORTER_OTLP_ENDPOINT', base ? `${base}/v1/traces` : ''];
  if (!endpoint) return null;
  const wrong = endpointProblem(endpoint, rules.localDevelopment);
  if (wrong) {
    problems.push(`${name} ${wrong}: no span is exported`);
    return null;
  }
  const headers = {
    ...exportHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS', problems),
    ...exportHeaders(
      env.OTEL_EXPORTER_OTLP_TRACES_HEADERS,
      'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
      problems,
    ),
  };
  return {
    endpoint,
    headers,
    ratio: samplerRatio(env.OTEL_TRACES_SAMPLER_ARG, problems),
    serviceName: env.OTEL_SERVICE_NAME?.trim().slice(0, 100) || DEFAULT_SERVICE,
  };
}

/** What is wrong with the endpoint, never quoting it (its query may hold a key). */
function endpointProblem(endpoint: string, localDevelopment: boolean): string | null {
  if (!URL.canParse(endpoint)) return 'is not a URL';
  const url = new URL(endpoint);
  if (url.username || url.password) return 'must not carry a user name or password';
  const { scope } = classifyHost(url.hostname);
  if (scope === 'loopback')
    return localDevelopment
      ? url.protocol === 'http:' || url.protocol === 'https:'
        ? null
        : 'must be an http or https address'
      : 'is a loopback address, taken only in local development (IDP=dev or AUTH_MODE=none)';
  if (url.protocol !== 'https:') return 'must be an https address';
  if (scope !== 'public')
    return 'must be a public address (a Worker reaches no private network, and metadata services never)';
  return null;
}

/** `key=value,...` as OpenTelemetry reads it (@opentelemetry/core); a bad name drops the pair. */
function exportHeaders(
  text: string | undefined,
  setting: string,
  problems: string[],
): Record<string, string> {
  if (!text?.trim()) return {};
  const pairs = parseKeyPairsIntoRecord(text);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(pairs)) {
    if (HEADER_NAME.test(key) && !/[\r\n]/.test(value)) out[key] = value;
    else problems.push(`${setting}: a header name or value that HTTP does not allow is left out`);
  }
  if (!Object.keys(out).length)
    problems.push(`${setting} holds no key=value pair: spans are exported without headers`);
  return out;
}

function samplerRatio(text: string | undefined, problems: string[]): number {
  if (text === undefined || text.trim() === '') return 1;
  const ratio = Number(text.trim());
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return ratio;
  problems.push('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1; 1 (every trace) is used');
  return 1;
}

/** The settings' secrets, for the scrubber: the endpoint and every header value. */
export function tracingSecrets(settings: TracingSettings | null): string[] {
  return settings ? [settings.endpoint, ...Object.values(settings.headers)] : [];
}
