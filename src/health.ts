// GET /health: whether this server is configured to work — Proxmox connection, policy, sign-in —
// without calling Proxmox. Details that only an operator needs are shown on loopback only.

import type { Context } from 'hono';
import { authConfig, publicOrigin } from './auth/config';
import { auditEnabled, authMode, pveConfig, type AppEnv } from './env';
import { isLoopbackHostname } from './guard';
import { formatErrors } from './policy/load';
import { activePolicy } from './policy/source';
import { TOOL_CATALOG } from './tools';
import { VERSION } from './version';

export function health(c: Context<{ Bindings: AppEnv }>): Response {
  const env = c.env;
  const mode = authMode(env);
  const pve = pveConfig(env);
  const policy = activePolicy(env.POLICY, TOOL_CATALOG);
  const auth = mode === 'oauth' ? authConfig(env, publicOrigin(env, c.req.raw)) : null;
  const problems = [
    ...(typeof mode === 'string' ? [] : [mode.error]),
    ...('error' in pve ? [pve.error] : []),
    ...(policy.ok ? [] : [`policy (${policy.origin}) is invalid; every tool call is denied:\n${formatErrors(policy.errors)}`]),
    ...(auth && 'error' in auth ? [`sign-in: ${auth.error}`] : []),
  ];
  const local = isLoopbackHostname(new URL(c.req.url).hostname);
  return c.json({
    ok: problems.length === 0,
    version: VERSION,
    auth_mode: typeof mode === 'string' ? mode : 'invalid',
    ...(auth && !('error' in auth) ? { idp: auth.idp.kind } : {}),
    proxmox: 'error' in pve ? { configured: false } : { configured: true, via: pve.binding ? 'service-binding' : 'url' },
    audit: auditEnabled(env) ? 'on' : 'off',
    policy: policy.ok
      ? { origin: policy.origin, valid: true }
      : { origin: policy.origin, valid: false, ...(local ? { errors: policy.errors } : { error_count: policy.errors.length }) },
    ...(problems.length ? (local ? { problems } : { problem_count: problems.length }) : {}),
  });
}
