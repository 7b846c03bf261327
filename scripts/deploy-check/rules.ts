// What makes a deploy configuration wrong, judged from wrangler's own dry run and its own TOML
// parse: any wrangler warning or error, a binding written in the file that wrangler does not bind
// (a key that landed inside another table), a binding or migration the Worker needs that the
// repository's wrangler.toml has and the file lacks, a build setting (minify, [alias]) that
// differs from wrangler.toml's, and settings that only work on loopback.
// Pure: every finding says what is wrong and what to do.

import path from 'node:path';
import { unexpectedFields, type DryRunReport } from './wrangler-output.ts';

export interface Finding {
  problem: string;
  fix: string;
}

export interface Migration {
  tag: string;
  body: string;
}

/** What every configuration must provide: taken from the repository's wrangler.toml. */
export interface Reference {
  /** Bindings other than variables, by name → wrangler's resource type. */
  bindings: Map<string, string>;
  migrations: Migration[];
  build: BuildSettings;
}

/**
 * How wrangler bundles the Worker. The bundle-size budget (test/bundle-stubs/bundle-size.node.test.ts) is
 * measured with wrangler.toml's: a deploy configuration without them ships a larger Worker,
 * with code in it that nothing tested.
 */
export interface BuildSettings {
  minify: boolean;
  /** [alias]: import specifier → the module replacing it, as an absolute path. */
  alias: Map<string, string>;
}

export interface CheckedConfig {
  raw: Record<string, unknown>;
  /** The configuration file's directory: wrangler reads [alias] paths relative to it. */
  dir: string;
  exitCode: number | null;
  report: DryRunReport;
}

const LOOPBACK_ONLY: Record<string, string> = {
  IDP: 'dev',
  AUTH_MODE: 'none',
};

export function referenceOf(config: CheckedConfig): Reference {
  const bindings = new Map(
    [...config.report.bindings].filter(([, type]) => type !== 'Environment Variable'),
  );
  return { bindings, migrations: migrationsOf(config.raw), build: buildSettingsOf(config) };
}

export function checkConfig(config: CheckedConfig, reference: Reference | null): Finding[] {
  return [
    ...wranglerFindings(config),
    ...unboundFindings(config),
    ...migrationFindings(config.raw),
    ...(reference ? referenceFindings(config, reference) : []),
    ...(reference ? buildFindings(config, reference.build) : []),
    ...(reference ? deployVarFindings(config.raw) : []),
    ...clusterFindings(config.raw),
  ];
}

/** The single-cluster settings, which PVE_CLUSTERS replaces (src/config/clusters.ts). */
const SINGLE_CLUSTER_VARS = ['PVE_BASE_URL', 'PVE_TOKEN_ID', 'CF_ACCESS_CLIENT_ID'];

/**
 * PVE_CLUSTERS as the Worker will read it: a JSON list whose every `vpc_service` is a VPC service
 * binding this file declares, and no single-cluster setting beside it (the Worker refuses both).
 * What only the deployed Worker can see (its secrets) is left to /health and `npm run doctor`.
 */
function clusterFindings(raw: Record<string, unknown>): Finding[] {
  const vars = asRecord(raw.vars) ?? {};
  const text = vars.PVE_CLUSTERS;
  if (typeof text !== 'string' || text.trim() === '') return [];
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return [
      {
        problem: 'vars.PVE_CLUSTERS is not JSON',
        fix: 'Write it as a JSON list of clusters: [{ "name": "lab", ... }] (docs/configuration.md).',
      },
    ];
  }
  if (!Array.isArray(list) || list.length === 0)
    return [
      {
        problem: 'vars.PVE_CLUSTERS is not a list of clusters',
        fix: 'Write it as a JSON list of clusters: [{ "name": "lab", ... }] (docs/configuration.md).',
      },
    ];
  const declared = new Set(asArray(raw.vpc_services).map((s) => String(s.binding)));
  const out: Finding[] = [];
  for (const [i, entry] of list.entries()) {
    const cluster = asRecord(entry) ?? {};
    const binding = cluster.vpc_service;
    if (binding !== undefined && !declared.has(String(binding)))
      out.push({
        problem: `vars.PVE_CLUSTERS[${i}] ("${String(cluster.name)}") names the VPC service binding ${JSON.stringify(binding)}, which this file does not declare`,
        fix: `Declare it: vpc_services = [{ binding = ${JSON.stringify(binding)}, service_id = "<its VPC service id>" }] (a top-level key, above the first [table]).`,
      });
  }
  const beside = SINGLE_CLUSTER_VARS.filter((name) => String(vars[name] ?? '').trim() !== '');
  // The single cluster's PVE binding, unless a cluster names it as its own.
  const named = list.some((entry) => asRecord(entry)?.vpc_service === 'PVE');
  if (declared.has('PVE') && !named) beside.push('the PVE binding');
  if (beside.length)
    out.push({
      problem: `vars.PVE_CLUSTERS is set beside ${beside.join(', ')}: the Worker refuses both`,
      fix: 'Remove the single-cluster settings; each cluster of PVE_CLUSTERS names its own URL and token.',
    });
  return out;
}

