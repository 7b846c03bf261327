// A large, valid policy as a big site's grows (for the console's bench and its tests): reads
// allowed, power actions limited per person, and per team, on each power tool, a deny_if naming
// the guests the team may not touch and its members, pretty-printed (2-space JSON, as the API
// stores an object). Its own base, not policy.json, so that its size does not move with the
// shipped policy's. Pure. Also the console's view of two such versions, as its route builds it.

import type { PolicyVersion } from '../src/policy-store/types.ts';

const POWER = { counter: 'power_actions', window: 'hour', max: 60, scope: 'user' };

const BASE = {
  version: '1',
  description: 'A large site: every team may act on its own guests only.',
  default: 'deny',
  tools: {
    pve_list_nodes: {},
    pve_list_vms: {},
    pve_get_vm_status: {},
    pve_get_vm_config: {},
    pve_list_snapshots: {},
    pve_get_task_status: {},
    pve_start_vm: { limits: [POWER] },
    pve_shutdown_vm: { limits: [POWER] },
    pve_reboot_vm: { limits: [POWER] },
    pve_stop_vm: { action: 'require_approval', reason: "A hard stop needs a person's approval." },
    pve_create_snapshot: {
      limits: [{ counter: 'snapshots', window: 'hour', max: 30, scope: 'user' }],
    },
    pve_delete_vm: {
      action: 'require_approval',
      reason: "Destroying a guest needs a person's approval.",
    },
  },
};

/** Tools that take a vmid, which the generated rules fence off per team. */
const FENCED = [
  'pve_start_vm',
  'pve_shutdown_vm',
  'pve_reboot_vm',
  'pve_stop_vm',
  'pve_create_snapshot',
  'pve_delete_vm',
];

/**
 * The shipped policy grown to exactly `lines` lines. Two seeds give two texts whose rules name no
 * guest, person or team in common: only the JSON's structure lines are alike.
 */
export function largePolicy(lines: number, seed = 0): string {
  const policy = structuredClone(BASE) as { tools: Record<string, { deny_if?: unknown[] }> };
  const base = seed * 100_000;
  let guests: number[] = [];
  let text = JSON.stringify(policy, null, 2);
  for (let team = 0; ; team++) {
    const tool = policy.tools[FENCED[team % FENCED.length]!]!;
    tool.deny_if ??= [];
    const rules = tool.deny_if;
    const value = Array.from({ length: 24 }, (_, i) => base + 1000 + team * 24 + i);
    rules.push({
      path: 'args.vmid',
      op: 'in',
      value,
      principals: Array.from({ length: 4 }, (_, i) => `t${seed}-${team}-${i}@ex.org`),
      reason: `Team ${seed}-${team} runs other guests.`,
    });
    const next = JSON.stringify(policy, null, 2);
    if (next.split('\n').length > lines) {
      rules.pop();
      break;
    }
    text = next;
    guests = value;
  }
  // Each guest more in the last rule is one line more: top up to exactly `lines`.
  for (let missing = lines - text.split('\n').length; missing > 0; missing--)
    guests.push(base + 90_000 + missing);
  return JSON.stringify(policy, null, 2);
}

/** `text` with every `every`-th guest id changed: a new version changed in scattered places. */
export function scatteredEdit(text: string, every: number): string {
  let n = 0;
  return text.replace(/^(\s+)(\d{4,})(,?)$/gm, (line, indent: string, id: string, comma: string) =>
    ++n % every === 0 ? `${indent}${Number(id) + 50_000}${comma}` : line,
  );
}

/** `text` (a policy) with every tool's deny_if in reverse order: the same lines, moved. */
export function reorderedRules(text: string): string {
  const policy = JSON.parse(text) as { tools: Record<string, { deny_if?: unknown[] }> };
  for (const tool of Object.values(policy.tools)) tool.deny_if?.reverse();
  return JSON.stringify(policy, null, 2);
}

/** A stored version of `text`, as the store keeps it (hash and times stand-ins: no page shows them). */
export function storedVersion(n: number, text: string, replaces: number | null): PolicyVersion {
  return {
    version: n,
    text,
    sha256: '0'.repeat(64),
    author: 'editor@example.com',
    created: 1_760_000_000_000 + n,
    comment: `version ${n}`,
    replaces,
  };
}

/**
 * What /admin/policy's route hands its page for an editor who sees every call: `active` in force,
 * `previous` the version it replaced. Untyped here: the page's types reach the Worker's runtime
 * types, which the bench (a Node program) does not load; the tests give it its type.
 */
export function consoleViewOf(previous: PolicyVersion, active: PolicyVersion) {
  const { text: _a, ...activeMeta } = active;
  const { text: _p, ...previousMeta } = previous;
  return {
    viewer: 'editor@example.com',
    csrf: 'x',
    editor: true,
    overview: {
      generation: 2,
      active: activeMeta,
      shadow: null,
      versions: [activeMeta, previousMeta],
      events: [],
      deployProblems: null,
    },
    active,
    previous,
    disagreements: [],
    shadowCount: 0,
    callsSeen: 'all' as const,
    draft: { text: active.text, comment: '', since: '7d', limit: '1000' },
  };
}
