// The name of the one cluster the single-cluster settings (PVE_BASE_URL, PVE_TOKEN_ID, ...)
// configure (../config/clusters.ts): what `args.cluster` is there, and what a record that names
// no cluster was for; and what any cluster's name must look like.

export const DEFAULT_CLUSTER = 'default';

/** A cluster's name: short, lowercase, safe in a URL, a message, a policy value and a counter key. */
export const CLUSTER_NAME_RE = /^[a-z][a-z0-9-]{0,23}$/;
