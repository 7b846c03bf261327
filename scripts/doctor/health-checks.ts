// The doctor's operator checks, read from GET /health: configuration (sign-in, PUBLIC_URL, the
// OAUTH_KV binding), Proxmox reachable, the policy valid, the audit trail on. With the operator
// view (an administrator's token with policy:read) each failure comes with the server's own message
// and fix; the public view only says which checks fail.

import { fail, notApplicable, pass, type CheckResult } from './report.ts';

export interface Health {
  ok: boolean;
  version: string;
  view: 'operator' | 'public';
  auth_mode: string;
  idp?: string;
  public_url?: { configured: boolean; matches_request: boolean };
  oauth_kv?: boolean;
  proxmox: ProxmoxHealth & {
    configured: boolean;
    /** Where the server reaches several clusters: each, by name. */
    clusters?: (ProxmoxHealth & { name: string })[];
  };
  audit: 'on' | 'off';
  /**
   * PVE_IDENTITIES: how many Proxmox tokens people act with (each checked by /health); for the
   * operator, what each holds on /, /vms and each pool (absent where it could not be read).
   */
  identities?: {
    tokens: number;
    holds?: { token: string; cluster?: string; on?: Record<string, string[]> }[];
  };
  policy: { origin: string; valid: boolean; error_count?: number };
  problems?: { check: string; message: string; fix: string }[];
  failing?: string[];
}

interface ProxmoxHealth {
  reachable?: boolean;
  status?: string;
  latency_ms?: number;
  pve_version?: string;
}

const TIMEOUT_MS = 15_000;
const NEED_DETAILS =
  'Pass --token with a token of an ADMIN_USERS / ADMIN_GROUPS member that carries policy:read (asked for with scope "policy:read pve:read": docs/policy-lifecycle.md), or open /health in a browser signed in on /admin, to see the problem.';

