// The policy checker behind `npm run policy` (../policy.ts), as a function of its arguments: it
// writes its lines to `out` and answers the exit status, so its tests run it in-process.
// `check <file>` validates a policy file, printing every error with its JSON pointer.
// `explain <file> '<call json>'` prints the decision for a call and the rule that fires, without
// calling anything. The call is {"tool", "args"?, "user"?: {"id", "email", "groups", "scopes"},
// "counters"?: {"<counter>": n}, "now"?: "<ISO time>"}. Rules behave as on the server: a
// `require` on a field the call leaves out fails, a `deny_if` on it fires only for neq, not_in
// and exists: false (see src/policy/conditions.ts); a policy without "default" denies unlisted
// tools (check warns).
// Exit statuses: 0 valid / allowed, 1 an invalid or unreadable policy or refused arguments,
// 2 a usage error, 3 a call the policy refuses.

import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { own } from '../../src/core/own.ts';
import { judgedTags } from '../../src/proxmox/formats.ts';
import { describeIssues } from '../../src/calls/issues.ts';
import type { Identity } from '../../src/core/identity.ts';
import type { CallTarget } from '../../src/calls/tool-spec.ts';
import { type CallView, TARGET_FIELDS, Unread } from '../../src/policy/conditions.ts';
import {
  decidesWithoutTarget,
  evaluatePolicy,
  readingKey,
  targetFactsReached,
} from '../../src/policy/evaluate.ts';
import { type CompiledPolicy, formatErrors } from '../../src/policy/load.ts';
import { checkPolicyText } from '../../src/policy/text.ts';
import { policyView } from '../../src/policy/view.ts';
import { SCOPES } from '../../src/core/scopes.ts';
import { TOOL_CATALOG, TOOLS } from '../../src/tools/index.ts';
import { rulesNoCallReaches } from '../../src/tools/policy-reach.ts';

/** Where the checker writes: its report, and its errors and warnings. */
export interface CliOutput {
  log(line: string): void;
  error(line: string): void;
}

const USAGE = [
  'usage: npm run policy -- check <policy.json>',
  "       npm run policy -- explain <policy.json> '<call json>'",
  '       npm run policy -- push <policy.json> --url <server> [--activate | --shadow] --comment "why"',
  '       npm run policy -- replay <policy.json> --url <server> [--since 7d] [--limit N] [--json] [--fail-on-change]',
].join('\n');

/** Thrown to end a run with an exit status, its message already written. */
class Exit {
  constructor(readonly status: number) {}
}

interface CallJson {
  tool: string;
  args?: unknown;
  user?: { id?: string; email?: string; groups?: string[]; scopes?: string[] };
  counters?: Record<string, number>;
  now?: string;
  /** The facts of the guest the call acts on, for target.* rules (the server reads them). */
  target?: Record<string, unknown>;
  /** What a clone takes from its source, for args.* and new.* rules (the server reads it). */
  inherited?: Record<string, unknown>;
}

/** Runs `check` or `explain` with `argv` (the arguments after the script); answers the exit status. */
export function policyCli(argv: string[], out: CliOutput): number {
  try {
    return run(argv, out);
  } catch (err) {
    if (err instanceof Exit) return err.status;
    throw err;
  }
}

