// The settings `npm start` hands the Worker: every setting the Worker reads (src/env.ts), taken
// from npm start's environment first, then from a `.dev.vars` file in the checkout (KEY=VALUE
// lines read with Node's own .env parser: quotes as wrangler's, but no `$NAME` expansion;
// DEV_VARS=<file> names another). wrangler dev itself reads
// .dev.vars only when it is given no --env-file, and npm start always gives one (the secrets'
// private file), so the file is read here and each value sent once, by the name's own route:
// secrets into the private file, the rest as --var (dev-stack.ts).
//
// A name in the file that the Worker does not read stops the start, saying which (a misspelt
// ADMIN_USER would otherwise leave the admin page closed with no word why); so does a DEV_VARS
// file that is missing. Values are never printed, only the names taken from the file.
//
// With PVE_CLUSTERS, every cluster without base_url or vpc_service is one npm start simulates
// (its own tenant of the one simulator: the first the full seed, the others a smaller site with
// other nodes and guests, and a VM 100 of its own); the others are real. The variables they, and
// PVE_IDENTITIES' people, name for secrets are read like any other setting (and are secrets:
// never on a command line).

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { type LocalClusters, SECRET_VARS, simulatedSecretVar } from './dev-stack.ts';
import { IS_WINDOWS } from './processes.ts';
import {
  LOOKS_LIKE_A_SECRET,
  SECRET_KEYS,
  SINGLE_CLUSTER_SETTINGS,
  VAR_NAME_RE,
  WORKER_VARIABLES,
} from '../src/config/own-settings.ts';
import { CLUSTER_NAME_RE } from '../src/core/default-cluster.ts';

/** How to reach a real Proxmox (only with PVE_BASE_URL; otherwise the simulator's are used). */
const PROXMOX = SINGLE_CLUSTER_SETTINGS;

/** Every other text setting of the Worker (test/scripts/start-dev-vars.node.test.ts checks). */
const OTHERS = WORKER_VARIABLES.filter((name) => !(PROXMOX as readonly string[]).includes(name));

export const WORKER_SETTINGS: readonly string[] = [...PROXMOX, ...OTHERS];

export interface LocalSettings {
  /** The .dev.vars file read, if one was. */
  file: string | null;
  /** The names whose value came from that file (the environment's win). */
  fromFile: string[];
  /** A real Proxmox's settings, when PVE_BASE_URL is set; the simulator is used otherwise. */
  pve: Record<string, string> | undefined;
  /** Everything else for the Worker, with npm start's defaults (AUTH_MODE=oauth, IDP=dev). */
  vars: Record<string, string>;
  /** Things to tell the operator (never a value). */
  warnings: string[];
  /** PVE_CLUSTERS as npm start reads it, when it is set. */
  clusters: LocalClusters | undefined;
  /** The variables PVE_CLUSTERS and PVE_IDENTITIES name for secrets (their values in `vars`). */
  secretVars: string[];
}

/** The settings for the Worker, or an Error that says what in the file cannot be used. */
export function localSettings(env: NodeJS.ProcessEnv, root: string): LocalSettings {
  const { file, values } = readDevVars(env, root);
  const fromFile = new Set<string>();
  const setting = (name: string): string | undefined => {
    if (env[name]) return env[name];
    if (values[name]) {
      fromFile.add(name);
      return values[name];
    }
    return undefined;
  };
  const pick = (names: readonly string[]): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const name of names) {
      const value = setting(name);
      if (value !== undefined) out[name] = value;
    }
    return out;
  };
  const clusters = localClusters(env.PVE_CLUSTERS || values.PVE_CLUSTERS);
  const people = identityVars(env.PVE_IDENTITIES || values.PVE_IDENTITIES);
  const named = clusters?.secretVars ?? [];
  // Every variable a setting names for a secret: read like the others, handed over as secrets.
  const secretVars = [...new Set([...named, ...people])];
  if (file) checkNames(file, Object.keys(values), secretVars);
  const warnings = file ? readableSecrets(file, Object.keys(values), secretVars) : [];
  // (Proxmox first: the names taken from the file are told in WORKER_SETTINGS' order.)
  const pve = !clusters && setting('PVE_BASE_URL') ? pick(PROXMOX) : undefined;
  const vars = pick(OTHERS);
  if (clusters) {
    const beside = PROXMOX.filter((name) => !named.includes(name) && setting(name));
    if (beside.length)
      throw new Error(
        `set PVE_CLUSTERS or the single-cluster settings, not both: remove ${beside.join(', ')} (each cluster of PVE_CLUSTERS names its own URL, token and secrets)`,
      );
  }
  for (const name of secretVars) {
    const value = setting(name);
    if (value === undefined)
      throw new Error(
        `${named.includes(name) ? 'PVE_CLUSTERS' : 'PVE_IDENTITIES'} names ${name} for a secret, and neither the environment nor ${file ?? '.dev.vars'} sets it`,
      );
    vars[name] = value;
  }
  vars.AUTH_MODE ??= 'oauth';
  if (vars.AUTH_MODE === 'oauth') vars.IDP ??= 'dev';
  return { file, fromFile: [...fromFile], pve, vars, warnings, clusters, secretVars };
}

