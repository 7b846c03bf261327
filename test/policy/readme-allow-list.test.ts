// The allow-list example in the README, as written there, under the real policy engine and the
// real tool catalog: what it promises ("anyone may run systemctl status nginx or df -h;
// systemctl restart nginx only a member of ops; apt nobody") is what it does.

import { describe, expect, it } from 'vitest';
import type { Identity } from '../../src/core/identity';
import { evaluatePolicy } from '../../src/policy/evaluate';
import { loadPolicy } from '../../src/policy/load';
import { policyView } from '../../src/policy/view';
import { TOOL_CATALOG } from '../../src/tools';
import { SCOPES } from '../../src/core/scopes';
import readme from '../../README.md?raw';

const section = readme.slice(readme.indexOf('### Commands and files inside guests'));
const example = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!) as {
  tools: Record<string, unknown>;
};

const loaded = loadPolicy({ version: '1', default: 'deny', ...example }, TOOL_CATALOG);
const person = (groups: string[]): Identity => ({
  userId: 'u',
  groups,
  clientId: 'c',
  grantId: 'g',
  scopes: SCOPES,
});

function decide(tool: string, args: Record<string, unknown>, groups: string[] = []): string {
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const d = evaluatePolicy(
    loaded.policy,
    { tool, args: policyView(args) },
    person(groups),
    null,
    0,
  );
  return d.kind;
}

describe("the README's allow-list example", () => {
  it('loads against the real tools', () => {
    expect(loaded.ok ? [] : loaded.errors).toEqual([]);
  });

  it('lets anyone check a service or the disks, ops restart one, and nobody run apt', () => {
    const exec = (command: string[], groups?: string[]) =>
      decide('pve_guest_exec', { node: 'pve1', vmid: 100, command }, groups);
    expect(exec(['systemctl', 'status', 'nginx'])).toBe('allow');
    expect(exec(['df', '-h'])).toBe('allow');
    expect(exec(['systemctl', 'restart', 'nginx'])).toBe('deny');
    expect(exec(['systemctl', 'restart', 'nginx'], ['ops'])).toBe('allow');
    expect(exec(['apt', 'upgrade', '-y'], ['ops'])).toBe('deny');
    expect(exec(['systemctl', 'status', 'nginx;reboot'])).toBe('deny');
    // Options before the verb do not get past the rule on it.
    expect(exec(['systemctl', '--no-pager', 'restart', 'nginx'])).toBe('deny');
    expect(exec(['systemctl', '-q', 'stop', 'nginx'])).toBe('deny');
    expect(exec(['systemctl', '--no-pager', 'restart', 'nginx'], ['ops'])).toBe('allow');
    expect(exec(['journalctl', '--vacuum-time=1s'])).toBe('deny');
  });

  it('reads nginx configuration and logs, nothing else', () => {
    const read = (file: string) => decide('pve_guest_file_read', { node: 'pve1', vmid: 100, file });
    expect(read('/etc/nginx/nginx.conf')).toBe('allow');
    expect(read('/var/log/nginx/error.log')).toBe('allow');
    expect(read('/etc/shadow')).toBe('deny');
  });
});
