// The Runtime: everything a request may use, built from the Worker's environment here and only
// here. The checked configuration (../config/), the clock, and one port per store: where the
// policy comes from, the rate-limit counters, approvals, the audit trail, the server's keys, the
// MCP sessions, the OAuth KV namespace, and a Proxmox client per call. Calls, both MCP eras, the
// pages, /health and the admin routes take what they need from it; nobody else reads the
// environment. Built once per environment object (an isolate keeps its env; the per-request
// copies the OAuth library needs share it), since it holds no state of a request.

import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import { type ArgsHmacer, argsHmacer } from '../audit/arg-hash';
import { AUDIT_LOST_OBJECT, AUDIT_OBJECT } from '../audit/names';
import { type Clock, systemClock } from '../clock';
import { type Config, configOf } from '../config';
import { kept } from '../core/kept';
import type { ApprovalsObject } from '../approvals/types';
import type { AuditObject } from '../audit/record';
import type { CountersObject } from '../counters/types';
import type { AppEnv, SessionObject } from '../env';
import type { KeysObject } from '../keys/names';
import type { PolicyStoreObject } from '../policy-store/types';
import { deployedPolicy } from '../policy/source';
import { type PolicySource, storedPolicySource } from '../policy-store/isolate-cache';
import { POLICY_STORE_OBJECT } from '../policy-store/names';
import { PveClient, type PveClientConfig } from '../proxmox/client';
import { SERVER_KEYS_OBJECT, type ServerKeyName } from '../keys/names';
import { type Scrubber, scrubberFor } from '../secrets/scrub';
import { STORE_DEADLINE_MS, withDeadline } from '../stores/deadline';
import { type Bound, objectPort, type RpcOf } from '../stores/stubs';
import { TOOL_CATALOG, TOOLS } from '../tools';
import { type ToolSet, toolSet } from '../calls/tool-list';
import { type ClusterConfig, DEFAULT_CLUSTER } from '../config/clusters';
import { type Identities, tokenFor } from '../config/identities';
import type { Identity } from '../core/identity';
import { SINGLE_CLUSTER_NAMES } from '../proxmox/errors';

export type { PolicySource };

export type CountersPort = RpcOf<CountersObject, 'reserve' | 'release' | 'list'>;
export type ApprovalsPort = RpcOf<
  ApprovalsObject,
  | 'create'
  | 'get'
  | 'decide'
  | 'consume'
  | 'restore'
  | 'spendOnce'
  | 'pending'
  | 'figures'
  | 'countUndelivered'
  | 'undelivered'
  | 'cancelForGrant'
>;
export type AuditPort = RpcOf<
  AuditObject,
  'append' | 'query' | 'get' | 'stats' | 'figures' | 'recordLost'
>;
export type SessionPort = RpcOf<SessionObject, 'owner' | 'endSession'>;
export type PolicyStorePort = RpcOf<
  PolicyStoreObject,
  'overview' | 'get' | 'add' | 'activate' | 'shadow' | 'recordDisagreement' | 'disagreements'
>;

/** The stores, each call with the store deadline (a hung object fails its caller, never hangs it). */
export interface Stores {
  /**
   * The counters object of one scope key: `grant:<id>`, `user:...`, `global`. A reservation
   * that lands after its deadline was never counted on: it is given back, in `waitUntil`.
   */
  counters(name: string, waitUntil?: (work: Promise<unknown>) => void): CountersPort;
  approvals(): ApprovalsPort;
  /** The audit trail's records; `lost` is the object counting the records that could not be written. */
  audit(which?: 'records' | 'lost', ms?: number): AuditPort;
  /** A server key (made once, kept for good). */
  serverKey(name: ServerKeyName): Promise<string>;
  /** The policy's versions, history and shadow (the source of `Runtime.policy`). */
  policies(): PolicyStorePort;
  /** One 2025 MCP session's object, by its Durable Object name. */
  session(name: string): SessionPort;
  /** The OAuth library's KV namespace, which our grant index and web sessions share. */
  kv: KVNamespace;
}