function wranglerFindings({ exitCode, report }: CheckedConfig): Finding[] {
  const out: Finding[] = report.errors.map((text) => ({
    problem: `wrangler error: ${text}`,
    fix: 'Correct the configuration as wrangler says.',
  }));
  if (exitCode !== 0 && out.length === 0)
    out.push({
      problem: `wrangler exited with code ${exitCode}`,
      fix: 'Run the same dry run by hand to see why.',
    });
  for (const text of report.warnings) {
    const misplaced = unexpectedFields(text);
    if (misplaced.length === 0) {
      out.push({
        problem: `wrangler warning: ${text}`,
        fix: 'A warning at deploy is a setting wrangler ignores or misreads: resolve it.',
      });
      continue;
    }
    for (const { table, keys } of misplaced) {
      const names = keys.map((k) => `"${k}"`).join(', ');
      out.push(
        table === 'top-level'
          ? {
              problem: `wrangler ignores ${names}: not a setting it knows at the top level`,
              fix: 'Check the spelling; Worker variables belong under [vars].',
            }
          : {
              problem: `wrangler reads ${names} as part of [${table}] and ignores it there`,
              fix: `In TOML every key after a [table] header belongs to that table: move ${names} above the first [table] header, with the other top-level keys.`,
            },
      );
    }
  }
  return out;
}

