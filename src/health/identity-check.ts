// Each token PVE_IDENTITIES maps people to, checked for /health (and so `npm run doctor`): what it
// holds, read once with that token from GET /access/permissions (every path that matters). A
// token that holds nothing is named (Proxmox answers it with empty lists, not 403s, so its people
// would see an empty cluster and not know why), and so is one that holds more than any tool here
// needs: privileges over users, permissions or the node itself, or running any command in a guest
// while the policy refuses every tool inside guests. Kept per isolate for PROBE_TTL_MS, like the
// Proxmox probe; settled results only.

import type { Clock } from '../clock';
import type { z } from 'zod';
import type { ClusterConfig } from '../config/clusters';
import { type Identities, type MappedToken, tokensOf } from '../config/identities';
import { PveClient } from '../proxmox/client';
import { PveError } from '../proxmox/errors';
import { accessPermissions } from '../proxmox/schemas';
import type { HealthProblem } from './config-checks';
import { PROBE_TTL_MS } from './proxmox-probe';

const CHECK_TIMEOUT_MS = 3_000;

/** Privileges none of this server's tools use: a token holding one can do more than they do. */
export const BEYOND_THE_TOOLS = [
  'Permissions.Modify',
  'Realm.Allocate',
  'Realm.AllocateUser',
  'User.Modify',
  'Group.Allocate',
  'Sys.Modify',
  'Sys.PowerMgmt',
] as const;

/** What a token holds: each path that matters with its privileges (from GET /access/permissions). */
type Held = z.output<typeof accessPermissions>;

const cache = new Map<string, { at: number; held: Held | { error: string } }>();

/** Forget what was read (tests: the next /health reads each token again). */
export function forgetTokenChecks(): void {
  cache.clear();
}

/** What one mapped token holds on `/`, `/vms` and each `/pool/*` Proxmox lists for it (for the operator's view). */
export interface TokenHolds {
  token: string;
  /** Where the server reaches several clusters: the cluster the token is for. */
  cluster?: string;
  /** Each of those paths with the privileges held there (none: an empty list); absent if unread. */
  on?: Record<string, string[]>;
}

/**
 * The problems of every mapped token of every cluster, and what each holds where it matters most.
 * `guestToolsRefused`: the policy refuses every tool that runs commands inside guests (a token
 * able to is then more than needed).
 */
export async function identityChecks(
  clusters: readonly ClusterConfig[],
  identities: Identities | null,
  clock: Clock,
  guestToolsRefused: boolean,
): Promise<{ problems: HealthProblem[]; holds: TokenHolds[] }> {
  if (!identities) return { problems: [], holds: [] };
  const several = clusters.length > 1;
  const checks = clusters.flatMap((cluster) => {
    const map = identities.get(cluster.name);
    if (!map) return [];
    // Each token once, however many entries name it (never who: /health names no person).
    return tokensOf(map).map(async (token) => {
      const held = await heldBy(cluster, token, clock);
      const on = several ? `Cluster ${cluster.name}: ` : '';
      return {
        problems: judged(`${on}${token.tokenId} (PVE_IDENTITIES)`, held, guestToolsRefused),
        holds: {
          token: token.tokenId,
          ...(several ? { cluster: cluster.name } : {}),
          ...('error' in held ? {} : { on: mainPaths(held) }),
        },
      };
    });
  });
  const each = await Promise.all(checks);
  return { problems: each.flatMap((c) => c.problems), holds: each.map((c) => c.holds) };
}

/** `/`, `/vms` (held there or not) and each `/pool/*` it holds something on, privileges sorted. */
function mainPaths(held: Held): Record<string, string[]> {
  const pools = Object.keys(held)
    .filter((path) => path.startsWith('/pool/'))
    .sort();
  return Object.fromEntries(
    ['/', '/vms', ...pools].map((path) => [path, Object.keys(held[path] ?? {}).sort()]),
  );
}

function judged(
  label: string,
  held: Held | { error: string },
  guestToolsRefused: boolean,
): HealthProblem[] {
  if ('error' in held)
    return [
      {
        check: 'identities',
        message: `${label}: its privileges could not be read: ${held.error}`,
        fix: 'Check the token on the cluster (`pveum user token list <user>`) and the secret in its variable (`wrangler secret put`).',
      },
    ];
  const paths = Object.entries(held).filter(([, privs]) => Object.keys(privs).length > 0);
  if (paths.length === 0)
    return [
      {
        check: 'identities',
        message: `${label} holds no privileges at all: Proxmox answers it with empty lists, not refusals, so its people see an empty cluster.`,
        fix: 'Grant its user a role, and the token too where it is privilege-separated (docs/deploy.md, 1a).',
      },
    ];
  const beyond = new Set<string>();
  for (const [, privs] of paths) {
    for (const priv of BEYOND_THE_TOOLS) if (Object.hasOwn(privs, priv)) beyond.add(priv);
    if (guestToolsRefused && Object.hasOwn(privs, 'VM.GuestAgent.Unrestricted'))
      beyond.add('VM.GuestAgent.Unrestricted (the policy refuses every tool inside guests)');
  }
  if (!beyond.size) return [];
  return [
    {
      check: 'identities',
      message: `${label} holds more than this server's tools need: ${[...beyond].join(', ')}.`,
      fix: 'Give the token (privilege-separated) a role with only what its people need (docs/deploy.md, 1a): the policy is then not the only fence.',
    },
  ];
}

/** What `token` holds on `cluster`, read with that token (cached); or why it could not be read. */
async function heldBy(
  cluster: ClusterConfig,
  token: MappedToken,
  clock: Clock,
): Promise<Held | { error: string }> {
  const key = `${cluster.name} ${token.tokenId}`;
  const cached = cache.get(key);
  if (cached && clock.now() - cached.at < PROBE_TTL_MS) return cached.held;
  const client = new PveClient(
    {
      ...cluster.client,
      tokenId: token.tokenId,
      tokenSecret: token.secret,
      timeoutMs: Math.min(cluster.client.timeoutMs, CHECK_TIMEOUT_MS),
    },
    clock,
  );
  let held: Held | { error: string };
  try {
    held = await client.get('/access/permissions', accessPermissions);
  } catch (err) {
    held = { error: err instanceof PveError ? err.message : 'the read failed' };
  }
  cache.set(key, { at: clock.now(), held });
  return held;
}
