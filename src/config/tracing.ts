// Where the server's spans go (OTLP over HTTP, JSON), read from OpenTelemetry's own environment
// variables as any OTLP exporter reads them: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL),
// else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added to its path; OTEL_EXPORTER_OTLP_HEADERS
// and OTEL_EXPORTER_OTLP_TRACES_HEADERS (`key=value,...`, values percent-encoded, parsed by
// @opentelemetry/core as its exporters parse them; the traces one wins per key);
// OTEL_TRACES_SAMPLER (which of OpenTelemetry's samplers: parentbased_traceidratio by default, so
// that a client's sampled flag decides its own trace) and OTEL_TRACES_SAMPLER_ARG (its ratio);
// OTEL_SERVICE_NAME. Without an endpoint nothing is recorded. The endpoint and the headers' keys
// are secrets: the scrubber removes them, and no message quotes them. Pure.

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
    | 'OTEL_TRACES_SAMPLER'
    | 'OTEL_TRACES_SAMPLER_ARG'
    | 'OTEL_SERVICE_NAME',
    string
  >
>;

const DEFAULT_SERVICE = 'proxmox-mcp';
/** A header name as HTTP allows one (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** A header value this long is taken for a key, and scrubbed; a shorter one (a tenant) is not. */
const KEY_LENGTH = 16;

/** OpenTelemetry's samplers (OTEL_TRACES_SAMPLER) and what each is here. */
const SAMPLERS: Readonly<Record<string, { parentBased: boolean; ratio?: number }>> = {
  parentbased_traceidratio: { parentBased: true },
  traceidratio: { parentBased: false },
  parentbased_always_on: { parentBased: true, ratio: 1 },
  parentbased_always_off: { parentBased: true, ratio: 0 },
  always_on: { parentBased: false, ratio: 1 },
  always_off: { parentBased: false, ratio: 0 },
};

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
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const [name, endpoint] = traces
    ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces]
    : ['OTEL_EXPORTER_OTLP_ENDPOINT', base ? tracesOf(base) : ''];
  if (endpoint === '') return null;
  const wrong =
    endpoint === null ? 'is not a URL' : endpointProblem(endpoint, rules.localDevelopment);
  if (wrong || endpoint === null) {
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
    ...sampler(env, problems),
    serviceName: env.OTEL_SERVICE_NAME?.trim().slice(0, 100) || DEFAULT_SERVICE,
  };
}

/** The traces endpoint of a base URL: /v1/traces added to its path, its query kept; null: none. */
function tracesOf(base: string): string | null {
  if (!URL.canParse(base)) return null;
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.href;
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

/**
 * `key=value,...` as OpenTelemetry's exporters read it (@opentelemetry/core: a pair it cannot
 * decode is dropped, and a value ends at `;`, as in baggage); a name or value HTTP does not
 * allow drops the pair, with a problem.
 */
function exportHeaders(
  text: string | undefined,
  setting: string,
  problems: string[],
): Record<string, string> {
  if (!text?.trim()) return {};
  const pairs = parseKeyPairsIntoRecord(text);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(pairs)) {
    if (HEADER_NAME.test(key) && headerValueAllowed(value)) out[key] = value;
    else problems.push(`${setting}: a header name or value that HTTP does not allow is left out`);
  }
  if (!Object.keys(out).length)
    problems.push(`${setting} holds no key=value pair: spans are exported without headers`);
  return out;
}

/** OTEL_TRACES_SAMPLER and its ratio (OTEL_TRACES_SAMPLER_ARG, for the traceidratio ones). */
function sampler(
  env: TracingEnv,
  problems: string[],
): Pick<TracingSettings, 'ratio' | 'parentBased'> {
  const given = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_traceidratio';
  const known = Object.hasOwn(SAMPLERS, given) ? SAMPLERS[given]! : undefined;
  if (!known)
    problems.push(
      `OTEL_TRACES_SAMPLER must be one of ${Object.keys(SAMPLERS).join(', ')}; parentbased_traceidratio is used`,
    );
  const { parentBased, ratio } = known ?? SAMPLERS.parentbased_traceidratio!;
  return { parentBased, ratio: ratio ?? samplerRatio(env.OTEL_TRACES_SAMPLER_ARG, problems) };
}

/** A header value HTTP allows: no control character (CR, LF, NUL...) but the tab. */
function headerValueAllowed(value: string): boolean {
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return false;
  }
  return true;
}

function samplerRatio(text: string | undefined, problems: string[]): number {
  if (text === undefined || text.trim() === '') return 1;
  const ratio = Number(text.trim());
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return ratio;
  problems.push('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1; 1 (every trace) is used');
  return 1;
}

/**
 * What the scrubber removes of these settings: the endpoint (its base as given too) and every
 * header value long enough to be a key.
 */
export function tracingSecrets(env: TracingEnv, settings: TracingSettings | null): string[] {
  if (!settings) return [];
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return [
    settings.endpoint,
    ...(base && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ? [base] : []),
    ...Object.values(settings.headers).filter((v) => v.length >= KEY_LENGTH),
  ];
}
