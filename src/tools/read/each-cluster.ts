// A read over every cluster: where the server reaches several and the call names none, a list
// tool (guests, nodes, cluster status) reads each cluster the policy allows as a call to it (its
// rules judged with that cluster as args.cluster; one refused is named and sent nothing), side by
// side; a cluster that does not answer is named, the others still shown. The call itself was
// judged as a call to the default cluster: a rule that refuses the default refuses the list (name
// another cluster to list it), and the call's limits counted and approval asked there; a cluster
// a limit counts apart, or that needs an approval of its own, is read only when named
// (ctx.recheck refuses it here); one where the person has no Proxmox token (PVE_IDENTITIES) is
// named and sent nothing. With one cluster, or one named, it is that cluster's read alone, and its
// failure the call's, as it always was.

import { PolicyRefusal, type ToolContext, ToolFailure } from '../../calls/tool-spec';
import { whyUnreadable } from '../../proxmox/blast-radius';
import type { PveClient } from '../../proxmox/client';

/** A cluster left out of the answer, and why. */
export interface LeftOut {
  cluster: string;
  reason: string;
}

export interface ClusterPlan {
  /** Whether the server reaches several clusters (rows then say theirs). */
  several: boolean;
  /** Whether the call reads every cluster the policy allows (several, none named). */
  across: boolean;
  /** The clusters to read, in the configured order: the one named, or null with one cluster. */
  clusters: (string | null)[];
  /** Those the policy refuses as calls to them, or where the person has no Proxmox identity. */
  refused: LeftOut[];
  /** Of those, the ones the policy refuses. */
  byPolicy: ReadonlySet<string>;
}

/** Which clusters a call reads: its own, or, named none among several, each the policy allows. */
export function clustersToRead(ctx: ToolContext, args: Record<string, unknown>): ClusterPlan {
  const several = ctx.clusters.length > 1;
  if (!several || ctx.cluster !== null)
    return { several, across: false, clusters: [ctx.cluster], refused: [], byPolicy: new Set() };
  const refused: LeftOut[] = [];
  const byPolicy = new Set<string>();
  const clusters = ctx.clusters.filter((cluster) => {
    try {
      ctx.recheck(args, cluster);
      // The person's client there (no request yet): refused where they have no identity.
      ctx.pveAt(cluster);
      return true;
    } catch (err) {
      if (!(err instanceof PolicyRefusal) && !(err instanceof ToolFailure)) throw err;
      refused.push({ cluster, reason: err.message });
      if (err instanceof PolicyRefusal) byPolicy.add(cluster);
      return false;
    }
  });
  return { several, across: true, clusters, refused, byPolicy };
}

export interface ClusterAnswers<T> {
  /** Each answer, with where it came from: `at`, its index in the plan; `cluster`, its name. */
  answers: { at: number; cluster: string | undefined; value: T }[];
  /** The clusters that did not answer. */
  unreachable: LeftOut[];
}

/** `read` on each planned cluster side by side; one cluster's failure alone is thrown. */
export async function readClusters<T>(
  ctx: ToolContext,
  plan: ClusterPlan,
  read: (pve: PveClient) => Promise<T>,
): Promise<ClusterAnswers<T>> {
  const { clusters } = plan;
  const settled = await Promise.allSettled(
    clusters.map((name) => read(name === null ? ctx.pve() : ctx.pveAt(name))),
  );
  // The call's one cluster: its failure is the call's (one of several left to read is named).
  if (!plan.across && settled[0]?.status === 'rejected') throw settled[0].reason;
  const answers: ClusterAnswers<T>['answers'] = [];
  const unreachable: LeftOut[] = [];
  settled.forEach((r, at) => {
    // (null only with one cluster, whose rows name none.)
    const name = clusters[at] ?? undefined;
    if (r.status === 'fulfilled') answers.push({ at, cluster: name, value: r.value });
    else unreachable.push({ cluster: name ?? ctx.clusters[0]!, reason: whyUnreadable(r.reason) });
  });
  return { answers, unreachable };
}

/** The structured fields that name clusters left out (none when none was). */
export function leftOutFields(
  plan: ClusterPlan,
  read: ClusterAnswers<unknown>,
): { unreachable?: LeftOut[]; refused?: LeftOut[] } {
  return {
    ...(read.unreachable.length ? { unreachable: read.unreachable } : {}),
    ...(plan.refused.length ? { refused: plan.refused } : {}),
  };
}

/** The lines that say which clusters are left out of `what`, and why. */
export function leftOutText(
  plan: ClusterPlan,
  read: ClusterAnswers<unknown>,
  what: string,
): string {
  return (
    read.unreachable
      .map(
        (u) => `\nCluster ${u.cluster} did not answer (${u.reason}): its ${what} are not listed.`,
      )
      .join('') +
    plan.refused
      .map((r) =>
        plan.byPolicy.has(r.cluster)
          ? `\nCluster ${r.cluster} is not listed: the policy refuses it (${r.reason}).`
          : `\nCluster ${r.cluster} is not listed: ${r.reason}`,
      )
      .join('')
  );
}
