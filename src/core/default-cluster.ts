// The name of the one cluster the single-cluster settings (PVE_BASE_URL, PVE_TOKEN_ID, ...)
// configure (../config/clusters.ts): what `args.cluster` is there, and what a record that names
// no cluster was for.

export const DEFAULT_CLUSTER = 'default';