export interface Runtime {
  readonly config: Config;
  readonly clock: Clock;
  readonly policy: PolicySource;
  readonly stores: Stores;
  /** Removes every configured secret from text that came back from upstream. */
  readonly scrubber: Scrubber;
  /** The HMAC of a call's canonical arguments, under the server's `args_hmac` key. */
  readonly hmacArgs: ArgsHmacer;
  /** Where each call's data point goes (Workers Analytics Engine), if the deployment binds one. */
  readonly callMetrics: AnalyticsEngineDataset | null;
  /**
   * A Proxmox client for one call (it logs that call's exchanges) to `cluster` (absent: the
   * default), with the token `who` acts with there (PVE_IDENTITIES; else the cluster's own),
   * or why there is none: the settings are wrong (`error`), or `who` has no identity (`refused`).
   */
  pveClient(
    cluster: string | undefined,
    who: Identity,
  ): PveClient | { error: string } | { refused: string };
  /** The clusters' names, the default first (one, `default`, for the single-cluster settings). */
  readonly clusters: readonly string[];
  /** The tools as this server serves them (with `cluster` where it reaches more than one). */
  readonly tools: ToolSet;
}

/** What the Hono routes see: the bindings, and the Runtime the entry put in the context. */
export interface AppBindings {
  Bindings: AppEnv;
  Variables: { runtime: Runtime };
}

const built = new WeakMap<object, Runtime>();

export function runtimeOf(env: AppEnv): Runtime {
  return kept(built, env, () => buildRuntime(env));
}

const handedToProvider = new WeakSet<object>();

/**
 * A copy of env for the OAuth provider, which writes its helpers into the env it is given: each
 * request gets its own copy, so one origin's provider never answers for another's. The copy
 * shares env's Runtime, and marks what the provider hands back to the app (../app/app.ts).
 */
export function providerEnv(env: AppEnv): AppEnv {
  const copy = { ...env };
  built.set(copy, runtimeOf(env));
  handedToProvider.add(copy);
  return copy;
}

/** Whether a request with this env came back from the OAuth provider (so it is past the door). */
export function cameThroughProvider(env: AppEnv): boolean {
  return handedToProvider.has(env);
}

/** The OAuth library's helpers, which it puts on the env it hands the routes it serves. */
export function oauthHelpers(env: AppEnv): OAuthHelpers | undefined {
  return (env as AppEnv & { OAUTH_PROVIDER?: OAuthHelpers }).OAUTH_PROVIDER;
}

/**
 * The Runtime for an environment: its configuration parsed, its bindings made ports. The Worker
 * takes it through runtimeOf (once per environment, on the system clock); test/calls/ builds one
 * over in-memory objects, on a clock of its own.
 */