/** Bindings written anywhere in the file (outside [vars] and [env.*]) that wrangler did not bind. */
function unboundFindings({ raw, report }: CheckedConfig): Finding[] {
  const out: Finding[] = [];
  for (const { name, at } of declaredBindings(raw)) {
    if (report.bindings.has(name)) continue;
    const table = at.split(/[.[]/)[0] ?? at;
    out.push({
      problem: `binding ${name} is written at ${at} but wrangler does not bind it, so env.${name} would be missing`,
      fix: `Move it to where wrangler reads it (not inside [${table}]): top-level keys go above the first [table] header.`,
    });
  }
  return out;
}

/**
 * Bindings the Worker runs without: CALL_METRICS (Analytics Engine) only adds a data point per
 * call, and an account without Analytics Engine turned on must leave it out (wrangler deploy
 * fails with code 10089 otherwise; docs/deploy.md).
 */
const OPTIONAL_BINDINGS = new Set(['CALL_METRICS']);

function referenceFindings({ raw, report }: CheckedConfig, reference: Reference): Finding[] {
  const out: Finding[] = [];
  for (const [name, type] of reference.bindings) {
    const got = report.bindings.get(name);
    if (got === type || (got === undefined && OPTIONAL_BINDINGS.has(name))) continue;
    out.push({
      problem: got
        ? `binding ${name} is a ${got}; the Worker needs a ${type}`
        : `binding ${name} (${type}) is missing; the Worker needs it`,
      fix: `Copy its block from the repository's wrangler.toml.`,
    });
  }
  const mine = migrationsOf(raw);
  reference.migrations.forEach((m, i) => {
    const have = mine[i];
    if (have?.tag === m.tag && have.body === m.body) return;
    out.push({
      problem: have
        ? `migration ${i + 1} is ${have.tag} ${have.body}; wrangler.toml has ${m.tag} ${m.body}`
        : `migration ${m.tag} (${m.body}) is missing`,
      fix: "Keep the [[migrations]] blocks identical to the repository's wrangler.toml, in the same order: wrangler deploy applies them to create the Durable Object classes.",
    });
  });
  return out;
}

function buildFindings(config: CheckedConfig, reference: BuildSettings): Finding[] {
  const mine = buildSettingsOf(config);
  const out: Finding[] = [];
  if (mine.minify !== reference.minify)
    out.push({
      problem: `minify is ${mine.minify}; wrangler.toml has minify = ${reference.minify}`,
      fix: `Set \`minify = ${reference.minify}\` with the top-level keys, above the first [table] header.`,
    });
  const relative = (target: string): string => {
    if (!path.isAbsolute(target)) return target;
    const rel = path.relative(config.dir, target);
    return rel.startsWith('.') ? rel : `./${rel}`;
  };
  for (const [name, target] of reference.alias) {
    const have = mine.alias.get(name);
    if (have === target) continue;
    out.push({
      problem: have
        ? `alias "${name}" points to ${relative(have)}; wrangler.toml points it to ${relative(target)}`
        : `alias "${name}" is missing, so the Worker would bundle ${name}, which it never runs`,
      fix: `Copy the [alias] table from the repository's wrangler.toml, with paths relative to this file: "${name}" = "${relative(target)}".`,
    });
  }
  for (const [name, target] of mine.alias) {
    if (reference.alias.has(name)) continue;
    out.push({
      problem: `alias "${name}" (to ${relative(target)}) is not in wrangler.toml, so the Worker deployed would not be the one tested`,
      fix: 'Remove it, or add it to wrangler.toml (and every deploy/*.toml) and run the tests.',
    });
  }
  return out;
}

export function buildSettingsOf({ raw, dir }: CheckedConfig): BuildSettings {
  const alias = new Map<string, string>();
  for (const [name, target] of Object.entries(asRecord(raw.alias) ?? {})) {
    if (typeof target !== 'string') continue; // wrangler reports it as an error
    // As wrangler reads it: a path is relative to the configuration's directory; else a package.
    const isPath = target.startsWith('.') || path.isAbsolute(target);
    alias.set(name, isPath ? path.resolve(dir, target) : target);
  }
  return { minify: raw.minify === true, alias };
}

function migrationFindings(raw: Record<string, unknown>): Finding[] {
  const created = new Set<string>();
  for (const m of asArray(raw.migrations)) {
    for (const key of ['new_sqlite_classes', 'new_classes'])
      for (const c of asStrings(m[key])) created.add(c);
    for (const r of asArray(m.renamed_classes)) if (typeof r.to === 'string') created.add(r.to);
  }
  const durable = asRecord(raw.durable_objects);
  return asArray(durable?.bindings)
    .map((b) => b.class_name)
    .filter((c): c is string => typeof c === 'string' && !created.has(c))
    .map((c) => ({
      problem: `Durable Object class ${c} has no migration creating it`,
      fix: `Add a [[migrations]] block with new_sqlite_classes = ["${c}"].`,
    }));
}

/** A deploy configuration must not carry a loopback-only setting or a secret in plain text. */
function deployVarFindings(raw: Record<string, unknown>): Finding[] {
  const vars = asRecord(raw.vars) ?? {};
  const out: Finding[] = [];
  for (const [name, value] of Object.entries(LOOPBACK_ONLY)) {
    if (String(vars[name] ?? '').trim() === value) {
      out.push({
        problem: `${name} = "${value}" serves loopback requests only`,
        fix: `Use IDP = "oidc" or "github" with AUTH_MODE = "oauth".`,
      });
    }
  }
  for (const [name, value] of Object.entries(vars)) {
    // The OTLP headers carry the collector's key.
    if (/SECRET|^OTEL_EXPORTER_OTLP_(TRACES_)?HEADERS$/.test(name) && String(value).trim() !== '') {
      out.push({
        problem: `${name} is in [vars], in plain text`,
        fix: `Remove it from the file and run \`wrangler secret put ${name} -c <this file>\`.`,
      });
    }
  }
  return out;
}

export function migrationsOf(raw: Record<string, unknown>): Migration[] {
  return asArray(raw.migrations).map((m) => {
    const { tag, ...rest } = m;
    const body = Object.keys(rest)
      .sort()
      .map((k) => `${k}=${JSON.stringify(rest[k])}`)
      .join(' ');
    return { tag: String(tag), body };
  });
}

function declaredBindings(raw: Record<string, unknown>): { name: string; at: string }[] {
  const out: { name: string; at: string }[] = [];
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${at}[${i}]`);
      return;
    }
    const record = asRecord(value);
    if (!record) return;
    const name =
      typeof record.binding === 'string'
        ? record.binding
        : typeof record.class_name === 'string' && typeof record.name === 'string'
          ? record.name
          : null;
    if (name) out.push({ name, at });
    for (const [key, child] of Object.entries(record)) {
      // [vars] values are data, not bindings; [env.*] is read only with --env.
      if (at === '' && (key === 'vars' || key === 'env')) continue;
      walk(child, at ? `${at}.${key}` : key);
    }
  };
  walk(raw, '');
  return out;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function asArray(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.map(asRecord).filter((v): v is Record<string, unknown> => v !== null)
    : [];
}
