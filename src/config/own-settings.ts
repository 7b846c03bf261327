// The names of the Worker's own settings and bindings, as src/env.ts declares them (checked by
// test/config/own-settings.node.test.ts and, for the text settings npm start passes on, by
// test/scripts/start-dev-vars.node.test.ts). No imports: Node scripts and tests read it without
// Worker types.

/** The single-cluster settings: one cluster's connection, which PVE_CLUSTERS replaces. */
export const SINGLE_CLUSTER_SETTINGS = [
  'PVE_BASE_URL',
  'PVE_TOKEN_ID',
  'PVE_TOKEN_SECRET',
  'CF_ACCESS_CLIENT_ID',
  'CF_ACCESS_CLIENT_SECRET',
] as const;

/** Every text setting (a variable or a secret) the Worker reads, in src/env.ts's order. */
export const WORKER_VARIABLES: readonly string[] = [
  'APPROVAL_WEBHOOKS',
  'APPROVAL_WEBHOOK_TIMEOUT_MS',
  'APPROVAL_TTL_MINUTES',
  'AUDIT_ENABLED',
  'AUDIT_RETENTION_DAYS',
  'AUDIT_MAX_ROWS',
  'ADMIN_USERS',
  'ADMIN_GROUPS',
  ...SINGLE_CLUSTER_SETTINGS,
  'PVE_TIMEOUT_MS',
  'PVE_CLUSTERS',
  'PVE_IDENTITIES',
  'POLICY',
  'POLICY_EDITORS',
  'AUTH_MODE',
  'CORS_ORIGINS',
  'PUBLIC_URL',
  'IDP',
  'ALLOWED_USERS',
  'ALLOWED_GROUPS',
  'OIDC_ISSUER',
  'OIDC_CLIENT_ID',
  'OIDC_CLIENT_SECRET',
  'OIDC_SCOPES',
  'OIDC_GROUPS_CLAIM',
  'OIDC_TRUST_EMAIL',
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
  'GITHUB_ORG',
  'GITHUB_URL',
  'GITHUB_API_URL',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_SERVICE_NAME',
];

/**
 * The Worker's bindings: Durable Objects, the queue, the KV namespace, the optional PVE service
 * and Analytics Engine dataset.
 */
const WORKER_BINDINGS = [
  'MCP_OBJECT',
  'POLICY_COUNTERS',
  'APPROVALS',
  'AUDIT',
  'SERVER_KEYS',
  'POLICY_STORE',
  'NOTIFY_QUEUE',
  'OAUTH_KV',
  'PVE',
  'CALL_METRICS',
];

/**
 * Every setting and binding the Worker reads. A cluster of PVE_CLUSTERS names none of them as its
 * own (see ./clusters.ts), but for the single-cluster ones it may take over (the PVE binding,
 * PVE_TOKEN_SECRET, CF_ACCESS_CLIENT_SECRET): else a cluster could send the sign-in's client
 * secret to a Proxmox as its token, or have the scrubber remove PUBLIC_URL from every answer.
 */
export const OWN_SETTINGS: ReadonlySet<string> = new Set([...WORKER_BINDINGS, ...WORKER_VARIABLES]);

/** A variable or binding a cluster names: upper case, as wrangler's examples and ours all are. */
export const VAR_NAME_RE = /^[A-Z][A-Z0-9_]{0,63}$/;
/** A secret pasted where its variable's name goes (hex, or a UUID as PVE token secrets are). */
export const LOOKS_LIKE_A_SECRET = /^[0-9a-f-]{16,}$/i;
/** Keys of a PVE_CLUSTERS entry that would hold a secret in the JSON itself: always refused. */
export const SECRET_KEYS = ['token_secret', 'access_client_secret'] as const;
