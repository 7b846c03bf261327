// A change of the policy as an audit record, beside the calls it will decide: the tool column
// says `(policy)`, the arguments say what was done to which version and why, the person is the
// one who did it (`deploy` for a deploy that seeded a version). Its decision is `none`, so a
// replay never takes it for a call.

import { type AuditRecord, POLICY_EVENT_TOOL } from '../audit/record';
import type { PolicyEvent } from './types';

export function policyEventRecord(event: PolicyEvent): AuditRecord {
  const email = event.actor.includes('@') ? event.actor : null;
  return {
    ts: event.ts,
    request_id: `policy-event-${event.id}`,
    user_id: event.actor,
    user_email: email,
    client_id: '',
    grant_id: '',
    session: 'policy',
    tool: POLICY_EVENT_TOOL,
    arg_keys: ['action', 'version', 'comment', ...(event.forced ? ['forced'] : [])],
    args_hmac: '',
    args: {
      action: event.action,
      version: event.version,
      comment: event.comment,
      ...(event.forced ? { forced: true } : {}),
    },
    decision: 'none',
    rule: null,
    outcome: 'ok',
    error_kind: null,
    upstream_status: null,
    latency_ms: 0,
    upstream_ms: null,
    vmid: null,
    upid: null,
    approval_id: null,
    approval_channel: null,
    policy_version: event.version,
    user_groups: null,
    user_scopes: null,
    cluster: null,
  };
}