/**
 * The variables PVE_IDENTITIES names for tokens' secrets (a list, or lists by cluster), or an
 * Error where one would be echoed or put on a command line (the Worker checks the rest).
 */
export function identityVars(text: string | undefined): string[] {
  if (!text?.trim()) return [];
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Error('PVE_IDENTITIES is not JSON: a list of { match, token_id, token_secret_var }');
  }
  const lists = Array.isArray(document)
    ? [['PVE_IDENTITIES', document]]
    : document && typeof document === 'object'
      ? Object.entries(document).map(([cluster, list]) => [
          `PVE_IDENTITIES.${cluster.slice(0, 24)}`,
          list,
        ])
      : [];
  return (lists as [string, unknown][]).flatMap(([where, list]) =>
    (Array.isArray(list) ? list : []).flatMap((entry: unknown, i) => {
      if (!entry || typeof entry !== 'object') return [];
      const record = entry as Record<string, unknown>;
      secretsKeptOut(record, `${where}[${i}]`);
      return typeof record.token_secret_var === 'string' ? [record.token_secret_var] : [];
    }),
  );
}

/**
 * Stops at a secret written in an entry (it would reach wrangler's command line in PVE_CLUSTERS)
 * or pasted where a variable's name goes (it would be echoed), never saying the value.
 */
function secretsKeptOut(entry: Record<string, unknown>, where: string): void {
  const setting = where.split(/[.[]/)[0];
  for (const key of SECRET_KEYS)
    if (key in entry)
      throw new Error(
        `${where}.${key}: a secret is never written in ${setting}; put it in a variable and name that in ${key}_var`,
      );
  for (const key of ['token_secret_var', 'access_secret_var']) {
    const name = entry[key];
    if (name === undefined) continue;
    if (typeof name !== 'string' || LOOKS_LIKE_A_SECRET.test(name) || !VAR_NAME_RE.test(name))
      throw new Error(
        `${where}.${key} must be the name of the variable holding the secret (like PROD_TOKEN_SECRET), not the secret`,
      );
  }
}

/**
 * PVE_CLUSTERS' entries, which npm start simulates and the secrets the others name, or an Error
 * for a value npm start cannot use (the Worker checks the rest, and /health says it).
 */
export function localClusters(text: string | undefined): LocalClusters | undefined {
  if (!text?.trim()) return undefined;
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Error('PVE_CLUSTERS is not JSON: it must be a list of clusters, [{ "name": ... }]');
  }
  const isEntry = (e: unknown): e is Record<string, unknown> =>
    typeof e === 'object' &&
    e !== null &&
    !Array.isArray(e) &&
    typeof (e as Record<string, unknown>).name === 'string';
  if (!Array.isArray(document) || document.length === 0 || !document.every(isEntry))
    throw new Error(
      'PVE_CLUSTERS must be a non-empty list of clusters, each with a name: [{ "name": "lab" }, ...]',
    );
  const simulated: string[] = [];
  const secretVars: string[] = [];
  document.forEach((entry, i) => {
    secretsKeptOut(entry, `PVE_CLUSTERS[${i}]`);
    // Names go into the simulator's URLs and variable names: the Worker's own check, first.
    if (!CLUSTER_NAME_RE.test(String(entry.name)))
      throw new Error(
        `PVE_CLUSTERS[${i}].name must be a short slug: a-z first, then a-z, 0-9 or "-", 24 at most`,
      );
    if (entry.base_url === undefined && entry.vpc_service === undefined) {
      const given = [
        'token_id',
        'token_secret_var',
        'access_client_id',
        'access_secret_var',
      ].filter((key) => key in entry);
      if (given.length)
        throw new Error(
          `PVE_CLUSTERS[${i}] ("${String(entry.name).slice(0, 24)}") has no base_url or vpc_service, so npm start simulates it with the simulator's own token: remove ${given.join(', ')}, or give the address of a real cluster`,
        );
      simulated.push(String(entry.name));
    } else
      for (const key of ['token_secret_var', 'access_secret_var'])
        if (typeof entry[key] === 'string' && !secretVars.includes(entry[key]))
          secretVars.push(entry[key]);
  });
  for (const name of simulated)
    if (secretVars.includes(simulatedSecretVar(name)))
      throw new Error(
        `PVE_CLUSTERS: ${simulatedSecretVar(name)} holds the simulated cluster ${name}'s token here; name another variable for a real cluster's secret`,
      );
  return { entries: document, simulated, secretVars };
}