export async function fetchHealth(
  origin: string,
  token: string | undefined,
): Promise<{ health: Health } | { result: CheckResult }> {
  const name = 'health';
  let res: Response;
  try {
    res = await fetch(`${origin}/health`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    return {
      result: fail(
        name,
        `no answer from ${origin}/health (${errorText(err)})`,
        'Check the URL, and that the server is running (npm start) or deployed (wrangler deploy).',
      ),
    };
  }
  const text = await res.text();
  let health: Health | undefined;
  try {
    health = JSON.parse(text) as Health;
  } catch {
    // handled below
  }
  if (res.status === 403 && /loopback/.test(text)) {
    return {
      result: fail(
        name,
        `${origin} refuses this request: ${(health as { message?: string } | undefined)?.message ?? text.slice(0, 200)}`,
        'Use http://localhost:<port>, or deploy with a real identity provider.',
      ),
    };
  }
  if (!res.ok || !health || typeof health.version !== 'string') {
    return {
      result: fail(
        name,
        `${origin}/health answered ${res.status} ${res.headers.get('content-type') ?? ''}, not this server's health report`,
        'Check the URL: something else answers there.',
      ),
    };
  }
  return { health };
}

export function healthResults(h: Health): CheckResult[] {
  const oauth = h.auth_mode === 'oauth';
  const problems = (check: string): { message: string; fix: string }[] =>
    (h.problems ?? []).filter((p) => p.check === check);
  const judge = (check: string, okDetail: string): CheckResult => {
    const own = problems(check);
    if (own.length)
      return fail(
        check,
        own.map((p) => p.message).join(' / '),
        [...new Set(own.map((p) => p.fix))].join(' '),
      );
    if (h.failing?.includes(check))
      return fail(
        check,
        '/health reports a problem here (its details are for an administrator: the public view).',
        NEED_DETAILS,
      );
    return pass(check, okDetail);
  };
  const results: CheckResult[] = [
    pass(
      'health',
      `GET /health answered: version ${h.version}, AUTH_MODE=${h.auth_mode}${h.idp ? `, IDP=${h.idp}` : ''}, ${h.view} view`,
    ),
  ];
  if (problems('auth_mode').length || h.failing?.includes('auth_mode'))
    results.push(judge('auth_mode', ''));
  if (oauth) {
    results.push(judge('sign_in', `identity provider ${h.idp ?? '?'} configured`));
    results.push(
      judge(
        'public_url',
        h.public_url?.configured
          ? 'PUBLIC_URL matches this URL'
          : "PUBLIC_URL not set: each request's own origin is used",
      ),
    );
    results.push(judge('oauth_kv', 'OAUTH_KV bound'));
  } else {
    for (const check of ['sign_in', 'public_url', 'oauth_kv'])
      results.push(notApplicable(check, `AUTH_MODE=${h.auth_mode}`));
  }
  const pve = h.proxmox;
  if (pve.clusters) results.push(...pve.clusters.map((c) => clusterResult(h, c)));
  else results.push(judge('proxmox', reachedDetail(pve)));
  if (h.identities) {
    const result = judge(
      'identities',
      `${h.identities.tokens} Proxmox token${h.identities.tokens === 1 ? '' : 's'} people act with (PVE_IDENTITIES): each holds privileges, none beyond what the tools need`,
    );
    const lines = (h.identities.holds ?? []).map(holdsLine);
    results.push(lines.length ? { ...result, lines } : result);
  }
  results.push(judge('policy', `valid (${h.policy.origin})`));
  const audit = judge('audit', 'audit trail on');
  results.push(
    audit.outcome === 'PASS' && h.audit !== 'on'
      ? fail(
          'audit',
          'the audit trail is off (AUDIT_ENABLED=false): tool calls are not recorded.',
          'Remove AUDIT_ENABLED (or set it to true) and redeploy.',
        )
      : audit,
  );
  if (!h.ok && !results.some((r) => r.outcome === 'FAIL')) {
    results.push(
      fail(
        'health',
        '/health says ok: false for a reason this doctor does not know.',
        'Read GET /health signed in on /admin as an administrator.',
      ),
    );
  }
  return results;
}

function reachedDetail(p: ProxmoxHealth): string {
  return p.reachable === undefined
    ? 'configured'
    : `reachable${p.latency_ms !== undefined ? ` (GET /version in ${p.latency_ms} ms${p.pve_version ? `, PVE ${p.pve_version}` : ''})` : ''}`;
}

/** One cluster of several: its own check, failed by the problems /health names it in. */
function clusterResult(h: Health, c: ProxmoxHealth & { name: string }): CheckResult {
  const check = `proxmox ${c.name}`;
  const prefix = `Cluster ${c.name}: `;
  const own = (h.problems ?? []).filter(
    (p) => p.check === 'proxmox' && p.message.startsWith(prefix),
  );
  if (own.length)
    return fail(
      check,
      own.map((p) => p.message).join(' / '),
      [...new Set(own.map((p) => p.fix))].join(' '),
    );
  if (c.reachable === false)
    return fail(
      check,
      `cluster ${c.name} does not answer (the public view: no details).`,
      NEED_DETAILS,
    );
  return pass(check, reachedDetail(c));
}

/** An error in one line, without markup: a page that came back is named by its <title>. */
export function errorText(err: unknown): string {
  const cause = err instanceof Error ? (err as Error & { cause?: unknown }).cause : undefined;
  const text =
    err instanceof Error
      ? cause instanceof Error
        ? `${err.message}: ${cause.message}`
        : err.message
      : String(err);
  const markup = text.indexOf('<');
  if (markup < 0) return text;
  const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  return `${text.slice(0, markup).trim()}${title ? ` (page: "${title}")` : ''}`;
}

/** What one token holds: `alice@pve!mcp: on / nothing; on /vms nothing; on /pool/lab VM.Audit, ...`. */
function holdsLine(t: NonNullable<NonNullable<Health['identities']>['holds']>[number]): string {
  const who = `${t.cluster ? `cluster ${t.cluster}, ` : ''}${t.token}`;
  if (!t.on) return `${who}: what it holds could not be read`;
  const on = Object.entries(t.on).map(
    ([path, privileges]) => `on ${path} ${privileges.length ? privileges.join(', ') : 'nothing'}`,
  );
  return `${who}: ${on.join('; ')}`;
}
