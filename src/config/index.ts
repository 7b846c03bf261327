// The environment, parsed once into a checked configuration: every variable the Worker reads
// becomes a typed value, or a problem that says what to fix. Parsed once per environment object
// (an isolate keeps its env; the per-request copies the OAuth library needs share the parse).

import type { AppEnv } from '../env';
import type { PveClientConfig } from '../proxmox/client';
import {
  approvalTtlMs,
  auditEnabled,
  auditLimits,
  authMode,
  configuredSecrets,
  corsOrigins,
  pveConfig,
  type AuthMode,
} from './parse';

export type { AuthMode };

export interface Config {
  authMode: AuthMode | { error: string };
  pve: PveClientConfig | { error: string };
  audit: { enabled: boolean; retentionDays: number; maxRows: number };
  approvals: { ttlMs: number };
  /** ADMIN_USERS (ids or emails) and ADMIN_GROUPS. */
  admins: { users: string[]; groups: string[] };
  /** AUTH_MODE=none: browser origins allowed cross-origin. */
  corsOrigins: string[];
  /** What the scrubber removes wherever upstream text goes. */
  secrets: string[];
  /**
   * Settings with a value that cannot be used, each replaced by its default (or dropped): /health
   * lists them. (A missing or broken auth mode or Proxmox connection is fatal instead: see above.)
   */
  problems: { setting: 'audit' | 'approvals' | 'cors'; message: string }[];
}

const parsed = new WeakMap<object, Config>();

export function configOf(env: AppEnv): Config {
  let config = parsed.get(env);
  if (!config) {
    config = parse(env);
    parsed.set(env, config);
  }
  return config;
}

/** A copy of env (the OAuth library writes into the one it gets) sharing env's parsed config. */
export function envCopy(env: AppEnv): AppEnv {
  const copy = { ...env };
  parsed.set(copy, configOf(env));
  return copy;
}

/** Comma- or space-separated list settings. */
export function listSetting(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[,\s]+/)
    .map((v) => v.trim())
    .filter(Boolean);
}

function parse(env: AppEnv): Config {
  const audit: string[] = [];
  const approvals: string[] = [];
  const cors: string[] = [];
  const config: Config = {
    authMode: authMode(env),
    pve: pveConfig(env),
    audit: { enabled: auditEnabled(env, audit), ...auditLimits(env, audit) },
    approvals: { ttlMs: approvalTtlMs(env, approvals) },
    admins: { users: listSetting(env.ADMIN_USERS), groups: listSetting(env.ADMIN_GROUPS) },
    corsOrigins: corsOrigins(listSetting(env.CORS_ORIGINS), cors),
    secrets: configuredSecrets(env),
    problems: [],
  };
  config.problems = [
    ...audit.map((message) => ({ setting: 'audit' as const, message })),
    ...approvals.map((message) => ({ setting: 'approvals' as const, message })),
    ...cors.map((message) => ({ setting: 'cors' as const, message })),
  ];
  return config;
}