function readDevVars(
  env: NodeJS.ProcessEnv,
  root: string,
): { file: string | null; values: Record<string, string> } {
  // npm runs scripts in the package's directory; a relative DEV_VARS means where it was typed.
  const named = env.DEV_VARS ? path.resolve(env.INIT_CWD ?? process.cwd(), env.DEV_VARS) : null;
  const file = named ?? path.join(root, '.dev.vars');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!named && code === 'ENOENT') return { file: null, values: {} };
    throw new Error(`DEV_VARS: cannot read ${file} (${code ?? String(err)})`);
  }
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(parseEnv(text)))
    if (value !== undefined) values[name] = value;
  return { file, values };
}

/** Stops at a name in the file that the Worker does not read (nor PVE_CLUSTERS names). */
function checkNames(file: string, names: string[], clusterSecrets: readonly string[]): void {
  const unknown = names.filter(
    (name) => !WORKER_SETTINGS.includes(name) && !clusterSecrets.includes(name),
  );
  if (!unknown.length) return;
  const lines = unknown.map((name) => {
    const near = nearest(name);
    const own = ['PORT', 'SIM_PORT', 'PERSIST_TO', 'DEV_VARS'].includes(name);
    return `  - ${name}${own ? ": npm start's own setting, given in its environment" : near ? ` (did you mean ${near}?)` : ''}`;
  });
  throw new Error(
    [
      `${file} names settings the Worker does not read (docs/configuration.md lists them):`,
      ...lines,
    ].join('\n'),
  );
}

/** A warning when the file holds secrets and others may read it. */
function readableSecrets(
  file: string,
  names: string[],
  clusterSecrets: readonly string[],
): string[] {
  const secrets = [...WORKER_SETTINGS, ...clusterSecrets].filter(
    (name) => names.includes(name) && (SECRET_VARS.has(name) || clusterSecrets.includes(name)),
  );
  // Windows keeps who may read a file in its ACL, not in a mode: the mode there says nothing.
  if (!secrets.length || IS_WINDOWS || (statSync(file).mode & 0o077) === 0) return [];
  return [
    `${file} holds secrets (${secrets.join(', ')}) and other users can read it: chmod 600 it.`,
  ];
}

/** The setting one or two edits away from `name`, if exactly one is. */
function nearest(name: string): string | undefined {
  const close = WORKER_SETTINGS.filter((known) => distance(known, name) <= 2);
  return close.length === 1 ? close[0] : undefined;
}

/** Levenshtein distance (short names: the plain table is enough). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(
        row[j]! + 1,
        next[j - 1]! + 1,
        row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[b.length]!;
}
