// What /health finds wrong in the configuration itself, before anything is called: each problem
// names the check it belongs to, what is wrong and what to do. Pure: the environment and the
// request's origin in, problems out. Messages name settings, never their secret values.

import { authConfig, publicOrigin } from '../auth/config';
import type { Config } from '../config';
import { isLoopbackHostname } from '../net/loopback-guard';

export type HealthCheck =
  | 'auth_mode'
  | 'sign_in'
  | 'public_url'
  | 'oauth_kv'
  | 'proxmox'
  | 'identities'
  | 'policy'
  | 'audit'
  | 'approvals'
  | 'cors'
  | 'notify'
  | 'tracing';

export interface HealthProblem {
  check: HealthCheck;
  message: string;
  fix: string;
}

/** Something /health tells the operator without failing: a choice made on purpose, to keep in view. */
export interface HealthNotice {
  check: HealthCheck;
  message: string;
}

/** Receivers let onto a private network (`"private_network": true`), by name (their URLs are secret). */
export function configNotices(config: Config): HealthNotice[] {
  const names = config.notify.targets.filter((t) => t.privateNetwork).map((t) => `"${t.name}"`);
  if (!names.length) return [];
  return [
    {
      check: 'notify',
      message: `APPROVAL_WEBHOOKS lets ${names.join(', ')} reach private-network and link-local addresses ("private_network": true): approval events are sent inside that network. Keep it only for receivers you run there.`,
    },
  ];
}

export interface PublicUrlState {
  configured: boolean;
  /** Whether clients using the request's origin get metadata and tokens for that origin. */
  matches_request: boolean;
}

export function configProblems(config: Config, request: Request): HealthProblem[] {
  const mode = config.authMode;
  const pve = config.pve;
  const problems: HealthProblem[] = [];
  if (typeof mode !== 'string') {
    problems.push({
      check: 'auth_mode',
      message: mode.error,
      fix: 'Set AUTH_MODE to "oauth" (or "none" for loopback-only local use).',
    });
  }
  if ('error' in pve) {
    problems.push({
      check: 'proxmox',
      message: `Proxmox connection is not configured: ${pve.error}`,
      fix: pve.error.includes('PVE_CLUSTERS')
        ? 'Correct PVE_CLUSTERS (README: Configuration, "Several clusters"): a JSON list of { name, base_url and/or vpc_service, token_id, token_secret_var, access_client_id?, access_secret_var?, timeout_ms? }, each secret in a variable it names (`wrangler secret put`).'
        : 'Set PVE_BASE_URL and PVE_TOKEN_ID under [vars] (or a PVE VPC service binding) and `wrangler secret put PVE_TOKEN_SECRET`.',
    });
  }
  const { identities } = config;
  if (identities && 'error' in identities)
    problems.push({
      check: 'proxmox',
      message: `Proxmox identities are not configured, so every call is refused: ${identities.error}`,
      fix: 'Correct PVE_IDENTITIES (docs/configuration.md): a JSON list of { match, token_id, token_secret_var } and at most one { fallback: true, token_id, token_secret_var } last, by cluster name where there are several, each secret in a variable it names (`wrangler secret put`).',
    });
  if (mode === 'oauth') problems.push(...signInProblems(config, request));
  problems.push(
    ...config.problems.map(({ setting, message }) => ({
      check: setting,
      message,
      fix:
        setting === 'cors'
          ? 'List exact origins, e.g. CORS_ORIGINS = "https://app.example.com, http://localhost:5173".'
          : setting === 'notify'
            ? 'Correct APPROVAL_WEBHOOKS (see docs/approvals.md, "Telling approvers"): a JSON list of {url, format?, secret?, events?, private_network?}; https to public hosts, loopback only in local development.'
            : setting === 'tracing'
              ? 'Correct the OTEL_ settings (docs/observability.md, "A call\'s spans"): an https OTLP/HTTP endpoint on a public host (http to loopback only in local development), headers as key=value pairs, OTEL_TRACES_SAMPLER one of OpenTelemetry\'s sampler names, OTEL_TRACES_SAMPLER_ARG from 0 to 1.'
              : 'Correct the value or remove it to use the default.',
    })),
  );
  return problems;
}

function signInProblems(config: Config, request: Request): HealthProblem[] {
  const problems: HealthProblem[] = [];
  if (!config.bindings.oauthKv) {
    problems.push({
      check: 'oauth_kv',
      message:
        'The OAUTH_KV binding is missing: OAuth clients, grants and tokens cannot be stored, so nobody can sign in.',
      fix: 'Run `wrangler kv namespace create OAUTH_KV` and add its id as [[kv_namespaces]] binding = "OAUTH_KV" to the deploy configuration.',
    });
  }
  const auth = authConfig(config, publicOrigin(config, request));
  if ('error' in auth) {
    problems.push({
      check: 'sign_in',
      message: `Sign-in is not configured: ${auth.error}.`,
      fix: 'Set the identity provider settings under [vars] and its client secret with `wrangler secret put` (README: Sign-in).',
    });
  } else if (
    auth.idp.kind !== 'dev' &&
    auth.allowedUsers.length === 0 &&
    auth.allowedGroups.length === 0
  ) {
    problems.push({
      check: 'sign_in',
      message: 'Nobody is admitted: neither ALLOWED_USERS nor ALLOWED_GROUPS is set.',
      fix: 'Set ALLOWED_GROUPS (groups from the identity provider) or ALLOWED_USERS (ids or verified emails; "*" admits anyone who can sign in).',
    });
  }
  const url = publicUrlProblem(config.signIn.publicUrl, new URL(request.url).origin);
  if (url) problems.push(url);
  return problems;
}

export function publicUrlState(config: Config, request: Request): PublicUrlState {
  const configured = config.signIn.publicUrl !== null;
  return {
    configured,
    matches_request:
      publicUrlProblem(config.signIn.publicUrl, new URL(request.url).origin) === null,
  };
}

/** PUBLIC_URL names the resource and issuer: a client on another origin cannot use its tokens. */
function publicUrlProblem(
  url: URL | 'invalid' | null,
  requestOrigin: string,
): HealthProblem | null {
  if (url === null) return null;
  if (url === 'invalid') {
    return {
      check: 'public_url',
      message: "PUBLIC_URL is not a URL; the request's own origin is used instead.",
      fix: 'Set PUBLIC_URL to the origin clients use, e.g. https://mcp.example.com.',
    };
  }
  if (
    url.protocol !== 'https:' &&
    !(url.protocol === 'http:' && isLoopbackHostname(url.hostname))
  ) {
    return {
      check: 'public_url',
      message: `PUBLIC_URL ${url.origin} is not https: OAuth 2.1 clients refuse it.`,
      fix: 'Use the https:// origin clients reach the Worker on.',
    };
  }
  if (url.origin !== requestOrigin) {
    return {
      check: 'public_url',
      message: `PUBLIC_URL is ${url.origin} but this request came to ${requestOrigin}: OAuth metadata and tokens name ${url.origin}, so a client using ${requestOrigin} cannot sign in (401).`,
      fix: `Set PUBLIC_URL to ${requestOrigin} if clients use it, or have them use ${url.origin} (and serve only that hostname: workers_dev = false).`,
    };
  }
  return null;
}
