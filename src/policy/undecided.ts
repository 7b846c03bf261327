// The rules of refusals that no policy decided, named once: the gate gives them
// (../calls/policy-gate.ts), and a replay leaves such calls out (../replay/replay.ts).

/**
 * The rules of refusals no policy decided: the policy did not load, or a store did not answer.
 * A replay of the audit trail leaves them out (a candidate policy would not change them).
 */
export const UNDECIDED_RULES = {
  invalidPolicy: '(invalid policy)',
  approvalStore: '(approval store unavailable)',
  counterStore: '(counter store unavailable)',
  /** The policy store could not say which policy is in force. */
  policyStore: '(policy store unavailable)',
  /** The caller's token does not hold the tool's scope: refused before any policy. */
  scope: '(scope not granted)',
  /** PVE_IDENTITIES maps the person to no Proxmox token there: refused before anything is sent. */
  identity: '(no Proxmox identity)',
} as const;