export function buildRuntime(env: AppEnv, clock: Clock = systemClock): Runtime {
  const config = configOf(env);
  const clusters = clusterNames(config);
  const keys = (): RpcOf<KeysObject, 'key'> =>
    objectPort<KeysObject, 'key'>(env.SERVER_KEYS, SERVER_KEYS_OBJECT, 'server keys');
  const policyStore = (ms?: number) =>
    objectPort<PolicyStoreObject, keyof PolicyStorePort | 'head'>(
      env.POLICY_STORE,
      POLICY_STORE_OBJECT,
      'policy store',
      ms,
    );
  return {
    config,
    clock,
    policy: storedPolicySource({
      store: () => policyStore(),
      deployed: deployedPolicy(config.policyText),
      clock,
      catalog: TOOL_CATALOG,
    }),
    stores: {
      policies: () => policyStore(),
      counters: (name, waitUntil) => countersPort(env.POLICY_COUNTERS, name, waitUntil),
      approvals: () =>
        objectPort<ApprovalsObject, keyof ApprovalsPort>(env.APPROVALS, 'approvals', 'approvals'),
      audit: (which = 'records', ms) =>
        objectPort<AuditObject, keyof AuditPort>(
          env.AUDIT,
          which === 'records' ? AUDIT_OBJECT : AUDIT_LOST_OBJECT,
          which === 'records' ? 'audit' : 'audit lost',
          ms,
        ),
      serverKey: (name) => keys().key(name),
      session: (name) =>
        objectPort<SessionObject, 'owner' | 'endSession'>(env.MCP_OBJECT, name, 'session'),
      kv: env.OAUTH_KV,
    },
    scrubber: scrubberFor(config.secrets),
    hmacArgs: argsHmacer(() => keys().key('args_hmac')),
    callMetrics: env.CALL_METRICS ?? null,
    pveClient: (name, who) => {
      if ('error' in config.clusters) return config.clusters;
      const { identities } = config;
      // (The detail names people and variables: the operator reads it on /health.)
      if (identities && 'error' in identities)
        return { error: 'PVE_IDENTITIES is invalid, so no call reaches Proxmox (see /health)' };
      const { all } = config.clusters;
      const cluster = name === undefined ? all[0] : all.find((c) => c.name === name);
      if (!cluster) return { error: `no cluster is named ${JSON.stringify(name)}` };
      const client = personsClient(cluster, identities, who, all.length > 1);
      return 'refused' in client ? client : new PveClient(client, clock);
    },
    clusters,
    tools: toolSetFor(clusters),
  };
}

/**
 * A cluster's client with the token `who` acts with there (PVE_IDENTITIES), its messages naming
 * that token's settings; the cluster's own where it has no mapping; refused where they match
 * nothing and there is no fallback.
 */
function personsClient(
  cluster: ClusterConfig,
  identities: Identities | null,
  who: Identity,
  several: boolean,
): PveClientConfig | { refused: string } {
  const token = tokenFor(identities, cluster.name, who);
  if (token === undefined) return cluster.client;
  const on = several ? ` on cluster ${cluster.name}` : '';
  if (token === null)
    return {
      refused: `No Proxmox identity for ${who.email ?? who.userId}${on}: PVE_IDENTITIES maps no token to them, and names no fallback. Ask an operator to add one. Nothing was sent to Proxmox.`,
    };
  return {
    ...cluster.client,
    tokenId: token.tokenId,
    tokenSecret: token.secret,
    explainRefusals: { cluster: cluster.name },
    names: {
      ...(cluster.client.names ?? SINGLE_CLUSTER_NAMES),
      // The person and their token's id: theirs to know, and what to grant the privilege to.
      token: `${who.email ?? who.userId}'s token (${token.tokenId})`,
      tokenId: `the token_id PVE_IDENTITIES maps ${who.email ?? who.userId} to${on}`,
      tokenSecret: token.secretVar,
    },
  };
}

function clusterNames(config: Config): readonly string[] {
  return 'error' in config.clusters ? [DEFAULT_CLUSTER] : config.clusters.all.map((c) => c.name);
}

/** One tool set per list of cluster names: its schemas are built once, not per environment. */
const toolSets = new Map<string, ToolSet>();

function toolSetFor(clusters: readonly string[]): ToolSet {
  const key = clusters.join(',');
  let set = toolSets.get(key);
  if (!set) {
    set = toolSet(TOOLS, clusters);
    toolSets.set(key, set);
  }
  return set;
}

function countersPort(
  ns: Bound<CountersObject>,
  name: string,
  waitUntil?: (work: Promise<unknown>) => void,
): CountersPort {
  const stub = ns.get(ns.idFromName(name)) as unknown as CountersPort;
  const what = `counters ${name}`;
  return {
    reserve: (items, now) =>
      withDeadline(stub.reserve(items, now), STORE_DEADLINE_MS, `${what}.reserve`, (late) => {
        if (late === null) waitUntil?.(stub.release(items).catch(() => undefined));
      }),
    release: (items) => withDeadline(stub.release(items), STORE_DEADLINE_MS, `${what}.release`),
    list: (now) => withDeadline(stub.list(now), STORE_DEADLINE_MS, `${what}.list`),
  };
}
