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

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { SECRET_VARS } from './dev-stack.ts';
import { IS_WINDOWS } from './processes.ts';
import { SINGLE_CLUSTER_SETTINGS, WORKER_VARIABLES } from '../src/config/own-settings.ts';

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
}

/** The settings for the Worker, or an Error that says what in the file cannot be used. */
export function localSettings(env: NodeJS.ProcessEnv, root: string): LocalSettings {
  const { file, values, warnings } = readDevVars(env, root);
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
  const pve = setting('PVE_BASE_URL') ? pick(PROXMOX) : undefined;
  const vars = pick(OTHERS);
  vars.AUTH_MODE ??= 'oauth';
  if (vars.AUTH_MODE === 'oauth') vars.IDP ??= 'dev';
  return { file, fromFile: [...fromFile], pve, vars, warnings };
}

function readDevVars(
  env: NodeJS.ProcessEnv,
  root: string,
): { file: string | null; values: Record<string, string>; warnings: string[] } {
  // npm runs scripts in the package's directory; a relative DEV_VARS means where it was typed.
  const named = env.DEV_VARS ? path.resolve(env.INIT_CWD ?? process.cwd(), env.DEV_VARS) : null;
  const file = named ?? path.join(root, '.dev.vars');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!named && code === 'ENOENT') return { file: null, values: {}, warnings: [] };
    throw new Error(`DEV_VARS: cannot read ${file} (${code ?? String(err)})`);
  }
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(parseEnv(text)))
    if (value !== undefined) values[name] = value;
  const unknown = Object.keys(values).filter((name) => !WORKER_SETTINGS.includes(name));
  if (unknown.length) {
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
  const warnings: string[] = [];
  const secrets = WORKER_SETTINGS.filter((name) => name in values && SECRET_VARS.has(name));
  // Windows keeps who may read a file in its ACL, not in a mode: the mode there says nothing.
  if (secrets.length && !IS_WINDOWS && (statSync(file).mode & 0o077) !== 0)
    warnings.push(
      `${file} holds secrets (${secrets.join(', ')}) and other users can read it: chmod 600 it.`,
    );
  return { file, values, warnings };
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
