// Policy as code: `npm run policy -- push` and `replay` talk to a running server's policy API
// (/admin/api/policy), so a repository of policies can be checked, replayed and deployed by CI.
//
//   push <file> --url <server> [--activate | --shadow] [--force] --comment "..."
//     checks the file here first (as `check` does), reads which version is active, then stores
//     the file as a new version written against it (`base`): if someone activated another
//     version in the meantime (a rollback on /admin), the server refuses with 409 and nothing
//     changes; --force replaces whatever is active, and the change is recorded as forced.
//     --activate puts it in force at once, --shadow runs it beside the active one. Prints the
//     version.
//   replay <file> --url <server> [--since 7d] [--limit 1000] [--json] [--fail-on-change]
//     evaluates the file against the calls the server recorded and prints every call whose
//     decision would change, with totals; --json prints the API's answer as it is.
//
// The server's URL may come from MCP_URL instead of --url; the access token from PVE_MCP_TOKEN
// (an access token of that server's own sign-in holding `policy:edit`, whose person is a policy
// editor, for push; `policy:read` is enough for replay), sent as a bearer token. With
// AUTH_MODE=none (local) no token is needed.
// Exit statuses: 0 done, 1 an invalid policy (nothing stored), 2 a usage error, 3 --fail-on-change
// and some decision would change, 4 the server refused or could not be reached.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatErrors } from '../../src/policy/load.ts';
import { checkPolicyText } from '../../src/policy/text.ts';
import { TOOL_CATALOG } from '../../src/tools/index.ts';
import { rulesNoCallReaches } from '../../src/tools/policy-reach.ts';
import type { CliOutput } from './cli.ts';

export const REMOTE_USAGE = [
  'usage: npm run policy -- push <policy.json> --url <server> [--activate | --shadow] [--force] --comment "why"',
  '       npm run policy -- replay <policy.json> --url <server> [--since 7d] [--limit N] [--json] [--fail-on-change]',
  'The token comes from PVE_MCP_TOKEN; the URL may come from MCP_URL.',
].join('\n');

interface Change {
  request_id: string;
  ts: number;
  user: string;
  tool: string;
  /** Where the server reaches several clusters: the one the call was for. */
  cluster?: string;
  before: { decision: string; rule: string | null };
  after: { decision: string; rule: string | null; reason?: string; unknown?: string };
}

interface ReplayAnswer {
  since: number;
  truncated: boolean;
  calls: number;
  changed: Change[];
  totals: Record<string, unknown> & { by_change?: Record<string, number> };
}

