// `npm run policy -- check <file>`: validates a policy file, printing every error with its JSON
// pointer. `npm run policy -- explain <file> '<call json>'`: prints the decision for a call and
// the rule that fires, without calling anything. The call is
// {"tool": "...", "args": {...}, "user"?: {"id", "email", "groups"}, "counters"?: {"<counter>": n}, "now"?: "<ISO time>"}.
// Rules behave as on the server: a `require` on a field the call leaves out fails, a `deny_if`
// on it fires only for neq, not_in and exists: false (see src/policy/conditions.ts); a policy
// without "default" denies unlisted tools (check warns).

import { readFileSync } from 'node:fs';
import type { Identity } from '../src/identity.ts';
import { policyView } from '../src/policy/view.ts';
import { describeIssues } from '../src/calls/issues.ts';
import { evaluatePolicy, readingKey } from '../src/policy/evaluate.ts';
import { formatErrors, loadPolicy } from '../src/policy/load.ts';
import { TOOL_CATALOG, TOOLS } from '../src/tools/index.ts';

function usage(): never {
  console.error(
    "usage: npm run policy -- check <policy.json>\n       npm run policy -- explain <policy.json> '<call json>'",
  );
  process.exit(2);
}

function load(file: string) {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (err) {
    console.error(`${file}: ${err instanceof Error ? err.message : 'cannot read'}`);
    process.exit(1);
  }
  const result = loadPolicy(document, TOOL_CATALOG);
  if (!result.ok) {
    console.error(
      `${file}: invalid policy (${result.errors.length} error${result.errors.length === 1 ? '' : 's'})\n${formatErrors(result.errors)}`,
    );
    process.exit(1);
  }
  for (const w of result.warnings) console.error(`${file}: warning: ${w.pointer}: ${w.message}`);
  return result.policy;
}

const [command, file, callText] = process.argv.slice(2);
if (!file || (command !== 'check' && command !== 'explain')) usage();
const policy = load(file);
if (command === 'check') {
  const tools = Object.keys(policy.doc.tools);
  console.log(
    `${file}: valid (default ${policy.doc.default}; rules for ${tools.length ? tools.join(', ') : 'no tool'})`,
  );
  process.exit(0);
}
if (!callText) usage();
const call = JSON.parse(callText) as {
  tool: string;
  args?: unknown;
  user?: { id?: string; email?: string; groups?: string[] };
  counters?: Record<string, number>;
  now?: string;
};
const tool = TOOLS.find((t) => t.name === call.tool);
const parsed = tool?.input.safeParse(call.args ?? {}, { reportInput: true });
if (tool && parsed && !parsed.success) {
  console.log(
    `invalid arguments (the tool refuses this call before policy):\n${describeIssues(parsed.error)
      .map((p) => `- ${p.field}: ${p.message}`)
      .join('\n')}`,
  );
  process.exit(1);
}
const identity: Identity = {
  userId: call.user?.id ?? 'anonymous',
  email: call.user?.email,
  groups: call.user?.groups ?? [],
  clientId: 'cli',
  grantId: 'cli',
};
const now = call.now ? Date.parse(call.now) : Date.now();
const view = { tool: call.tool, args: parsed?.success ? policyView(parsed.data) : {} };
// Counter readings by counter name: applied to every limit of that counter in this window.
const first = evaluatePolicy(policy, view, identity, null, now);
const readings = new Map<string, number>();
if (first.kind === 'allow') {
  for (const limit of first.limits)
    readings.set(readingKey(limit), call.counters?.[limit.counter] ?? 0);
}
const decision = evaluatePolicy(policy, view, identity, readings, now);
console.log(JSON.stringify(decision, null, 2));
if (decision.kind === 'allow' && decision.limits.some((l) => l.scope === 'session')) {
  console.log(
    'note: a session-scoped limit counts per MCP session for 2025 clients; a 2026-07-28 client has no session, so for it the limit counts per OAuth grant (never looser).',
  );
}
// The server fills some arguments in (e.g. the next free vmid) before its policy decides; this
// offline check cannot, so it says which rules saw them absent.
const given = (call.args ?? {}) as Record<string, unknown>;
for (const name of tool?.fills ?? []) {
  if (given[name] === undefined) {
    console.log(
      `note: without "${name}", the server fills it in (reading Proxmox) before the policy decides, and rules on args.${name} see that value; here they saw it left out (a require on it fails; a deny_if fires only for neq, not_in or exists: false). Give "${name}" to explain a particular value.`,
    );
  }
}
const inherits = Object.keys(tool?.inherits ?? {});
if (inherits.length) {
  console.log(
    `note: ${call.tool} takes ${inherits.join(', ')} from its source (where the call does not set them); the server reads them from Proxmox before the policy decides, and rules on args.<name> see those values; here they saw them missing. Give them as arguments to explain particular values.`,
  );
}
process.exit(decision.kind === 'allow' ? 0 : 3);