function run(argv: string[], out: CliOutput): number {
  const [command, file, callText] = argv;
  if (!file || (command !== 'check' && command !== 'explain')) return usage(out);
  const policy = load(file, out);
  if (command === 'check') {
    const aimless = rulesNoCallReaches(policy);
    if (aimless.length) {
      out.log(`${file}: invalid`);
      for (const { pointer, message } of aimless) out.log(`- ${pointer}: ${message}`);
      return 1;
    }
    const tools = Object.keys(policy.doc.tools);
    out.log(
      `${file}: valid (default ${policy.doc.default}; rules for ${tools.length ? tools.join(', ') : 'no tool'})`,
    );
    return 0;
  }
  if (!callText) return usage(out);
  const call = parseCall(callText, out);
  const tool = TOOLS.find((t) => t.name === call.tool);
  const parsed = tool?.input.safeParse(call.args ?? {}, { reportInput: true });
  if (tool && parsed && !parsed.success) {
    out.log(
      `invalid arguments (the tool refuses this call before policy):\n${describeIssues(parsed.error)
        .map((p) => `- ${p.field}: ${p.message}`)
        .join('\n')}`,
    );
    return 1;
  }
  const identity: Identity = {
    userId: call.user?.id ?? 'anonymous',
    email: call.user?.email,
    groups: call.user?.groups ?? [],
    clientId: 'cli',
    grantId: 'cli',
    // A token's scopes matter only to `scope:` principals: every scope unless the call says.
    scopes: call.user?.scopes ?? SCOPES,
  };
  const now = call.now ? Date.parse(call.now) : Date.now();
  const notes: string[] = [];
  const args = parsed?.success ? (parsed.data as Record<string, unknown>) : undefined;
  const aimed = args && tool?.target ? tool.target(args) : null;
  const { given: took, made: inherited } = inheritedOf(tool, call, out);
  const judged = {
    tool: call.tool,
    // What it takes from its source under its own arguments, as the server's policy sees them.
    args: args ? policyView({ ...took, ...args }) : {},
    ...(aimed?.vmid !== undefined ? { guest: aimed.vmid } : {}),
    // A clone's new guest (new.*) as its arguments and what it takes from its source make it.
    ...(args && tool?.makes ? { made: tool.makes(args, inherited) ?? undefined } : {}),
  };
  const dryRun = (args && tool?.dryRun?.(args)) ?? false;
  const asServer = { policy, identity, now, dryRun };
  const view = { ...judged, target: explainTarget(asServer, judged, call, aimed, notes, out) };
  // Counter readings by counter name: applied to every limit of that counter in this window.
  const first = evaluatePolicy(policy, view, identity, null, now);
  const readings = new Map<string, number>();
  if (first.kind === 'allow') {
    for (const limit of first.limits)
      readings.set(readingKey(limit), call.counters?.[limit.counter] ?? 0);
  }
  const decision = evaluatePolicy(policy, view, identity, readings, now);
  out.log(JSON.stringify(decision, null, 2));
  for (const note of notes) out.log(note);
  if (decision.kind === 'allow' && decision.limits.some((l) => l.scope === 'session')) {
    out.log(
      'note: a session-scoped limit counts per MCP session for 2025 clients; a 2026-07-28 client has no session, so for it the limit counts per OAuth grant (never looser).',
    );
  }
  // The server fills some arguments in (e.g. the next free vmid) before its policy decides; this
  // offline check cannot, so it says which rules saw them absent.
  const given = (call.args ?? {}) as Record<string, unknown>;
  for (const name of tool?.fills ?? []) {
    if (given[name] === undefined) {
      out.log(
        `note: without "${name}", the server fills it in (reading Proxmox) before the policy decides, and rules on args.${name} see that value; here they saw it left out (a require on it fails; a deny_if fires only for neq, not_in or exists: false). Give "${name}" to explain a particular value.`,
      );
    }
  }
  // What the call takes from its source and neither sets itself nor was given here.
  const untold = Object.keys(tool?.inherits ?? {}).filter(
    (name) => !(name in took) && args?.[name] === undefined,
  );
  if (untold.length) {
    out.log(
      `note: ${call.tool} takes ${untold.join(', ')} from its source (where the call does not set them); the server reads them from Proxmox before the policy decides, and rules on args.<name> see those values, as new.* rules see the new guest's tags and name; here rules on args.<name> saw them missing, and new.tags or a new.name taken from them was unread. Give them under "inherited" (e.g. {"inherited":{"tags":["prod"],"memory":4096}}) to explain particular values.`,
    );
  }
  return decision.kind === 'allow' ? 0 : 3;
}

/** What the server judges a call with, besides the call. */
interface ServerView {
  policy: CompiledPolicy;
  identity: Identity;
  now: number;
  dryRun: boolean;
}

/**
 * The facts a target.* rule judges: a create's own (its arguments), those the call gives under
 * "target", or, for a guest the server would read them of, none known here (refused as unread,
 * as a live call is when Proxmox does not answer), with a note.
 */
function explainTarget(
  { policy, identity, now, dryRun }: ServerView,
  judged: Omit<CallView, 'target'>,
  call: CallJson,
  aimed: CallTarget | null,
  notes: string[],
  out: CliOutput,
): Readonly<Record<string, unknown>> | undefined {
  if (!aimed) return undefined;
  if ('made' in aimed) return aimed.made;
  const given = call.target;
  if (given !== undefined) {
    const unknown = Object.keys(given ?? {}).filter((fact) => !TARGET_FIELDS.includes(fact));
    if (typeof given !== 'object' || given === null || unknown.length) {
      out.error(`"target" is an object of the guest's facts: ${TARGET_FIELDS.join(', ')}`);
      throw new Exit(2);
    }
    return given;
  }
  // As the server: nothing is read for a call decided without its guest, or by no rule on it.
  const wanted = [...targetFactsReached(policy, call.tool, identity, judged.args)];
  if (!wanted.length || decidesWithoutTarget(policy, judged, identity, now, dryRun))
    return undefined;
  notes.push(
    `note: rules on ${wanted.map((f) => `target.${f}`).join(', ')} judge the guest's facts, which the server reads from Proxmox before it decides; here they were not known. Give them under "target" (e.g. {"target":{"tags":["prod"]}}) to explain particular facts.`,
  );
  return Object.fromEntries(wanted.map((fact) => [fact, new Unread('not given to explain')]));
}

