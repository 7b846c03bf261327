// The shipped policy.json on pve_guest_exec, under the real policy engine and tool catalog: an
// allow-list of read-only diagnostics. Every form in guest-exec-forms.ts that starts programs,
// writes files or changes the guest is refused outright (no approval asked); every documented
// diagnostic asks a person's approval, and counts against the hourly limit once approved.

import { describe, expect, it } from 'vitest';
import shipped from '../../policy.json';
import type { Identity } from '../../src/core/identity';
import { evaluatePolicy, type Decision } from '../../src/policy/evaluate';
import { loadPolicy } from '../../src/policy/load';
import { policyView } from '../../src/policy/view';
import { SCOPES } from '../../src/core/scopes';
import { TOOL_CATALOG } from '../../src/tools';
import { ALLOWED, type FormGroup, REFUSED } from '../support/guest-exec-forms';

const TOOL = 'pve_guest_exec';
const AT = `/tools/${TOOL}`;
const NOON = Date.parse('2026-11-30T12:00:30.000Z');
const PERSON: Identity = {
  userId: 'alice',
  groups: [],
  clientId: 'c1',
  grantId: 'g-alice',
  scopes: SCOPES,
};

const loaded = loadPolicy(shipped, TOOL_CATALOG);

function decide(command: string[], extra: Record<string, unknown> = {}, approved = false) {
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const args = policyView({ node: 'pve1', vmid: 100, command, ...extra });
  return evaluatePolicy(loaded.policy, { tool: TOOL, args, approved }, PERSON, null, NOON);
}

/** One row per argv, named by its group's reason and the argv as JSON. */
const rows = (groups: FormGroup[]) =>
  groups.flatMap(({ why, commands }) =>
    commands.map((command) => ({ why, argv: JSON.stringify(command), command })),
  );

describe('the shipped pve_guest_exec rule', () => {
  it('loads', () => {
    expect(loaded.ok ? [] : loaded.errors).toEqual([]);
  });

  it('is tested against at least 100 refused forms, none of them twice', () => {
    const all = rows(REFUSED).map((r) => r.argv);
    expect(all.length).toBeGreaterThanOrEqual(100);
    expect(new Set(all).size).toBe(all.length);
  });

  it.each(rows(REFUSED))('refuses $argv ($why)', ({ command }) => {
    const d = decide(command);
    expect(d.kind, JSON.stringify(d)).toBe('deny');
    expect((d as Extract<Decision, { kind: 'deny' }>).rule).toMatch(/^\/tools\/pve_guest_exec\//);
  });

  it.each(rows(ALLOWED))('asks a person to approve $argv ($why)', ({ command }) => {
    expect(decide(command)).toMatchObject({ kind: 'approval_required', rule: `${AT}/action` });
  });

  it('runs an approved diagnostic, counting it per person per hour', () => {
    const d = decide(['df', '-h'], {}, true);
    expect(d.kind).toBe('allow');
    expect(d.kind === 'allow' && d.limits.map((l) => [l.counter, l.scope, l.max])).toEqual([
      ['guest_commands', 'user', 60],
    ]);
  });

  it('refuses stdin even for an allowed diagnostic, before asking anyone', () => {
    for (const input_data of ['reboot\n', '']) {
      expect(decide(['ps', 'aux'], { input_data })).toMatchObject({
        kind: 'deny',
        rule: `${AT}/deny_if/0`,
        reason: expect.stringMatching(/no stdin \(input_data\).*\[redacted\]/),
      });
    }
  });

  it('names what it allows when it refuses a program', () => {
    expect(decide(['bash', '-c', 'id'])).toMatchObject({
      kind: 'deny',
      rule: `${AT}/require/0`,
      reason: expect.stringMatching(/^Agents run read-only diagnostics only: uptime, .*journalctl/),
    });
  });

  it('refuses a verb that changes a service, and asks for the unit with its suffix', () => {
    const stop = decide(['systemctl', 'stop', 'nginx.service']);
    const bare = decide(['systemctl', 'is-active', 'nginx']);
    for (const d of [stop, bare])
      expect(d).toMatchObject({
        kind: 'deny',
        reason: expect.stringMatching(/is-active, is-enabled.*nginx\.service.*Never start/),
      });
  });

  // The forms a review found passing (issue 42), each refused by the rule written for it, so that
  // the refusal says why; every one asked nothing of anyone.
  it.each<[string[], number, RegExp]>([
    [['systemctl', 'show', '--property=Environment', 'nginx.service'], 2, /prints an environment/],
    [['systemctl', 'show', 'nginx.service'], 3, /show \(every property, Environment= with it\)/],
    [['systemctl', 'cat', 'nginx.service'], 3, /cat \(unit files, Environment= lines and all\)/],
    [['systemctl', 'status', 'nginx.service'], 3, /^systemctl status \(the processes of a unit/],
    [['systemctl', 'is-active', '-l', 'nginx.service'], 3, /and so are --full and -l/],
    [['systemctl', 'list-units', '--output=verbose'], 2, /whole journal records/],
    [['ps', '-ewwo', 'pid,args'], 4, /^ps prints no command lines/],
    [['ps', '--format=pid,args'], 4, /^ps prints no command lines/],
    [['ls', '-la', '/root/.ssh'], 6, /^No program looks where pve_guest_file_read never reads/],
    [['stat', '/etc/shadow'], 6, /^No program looks where/],
    [['findmnt', '--target=/root/x'], 6, /even df or findmnt on a path there/],
    [['ls', '-laR', '/'], 7, /list recursively \(-R\)/],
    [['journalctl', '-f'], 5, /^journalctl does not follow \(-f and --follow never end\)/],
    [['journalctl', '-o', 'verbose'], 2, /whole journal records/],
    [['systemctl', 'link', '/etc/systemd/system/evil.service/.'], 1, /^A path is written plainly/],
    [['free', '-s', '1'], 8, /^free does not repeat/],
    [['free', '-c', '1000000000'], 8, /a count of a billion never ends/],
    [['findmnt', '-p'], 9, /^findmnt does not poll/],
    [['findmnt', '-s'], 9, /shows no fstab/],
  ])('refuses %j by deny_if/%i, saying why', (command, index, reason) => {
    expect(decide(command)).toMatchObject({
      kind: 'deny',
      rule: `${AT}/deny_if/${index}`,
      reason: expect.stringMatching(reason),
    });
  });

  it('holds ps to its own forms: no BSD form, no full format', () => {
    for (const command of [
      ['ps', '-ef'],
      ['ps', '-ex'],
      ['ps', '-U', '0'],
    ])
      expect(decide(command)).toMatchObject({
        kind: 'deny',
        rule: `${AT}/require/7`,
        reason: expect.stringMatching(/^ps takes -e, -A.*never a BSD form/),
      });
    // The same words mean nothing to the rule for another program: `-ef` is fine for ls.
    expect(decide(['ls', '-ef', '/var/log'])).toMatchObject({ kind: 'approval_required' });
  });

  it('says which long options it takes when it refuses one', () => {
    expect(decide(['journalctl', '--vacuum-size=1'])).toMatchObject({
      kind: 'deny',
      reason: expect.stringMatching(/^Long options are read-only ones only: .*never --vacuum-\*/),
    });
  });
});
