// GET /health: whether this server can work — configuration complete, sign-in set up, PUBLIC_URL
// matching the origin asked, Proxmox answering (one cached GET /version), the policy valid, the
// audit trail on. Always 200 (`ok` says it); each problem carries its fix; notices name choices
// that widen what the server reaches without failing it (receivers on a private network).
// Problem texts, notices and failure details only for the operator view (an administrator's web
// session or policy-scoped token, or AUTH_MODE=none: ./viewer.ts); anyone else gets booleans and
// counts.
// Never a secret, a user or an upstream body.

import type { Context } from 'hono';
import { authConfig, publicOrigin } from '../auth/config';
import { type AppBindings, oauthHelpers } from '../compose/runtime';
import { configNotices, configProblems, publicUrlState, type HealthProblem } from './config-checks';
import { probeFix, probeProxmox, type ProxmoxProbe } from './proxmox-probe';
import { healthView } from '../web/operator-view';
import { formatErrors } from '../policy/load';
import { type ActivePolicy, policyLabel } from '../policy/source';
import type { Config } from '../config';
import type { ClusterConfig } from '../config/clusters';
import { VERSION } from '../core/version';
import { type Identities, tokensOf } from '../config/identities';
import { refusedOutright } from '../policy/evaluate';
import { identityChecks } from './identity-check';

export async function health(c: Context<AppBindings>): Promise<Response> {
  const runtime = c.var.runtime;
  const request = c.req.raw;
  const { config } = runtime;
  const mode = config.authMode;
  const pve = config.pve;
  // Every cluster is probed; where there are several, each is named in the answer.
  const clusters = 'error' in config.clusters ? [] : config.clusters.all;
  const several = clusters.length > 1;
  const policy = await runtime.policy.active(c.executionCtx.waitUntil.bind(c.executionCtx));
  const deployRefused = runtime.policy.deployRefused();
  const auth =
    mode === 'oauth' ? authConfig(config, publicOrigin(config, request), runtime.clock) : null;
  const identities =
    config.identities && !('error' in config.identities) ? config.identities : null;
  // Whether the policy leaves no way to run a command inside a guest (a token able to is then
  // more than is needed).
  const guestToolsRefused = policy.ok && refusedOutright(policy.policy, 'pve_guest_exec') !== null;
  const [view, probes, undelivered, tokens] = await Promise.all([
    healthView(config, oauthHelpers(c.env), runtime.stores.kv, request),
    Promise.all(clusters.map((c) => probeProxmox(c.client, runtime.clock, several ? c.name : ''))),
    config.notify.targets.length
      ? runtime.stores
          .approvals()
          .undelivered()
          .catch(() => null)
      : null,
    identityChecks(clusters, identities, runtime.clock, guestToolsRefused),
  ]);
  const problems: HealthProblem[] = [
    ...configProblems(config, request),
    ...probeProblems(probes, clusters, several),
    ...tokens.problems,
    ...policyProblems(policy),
    ...notifyProblems(config, policy),
    ...deployProblems(policy, deployRefused),
  ];
  const operator = view === 'operator';
  const notices = configNotices(config);
  // Who asks decides what is shown: no cache keeps one person's answer for another.
  c.header('Cache-Control', 'private, no-store');
  c.header('Vary', 'Cookie, Authorization');
  return c.json({
    ok: problems.length === 0,
    version: VERSION,
    view,
    auth_mode: typeof mode === 'string' ? mode : 'invalid',
    ...(auth && !('error' in auth) ? { idp: auth.idp.kind } : {}),
    ...(mode === 'oauth'
      ? {
          public_url: publicUrlState(config, request),
          oauth_kv: config.bindings.oauthKv,
        }
      : {}),
    proxmox: 'error' in pve ? { configured: false } : proxmoxView(clusters, probes, operator),
    // How many Proxmox tokens people act with (PVE_IDENTITIES), each checked above; for the
    // operator, what each holds on /, /vms and each pool.
    ...(identities
      ? {
          identities: {
            tokens: mappedTokens(identities),
            ...(operator ? { holds: tokens.holds } : {}),
          },
        }
      : {}),
    audit: config.audit.enabled ? 'on' : 'off',
    ...(config.notify.targets.length
      ? {
          notifications: {
            receivers: config.notify.targets.length,
            undelivered: undelivered ? Object.values(undelivered).reduce((a, b) => a + b, 0) : null,
          },
        }
      : {}),
    policy: policyView(policy, operator),
    // Choices to keep in view, which do not make it fail (names only: for the operator).
    ...(operator && notices.length ? { notices } : {}),
    ...(problems.length
      ? operator
        ? { problems }
        : { problem_count: problems.length, failing: [...new Set(problems.map((p) => p.check))] }
      : {}),
  });
}

/** The distinct tokens PVE_IDENTITIES maps people to, over every cluster. */
function mappedTokens(identities: Identities): number {
  return [...identities.values()].reduce((n, map) => n + tokensOf(map).length, 0);
}

