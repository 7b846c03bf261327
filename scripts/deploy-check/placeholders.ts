// What a copy of a template still leaves to fill in: `<...>` placeholders and example hosts
// (example.com, .net and .org, and names under them), each by its line and the key that holds it.
// A configuration to deploy holds none. A shipped template (deploy/*.toml in the repository) holds
// them only in the keys docs/deploy.md says to fill in (TEMPLATE_KEYS): anywhere else, a reader
// would not know that it is theirs to change. Pure: the file's text in, findings out.

import type { Finding } from './rules.ts';

/** One value left to fill in. */
export interface Placeholder {
  /** 1-based. */
  line: number;
  /** Where, as wrangler reads it: `vars.PUBLIC_URL`, `kv_namespaces.id`, `routes`. */
  key: string;
  /** The placeholder or the example host, as written. */
  text: string;
  kind: 'placeholder' | 'example host';
}

/** The configurations the repository ships under deploy/: checked as templates, not as ready. */
export const SHIPPED_TEMPLATES: ReadonlySet<string> = new Set([
  'access-hostname.toml',
  'github.toml',
  'oidc.toml',
  'two-clusters.toml',
  'workers-vpc.toml',
]);

/** The keys docs/deploy.md tells a reader to fill in: the shipped templates hold placeholders there only. */
export const TEMPLATE_KEYS: ReadonlySet<string> = new Set([
  'routes',
  'vpc_services',
  'vars.PUBLIC_URL',
  'vars.PVE_BASE_URL',
  'vars.PVE_CLUSTERS',
  'vars.CF_ACCESS_CLIENT_ID',
  'vars.OIDC_ISSUER',
  'vars.OIDC_CLIENT_ID',
  'vars.GITHUB_CLIENT_ID',
  'kv_namespaces.id',
]);

const PLACEHOLDER = /<[^<>"'\n]{1,80}>/g;
const EXAMPLE_HOST = /\b(?:[a-z0-9-]+\.)*example\.(?:com|net|org)\b/gi;

/** Every placeholder and example host outside comments, in file order. */
export function placeholdersIn(text: string): Placeholder[] {
  const out: Placeholder[] = [];
  let table = '';
  // A value written over several lines (a multi-line string, an array): its key, and what is
  // still open at the end of the line before.
  let open: { key: string; state: Open } | null = null;
  for (const [i, whole] of text.split(/\r?\n/).entries()) {
    let key: string;
    let line: string;
    if (open) {
      key = open.key;
      const state = scan(whole, open.state);
      line = state.code;
      open = state.depth > 0 || state.multiline ? { key, state } : null;
    } else {
      line = withoutComment(whole);
      const header = /^\s*\[\[?\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*$/.exec(line);
      if (header) {
        table = header[1]!;
        continue;
      }
      const assigned = /^\s*"?([A-Za-z0-9_.-]+)"?\s*=/.exec(line)?.[1];
      key = assigned ? (table ? `${table}.${assigned}` : assigned) : table || '(top level)';
      if (assigned) {
        const state = scan(whole.slice(whole.indexOf('=') + 1), {
          depth: 0,
          multiline: null,
          code: '',
        });
        if (state.depth > 0 || state.multiline) open = { key, state };
      }
    }
    const found = [
      ...[...line.matchAll(PLACEHOLDER)].map((m) => ({
        at: m.index,
        text: m[0],
        kind: 'placeholder' as const,
      })),
      ...[...line.matchAll(EXAMPLE_HOST)].map((m) => ({
        at: m.index,
        text: m[0],
        kind: 'example host' as const,
      })),
    ].sort((a, b) => a.at - b.at);
    for (const f of found) out.push({ line: i + 1, key, text: f.text, kind: f.kind });
  }
  return out;
}

/**
 * For a configuration to deploy: one finding per value left to fill in. For a shipped template
 * (`template`): one per placeholder in a key the guide does not say to fill in.
 */
export function placeholderFindings(text: string, template: boolean): Finding[] {
  return placeholdersIn(text)
    .filter((p) => !template || !TEMPLATE_KEYS.has(p.key))
    .map((p) =>
      template
        ? {
            problem: `line ${p.line}: ${p.key} holds ${p.text}, which the deploy guide does not say to fill in`,
            fix: `Give ${p.key} a working value, or name it among the values to fill in (docs/deploy.md and TEMPLATE_KEYS in scripts/deploy-check/placeholders.ts).`,
          }
        : {
            problem: `line ${p.line}: ${p.key} still holds ${p.kind === 'placeholder' ? 'the placeholder' : 'the example host'} ${p.text}`,
            fix:
              p.kind === 'placeholder'
                ? 'Fill in your own value (docs/deploy.md says where each comes from); nothing is ready while a <...> is left.'
                : 'Use your own hostname: tokens, redirects and Proxmox requests go to exactly this name.',
          },
    );
}

/** What is open after a line of a value: brackets, a multi-line string (its quotes). */
interface Open {
  depth: number;
  multiline: "'''" | '"""' | null;
  /** The line without its comment. */
  code: string;
}

/** Reads one line of a value from the state `before` leaves: brackets and multi-line strings. */
function scan(line: string, before: Open): Open {
  let { depth, multiline } = before;
  let quote: '"' | "'" | null = null;
  let code = line;
  for (let i = 0; i < line.length; i++) {
    if (multiline) {
      if (line.startsWith(multiline, i)) {
        i += 2;
        multiline = null;
      }
      continue;
    }
    const c = line[i];
    if (quote === '"' && c === '\\') i++;
    else if (quote && c === quote) quote = null;
    else if (!quote && (line.startsWith("'''", i) || line.startsWith('"""', i))) {
      multiline = line.slice(i, i + 3) as Open['multiline'];
      i += 2;
    } else if (!quote && (c === '"' || c === "'")) quote = c;
    else if (!quote && c === '[') depth++;
    else if (!quote && c === ']') depth--;
    else if (!quote && c === '#') {
      code = line.slice(0, i);
      break;
    }
  }
  return { depth, multiline, code };
}

/** The line up to a `#` that is not inside a string (TOML's basic and literal strings). */
function withoutComment(line: string): string {
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === '"' && c === '\\') i++;
    else if (quote && c === quote) quote = null;
    else if (!quote && (c === '"' || c === "'")) quote = c;
    else if (!quote && c === '#') return line.slice(0, i);
  }
  return line;
}
