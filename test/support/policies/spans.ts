// A call through every stage, for its spans (test/calls/spans.redaction.test.ts): a rule on the
// guest's tags (its facts read before deciding), a limit (a reservation), and for a hard stop a
// person's approval asked in the conversation (announced to the project's receivers too); status
// reads allowed.

const notProd = {
  path: 'target.tags',
  op: 'contains',
  value: 'prod',
  reason: 'Nothing tagged prod.',
};

export const SPANS_POLICY = {
  version: '1',
  default: 'deny',
  tools: {
    pve_get_vm_status: {},
    pve_start_vm: {
      deny_if: [notProd],
      limits: [{ counter: 'starts', window: 'hour', max: 100, scope: 'grant' }],
    },
    pve_stop_vm: {
      action: 'require_approval',
      reason: 'A person confirms each hard stop.',
      deny_if: [notProd],
      limits: [{ counter: 'stops', window: 'hour', max: 100, scope: 'grant' }],
    },
  },
};
