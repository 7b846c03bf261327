// A call's Analytics Engine data point: the audit record's figures in the positions
// docs/observability.md documents (queries depend on them), cut to Analytics Engine's limits.

import { describe, expect, it } from 'vitest';
import { callPoint } from '../../src/audit/call-point';
import type { AuditRecord } from '../../src/audit/record';

const RECORD: AuditRecord = {
  ts: 1,
  request_id: 'r1',
  user_id: 'u1',
  user_email: 'alice@example.com',
  client_id: 'c',
  grant_id: 'g',
  session: 's',
  tool: 'pve_reboot_vm',
  arg_keys: ['node', 'vmid'],
  args_hmac: 'h',
  args: { node: 'pve1', vmid: 100, secret: 'never in a point' },
  decision: 'limited',
  rule: '/tools/pve_reboot_vm/limits/0',
  outcome: 'denied',
  error_kind: null,
  upstream_status: null,
  latency_ms: 7.5,
  vmid: null,
  upid: null,
  approval_id: null,
  approval_channel: null,
  policy_version: 3,
  user_groups: ['ops'],
  user_scopes: ['pve:power'],
  cluster: 'prod',
  upstream_ms: null,
  trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
};

describe('callPoint', () => {
  it('puts the figures where docs/observability.md says, and no argument value', () => {
    const point = callPoint(RECORD, 'pve:power');
    expect(point).toEqual({
      indexes: ['pve_reboot_vm'],
      blobs: [
        'pve_reboot_vm',
        'limited',
        '/tools/pve_reboot_vm/limits/0',
        'denied',
        'prod',
        'pve:power',
        '',
        '4bf92f3577b34da6a3ce929d0e0e4736',
      ],
      doubles: [7.5, 0, 0, 0, 0],
    });
    expect(JSON.stringify(point)).not.toContain('never in a point');
  });

  it('counts the time in Proxmox where a request was sent, and cuts long text', () => {
    const point = callPoint(
      { ...RECORD, upstream_ms: 12, rule: 'r'.repeat(5000), tool: 't'.repeat(200) },
      'pve:read',
    );
    expect(point.doubles).toEqual([7.5, 12, 1, 0, 0]);
    expect(point.indexes![0]).toHaveLength(96);
    expect((point.blobs![2] as string).length).toBe(1024);
  });

  it('counts the wait for an approval where the policy wanted one', () => {
    expect(callPoint(RECORD, 'pve:power', 2_500).doubles).toEqual([7.5, 0, 0, 2_500, 1]);
    // Consumed at once (an approval given on the page beforehand): wanted, no time waited.
    expect(callPoint(RECORD, 'pve:power', 0).doubles).toEqual([7.5, 0, 0, 0, 1]);
  });
});