export async function policyRemote(
  argv: string[],
  out: CliOutput,
  env: Record<string, string | undefined> = process.env,
  fetchFn: typeof fetch = fetch,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        comment: { type: 'string' },
        activate: { type: 'boolean' },
        shadow: { type: 'boolean' },
        force: { type: 'boolean' },
        since: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean' },
        'fail-on-change': { type: 'boolean' },
      },
    });
  } catch (err) {
    out.error(`${err instanceof Error ? err.message : 'bad arguments'}\n${REMOTE_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, file] = positionals;
  const url = (values.url ?? env.MCP_URL ?? '').replace(/\/+$/, '');
  if ((command !== 'push' && command !== 'replay') || !file || !url || positionals.length > 2) {
    out.error(REMOTE_USAGE);
    return 2;
  }
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    out.error(
      `--url must be the server's http(s) address, e.g. https://mcp.example.com\n${REMOTE_USAGE}`,
    );
    return 2;
  }
  if (command === 'push' && (!values.comment?.trim() || (values.activate && values.shadow))) {
    out.error(
      `push needs --comment "why", and at most one of --activate and --shadow.\n${REMOTE_USAGE}`,
    );
    return 2;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    out.error(`${file}: ${err instanceof Error ? err.message : 'cannot read'}`);
    return 1;
  }
  const checked = checkPolicyText(text, TOOL_CATALOG);
  // A push refuses, as `check` does, rules no call of their tool can reach; a replay replays them
  // as the server's would (a version another release stored may hold them).
  const problems = !checked.ok
    ? checked.errors
    : command === 'push'
      ? rulesNoCallReaches(checked.policy)
      : [];
  if (problems.length) {
    out.error(`${file}: invalid policy, nothing sent\n${formatErrors(problems)}`);
    return 1;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (env.PVE_MCP_TOKEN) headers.authorization = `Bearer ${env.PVE_MCP_TOKEN}`;
  // Without a token (AUTH_MODE=none, loopback only) a change must name the server's own origin,
  // as its own page would: the server refuses other pages' posts by their Origin.
  else headers.origin = new URL(url).origin;

  const send = async (
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown } | null> => {
    try {
      const res = await fetchFn(`${url}/admin/api/policy${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: 'manual',
      });
      const answer = (await res.json().catch(() => null)) as unknown;
      return { status: res.status, body: answer };
    } catch (err) {
      out.error(`${url}: ${err instanceof Error ? err.message : 'cannot connect'}`);
      return null;
    }
  };
  const refused = (answer: { status: number; body: unknown }): number => {
    const b = (answer.body ?? {}) as { message?: string; problems?: string[] };
    out.error(
      `${url}: HTTP ${answer.status}${b.message ? `: ${b.message}` : ''}${b.problems?.length ? `\n${b.problems.join('\n')}` : ''}`,
    );
    return answer.status === 400 && b.problems ? 1 : 4;
  };

  if (command === 'push') {
    // A commit message makes a fine comment; the server keeps at most 500 characters of one.
    const comment = values.comment!.trim();
    // The version in force now: the push is written against it, so that one activated in the
    // meantime (a rollback someone made on /admin) is not silently replaced.
    let base = 0;
    if (!values.force) {
      const current = await send('');
      if (!current) return 4;
      if (current.status !== 200) return refused(current);
      // 0: no version is active (the deployed policy was refused), and the push says it saw so.
      base = (current.body as { active: { version: number } | null }).active?.version ?? 0;
    }
    const answer = await send('', {
      policy: text,
      comment: comment.length > 500 ? `${comment.slice(0, 499)}…` : comment,
      ...(values.activate ? { activate: true } : {}),
      ...(values.shadow ? { shadow: true } : {}),
      ...(values.force ? { force: true } : { base }),
    });
    if (!answer) return 4;
    if (answer.status === 409 && !values.force) {
      refused(answer);
      out.error(
        'Nothing was changed. Compare with what is active now, then push again, or with --force to replace it (recorded as forced).',
      );
      return 4;
    }
    if (answer.status !== 201) return refused(answer);
    const { version } = answer.body as { version: number };
    const state = values.activate ? 'active' : values.shadow ? 'in shadow' : 'stored, not active';
    out.log(`${file}: version ${version} (${state}${values.force ? ', forced' : ''})`);
    return 0;
  }

  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !Number.isInteger(limit)) {
    out.error(`--limit must be a whole number\n${REMOTE_USAGE}`);
    return 2;
  }
  const answer = await send('/replay', {
    policy: text,
    ...(values.since ? { since: values.since } : {}),
    ...(limit !== undefined ? { limit } : {}),
  });
  if (!answer) return 4;
  if (answer.status !== 200) return refused(answer);
  const report = answer.body as ReplayAnswer;
  if (values.json) out.log(JSON.stringify(report, null, 2));
  else {
    for (const c of report.changed) out.log(changeLine(c));
    const by = Object.entries(report.totals.by_change ?? {})
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    out.log(
      `${file}: ${report.changed.length} of ${report.calls} recorded calls since ${new Date(report.since).toISOString()} would be decided otherwise${by ? ` (${by})` : ''}${report.truncated ? '; only the newest calls up to the limit were replayed' : ''}`,
    );
  }
  return values['fail-on-change'] && report.changed.length > 0 ? 3 : 0;
}

function changeLine(c: Change): string {
  const rule = (r: string | null | undefined): string => (r ? ` (${r})` : '');
  const unknown = c.after.unknown ? ` [depends on ${c.after.unknown}]` : '';
  return `${new Date(c.ts).toISOString()}  ${c.request_id}  ${c.user}  ${c.tool}${c.cluster ? ` on ${c.cluster}` : ''}  ${c.before.decision}${rule(c.before.rule)} -> ${c.after.decision}${rule(c.after.rule)}${unknown}`;
}