/**
 * What the call takes from its source, as given to explain (only names the tool takes), read as
 * the server keeps it: a property string (net0) parsed by the argument's schema, tags lower-case
 * and sorted. `made`: for the guest it makes (new.*), each name not given unread (the server
 * reads it from Proxmox; this offline check cannot).
 */
function inheritedOf(
  tool: (typeof TOOLS)[number] | undefined,
  call: CallJson,
  out: CliOutput,
): { given: Record<string, unknown>; made: Record<string, unknown> } {
  const inherits = tool?.inherits ?? {};
  const names = Object.keys(inherits);
  const raw: unknown = call.inherited === undefined ? {} : call.inherited;
  const refuse = (why: string): never => {
    out.error(`"inherited" ${why}`);
    throw new Exit(2);
  };
  const shape = `is an object of what ${call.tool} takes from its source: ${names.join(', ') || 'nothing'}`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) refuse(shape);
  const given: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!names.includes(name)) refuse(shape);
    const schema = own(inherits, name) && tool?.input.shape[name];
    if (schema) {
      const parsed = (schema as z.ZodType).safeParse(value);
      if (!parsed.success) refuse(`.${name}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      given[name] = parsed.data;
    } else if (name === 'tags') {
      if (!Array.isArray(value) || value.some((t) => typeof t !== 'string'))
        refuse('.tags is a list of tags, e.g. ["prod"]');
      given[name] = judgedTags((value as string[]).join(';'));
    } else given[name] = value;
  }
  const unread = new Unread('not given to explain');
  return {
    given,
    made: Object.fromEntries(names.map((name) => [name, name in given ? given[name] : unread])),
  };
}

/** The names PVE_CLUSTERS gives its clusters, or undefined without it (or when it cannot be read). */
function clusterNames(text: string | undefined): string[] | undefined {
  if (!text?.trim()) return undefined;
  try {
    const list = JSON.parse(text) as unknown;
    if (!Array.isArray(list)) return undefined;
    return list.flatMap((c: unknown) => {
      const name = (c as { name?: unknown } | null)?.name;
      return typeof name === 'string' ? [name] : [];
    });
  } catch {
    return undefined;
  }
}

function usage(out: CliOutput): never {
  out.error(USAGE);
  throw new Exit(2);
}

function load(file: string, out: CliOutput): CompiledPolicy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    out.error(`${file}: ${err instanceof Error ? err.message : 'cannot read'}`);
    throw new Exit(1);
  }
  // The same checks the server's policy store makes before it stores a version; with the
  // clusters of PVE_CLUSTERS in the environment, a rule naming none of them is a warning.
  const result = checkPolicyText(text, TOOL_CATALOG, clusterNames(process.env.PVE_CLUSTERS));
  const whole = !result.ok && result.errors.length === 1 && result.errors[0]!.pointer === '';
  if (whole) {
    // Not JSON, or too large: one line about the whole file.
    out.error(`${file}: ${result.errors[0]!.message}`);
    throw new Exit(1);
  }
  if (!result.ok) {
    out.error(
      `${file}: invalid policy (${result.errors.length} error${result.errors.length === 1 ? '' : 's'})\n${formatErrors(result.errors)}`,
    );
    throw new Exit(1);
  }
  for (const w of result.warnings) out.error(`${file}: warning: ${w.pointer}: ${w.message}`);
  return result.policy;
}

/** The call to explain; a call that is not a JSON object is a usage error. */
function parseCall(text: string, out: CliOutput): CallJson {
  let call: unknown;
  try {
    call = JSON.parse(text);
  } catch (err) {
    out.error(`the call is not JSON: ${err instanceof Error ? err.message : 'cannot parse'}`);
    throw new Exit(2);
  }
  if (typeof call !== 'object' || call === null || typeof (call as CallJson).tool !== 'string') {
    out.error('the call must be a JSON object with a "tool" name, e.g. {"tool":"pve_list_vms"}');
    throw new Exit(2);
  }
  return call as CallJson;
}