/** Each probe that failed, naming its cluster, and that cluster's settings, where there are several. */
function probeProblems(
  probes: ProxmoxProbe[],
  clusters: readonly ClusterConfig[],
  several: boolean,
): HealthProblem[] {
  return probes.flatMap((probe, i) => {
    const c = clusters[i]!;
    if (probe.status === 'ok') return [];
    return [
      {
        check: 'proxmox' as const,
        message: `${several ? `Cluster ${c.name}: ` : ''}${probe.message ?? `Proxmox probe: ${probe.status}`}`,
        // The cluster's own settings (PVE_CLUSTERS'), or the single-cluster ones.
        fix: probeFix(probe.status, c.client.names),
      },
    ];
  });
}

/** How Proxmox is reached and whether it answers: per cluster where there are several. */
function proxmoxView(
  clusters: readonly ClusterConfig[],
  probes: ProxmoxProbe[],
  operator: boolean,
): Record<string, unknown> {
  const one = (c: ClusterConfig, i: number) => ({
    via: c.client.binding ? 'service-binding' : 'url',
    ...probeView(probes[i] ?? null, operator),
  });
  if (clusters.length === 1) return { configured: true, ...one(clusters[0]!, 0) };
  return { configured: true, clusters: clusters.map((c, i) => ({ name: c.name, ...one(c, i) })) };
}

function probeView(probe: ProxmoxProbe | null, operator: boolean): Record<string, unknown> {
  if (!probe) return {};
  if (!operator) return { reachable: probe.status === 'ok' };
  return {
    reachable: probe.status === 'ok',
    status: probe.status,
    latency_ms: probe.ms,
    checked_at: new Date(probe.at).toISOString(),
    ...(probe.pveVersion ? { pve_version: probe.pveVersion } : {}),
  };
}

/** Receivers configured without the queue that carries their events, and `notify` names nobody configured. */
function notifyProblems(config: Config, policy: ActivePolicy): HealthProblem[] {
  const { targets } = config.notify;
  const problems: HealthProblem[] = [];
  if (targets.length && !config.bindings.notifyQueue)
    problems.push({
      check: 'notify',
      message:
        'APPROVAL_WEBHOOKS is set, but there is no NOTIFY_QUEUE binding: no approval is announced.',
      fix: 'Keep the [[queues.producers]] and [[queues.consumers]] blocks of wrangler.toml, and create the queue: wrangler queues create approval-notifications.',
    });
  if (policy.ok) {
    const known = new Set(targets.map((t) => t.name));
    const unknown = new Set(
      Object.values(policy.policy.doc.tools).flatMap((tool) =>
        (tool.notify ?? []).filter((name) => !known.has(name)),
      ),
    );
    if (unknown.size)
      problems.push({
        check: 'notify',
        message: `The policy sends approvals to ${[...unknown].map((n) => `"${n}"`).join(', ')}, which APPROVAL_WEBHOOKS does not name: those approvals reach nobody.`,
        fix: 'Name the receivers in APPROVAL_WEBHOOKS ("name"), or correct the policy\'s notify lists.',
      });
  }
  return problems;
}

/** The policy that does not load, or whose store does not answer. */
function policyProblems(policy: ActivePolicy): HealthProblem[] {
  const problems: HealthProblem[] = [];
  if (!policy.ok && policy.unavailable)
    problems.push({
      check: 'policy',
      message: `${formatErrors(policy.errors)}; every tool call is denied until it answers.`,
      fix: 'The policy store (Durable Object POLICY_STORE) did not answer in time: check the Worker logs; it recovers by itself when the object answers again.',
    });
  else if (!policy.ok)
    problems.push({
      check: 'policy',
      message: `policy (${policyLabel(policy)}) is invalid; every tool call is denied:\n${formatErrors(policy.errors)}`,
      fix:
        policy.version === null
          ? 'Correct the errors (`npm run policy -- check <file>` lists them), then set POLICY or policy.json again and redeploy.'
          : 'Activate a valid version on /admin (or POST /admin/api/policy/{version}/activate).',
    });
  return problems;
}

function policyView(policy: ActivePolicy, operator: boolean): Record<string, unknown> {
  if (policy.ok)
    return {
      origin: policy.origin,
      valid: true,
      // Which version is in force, and whether one runs in shadow: for the operator only.
      ...(operator
        ? {
            version: policy.version,
            sha256: policy.sha256,
            ...(policy.shadow ? { shadow_version: policy.shadow.version } : {}),
          }
        : {}),
    };
  return {
    origin: policy.origin,
    ...(operator ? { version: policy.version } : {}),
    valid: false,
    ...(policy.unavailable ? { unavailable: true } : {}),
    ...(operator ? { errors: policy.errors } : { error_count: policy.errors.length }),
  };
}

/** A deployed policy that was refused while the version before it stays in force. */
function deployProblems(policy: ActivePolicy, refused: string[] | null): HealthProblem[] {
  if (!refused || !policy.ok) return [];
  return [
    {
      check: 'policy',
      message: `the deployed ${policy.origin} is invalid and was not stored; ${policyLabel(policy)} stays active:\n${refused.join('\n')}`,
      fix: 'Correct the errors (`npm run policy -- check <file>` lists them), then deploy again, or leave POLICY as it was.',
    },
  ];
}
