// The policy document (policy.json or the POLICY variable), PolicyLayer-compatible: the
// recommended rule `{"version":"1","default":"deny","tools":{"x":{"limits":[...]}}}` loads as is.

import { z } from 'zod';
import { CLUSTER_NAME_RE } from '../core/default-cluster';

export const OPERATORS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'lt',
  'lte',
  'gt',
  'gte',
  'regex',
  'exists',
  'contains',
] as const;
export type Operator = (typeof OPERATORS)[number];

export const WINDOWS = ['second', 'minute', 'hour', 'day'] as const;
export type Window = (typeof WINDOWS)[number];

/**
 * Whose calls a limit counts together: a session's, a grant's, a person's, everyone's, or those
 * on one guest (any caller, wherever the guest runs: a migrated guest keeps its count).
 */
export const SCOPES = ['session', 'grant', 'user', 'global', 'guest'] as const;
export type Scope = (typeof SCOPES)[number];

/** Users (id or email) and `group:<name>` entries a rule is limited to, or exempts. */
const principalList = z.array(z.string().min(1).max(200)).max(200);

const principalFilter = {
  principals: principalList.optional(),
  except: principalList.optional(),
};

const scalar = z.union([z.string().max(1000), z.number(), z.boolean()]);

export const AGGREGATES = ['sum', 'count'] as const;

const comparison = {
  path: z.string().min(1).max(200),
  op: z.enum(OPERATORS),
  value: z.union([scalar, z.array(scalar).max(1000)]),
  /** Over a `*` path: compare the sum of its values, or the count of those present, as one number. */
  aggregate: z.enum(AGGREGATES).optional(),
};

/**
 * What a rule's `when` tests: a path, an operator and a value, as a condition has them. The rule
 * applies only to a call this would fire on as a `deny_if` (`args.command.0` is `ps`).
 */
export const guardSchema = z.strictObject(comparison);

export const conditionSchema = z.strictObject({
  ...comparison,
  reason: z.string().max(500).optional(),
  /** The rule applies only when this holds (../policy/conditions.ts, judgeCondition). */
  when: guardSchema.optional(),
  ...principalFilter,
});
export type Condition = z.output<typeof conditionSchema>;

/** An `approve_if` rule: a condition, and who may approve what it asks (else the tool's approvers). */
export const approvalConditionSchema = conditionSchema.extend({
  approvers: principalList.optional(),
});

const clusterName = z.string().regex(CLUSTER_NAME_RE, {
  error: 'a cluster name: a-z first, then a-z, 0-9 or "-", 24 at most',
});

export const limitSchema = z.strictObject({
  counter: z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, {
    error: 'letters, digits, "_", ".", ":" or "-", at most 64',
  }),
  window: z.enum(WINDOWS),
  max: z.number().int().min(0).max(1_000_000_000),
  scope: z.enum(SCOPES),
  /**
   * The clusters whose calls it counts, each cluster's apart (PVE_CLUSTERS' names; `default` with
   * the single-cluster settings); absent: every call, wherever it goes.
   */
  cluster: z.union([clusterName, z.array(clusterName).min(1).max(16)]).optional(),
  reason: z.string().max(500).optional(),
  ...principalFilter,
});
export type Limit = z.output<typeof limitSchema>;

const rules = {
  limits: z.array(limitSchema).max(50).optional(),
  deny_if: z.array(conditionSchema).max(100).optional(),
  require: z.array(conditionSchema).max(100).optional(),
  /**
   * A call this fires on (as a `deny_if` would) needs a person's approval, asked as the tool's
   * `require_approval` is (its approval, approvals_required and notify; its approvers unless the
   * rule names its own).
   */
  approve_if: z.array(approvalConditionSchema).max(100).optional(),
};

export const toolPolicySchema = z.strictObject({
  action: z.enum(['allow', 'deny', 'require_approval']).optional(),
  reason: z.string().max(500).optional(),
  /**
   * Who may approve a call this tool's `require_approval` or an `approve_if` asks about (users or
   * group:<name>); the caller never may.
   */
  approvers: principalList.optional(),
  /**
   * Where a person approves: `auto` (default) asks in the conversation when the client can elicit
   * and no approvers are named, else sends a link; `web` always sends the link, so an approval is
   * never given inside the conversation an agent relays.
   */
  approval: z.enum(['auto', 'web']).optional(),
  /**
   * How many different people must approve (default 1), among the approvers (or administrators
   * when none are named); the person who asked never counts, one denial ends it. More than one is
   * asked on the web page only.
   */
  approvals_required: z.number().int().min(1).max(10).optional(),
  /** Which APPROVAL_WEBHOOKS receivers (by name) hear of this tool's approvals; default: all. */
  notify: z
    .array(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/))
    .max(20)
    .optional(),
  /**
   * Argument names (or `<argument>.<key>` inside an object argument: `params.my-secret`) whose
   * values are never stored in the audit trail nor shown to approvers.
   */
  sensitive: z.array(z.string().min(1).max(130)).max(100).optional(),
  ...rules,
});
export type ToolPolicy = z.output<typeof toolPolicySchema>;

export const policySchema = z.strictObject({
  version: z.literal('1'),
  description: z.string().max(2000).optional(),
  // Fail closed: a policy that does not say is a deny-by-default policy (`policy check` warns).
  default: z.enum(['allow', 'deny']).default('deny'),
  hide: z.array(z.string().min(1).max(128)).max(500).optional(),
  all_tools: z.strictObject(rules).optional(),
  tools: z.record(z.string().min(1).max(128), toolPolicySchema).default({}),
});
export type PolicyDocument = z.output<typeof policySchema>;
