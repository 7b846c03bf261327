// The policy store: every version of the policy, which one is active, which one runs in shadow,
// and the history of changes, in one Durable Object (named POLICY_STORE_OBJECT) so that every
// isolate reads one truth. Only a policy that passes the checks of `npm run policy -- check`
// (../policy/text.ts) is ever stored, whoever sends it. Each change is written to the audit
// trail by this object as it commits it.
//
// Seeding: each isolate's check (`head`) carries the deployed policy's hash (POLICY, or
// policy.json), and its text when asked. The first one seeds version 1 from it. A deployed text
// this object has not seen before, once a history exists, is added as a new version ("from
// deploy") and activated: the redeploy wins, in the history and the audit trail, never silently.
// A deployed text seen before (an older Worker version still serving during a rollout, a
// redeploy of the same text) changes nothing, so two Worker versions cannot take turns. A
// deployed text that fails the checks is not stored (checked again under a release with other
// tools); the active version stays, and /health says why.
//
// Tables: ./tables.ts. Every method is synchronous SQL after its one await (a hash), so each
// runs whole on the object's single thread: two editors cannot interleave.

import { DurableObject } from 'cloudflare:workers';
import { AUDIT_LOST_OBJECT, AUDIT_OBJECT } from '../audit/names';
import { auditEnabled } from '../audit/limits';
import type { AuditObject } from '../audit/record';
import type { Bound } from '../stores/stubs';
import { sha256Hex } from '../encoding';
import { formatErrors } from '../policy/load';
import { checkPolicyText } from '../policy/text';
import { TOOL_CATALOG } from '../tools';
import { policyEventRecord } from './audit-event';
import { PolicyTables } from './tables';
import type {
  ChangeBy,
  NewVersion,
  PolicyStoreObject,
  PolicyEvent,
  PolicyHead,
  PolicyOverview,
  PolicyVersion,
  ShadowDisagreement,
  StoreAnswer,
} from './types';

interface StoreEnv {
  AUDIT_ENABLED?: string;
  AUDIT?: Bound<AuditObject>;
}

type Refusal = { ok: false; status: 400 | 404 | 409; problems: string[] };

export class PolicyStore extends DurableObject implements PolicyStoreObject {
  private readonly t: PolicyTables;
  /** Where each change is recorded: this object writes its own audit records (none when off). */
  private readonly audit: Bound<AuditObject> | null;

  constructor(ctx: DurableObjectState, env: StoreEnv) {
    super(ctx, env as never);
    this.audit = env.AUDIT && auditEnabled(env) ? env.AUDIT : null;
    this.t = new PolicyTables(ctx.storage.sql);
  }

  /**
   * An isolate's check: the active and shadow versions (texts only when `known` is not the
   * current generation), after taking in the deployed policy if this object has not seen it. The
   * deployed policy comes as its hash; its text only when this object asked for it
   * (`needsDeployText`), so a check is small.
   */
  async head(
    deployed: { sha256: string; text?: string },
    known: number | null,
    now: number,
  ): Promise<PolicyHead> {
    const { text } = deployed;
    if (text !== undefined && (await sha256Hex(text)) !== deployed.sha256)
      throw new RangeError('the deployed policy does not match its hash');
    // From here on synchronous: no other request runs in between.
    const out: Pick<PolicyHead, 'deployProblems' | 'needsDeployText'> = {};
    const seen = this.t.deploy(deployed.sha256);
    // A text refused under other tools than this release's is checked again (a tool it names may exist now).
    const recheck = seen?.problems && seen.catalog !== CATALOG_MARK;
    if (!seen || recheck) {
      if (text === undefined) out.needsDeployText = true;
      else {
        const problems = this.takeDeployed(text, deployed.sha256, now);
        if (problems) out.deployProblems = problems;
      }
    } else if (seen.problems) {
      out.deployProblems = seen.problems;
    }
    const generation = this.t.state('generation') ?? 0;
    const withText = known !== generation;
    return {
      generation,
      active: this.t.ref(this.t.state('active'), withText),
      shadow: this.t.ref(this.t.state('shadow'), withText),
      ...out,
    };
  }

  overview(): PolicyOverview {
    const shadow = this.t.meta(this.t.state('shadow'));
    return {
      generation: this.t.state('generation') ?? 0,
      active: this.t.meta(this.t.state('active')),
      shadow: shadow
        ? {
            ...shadow,
            since: this.t.state('shadow_since') ?? 0,
            disagreements: this.t.state('shadow_count') ?? 0,
          }
        : null,
      versions: this.t.versions(),
      events: this.t.events(),
      deployProblems: this.t.lastDeployProblems(),
    };
  }

  get(version: number): PolicyVersion | null {
    return this.t.get(version);
  }

  /** Stores a new version (checked first), and activates it or runs it in shadow if asked. */
  async add(
    input: NewVersion,
    now: number,
  ): Promise<StoreAnswer<{ version: number; event: PolicyEvent }>> {
    const checked = checkPolicyText(input.text, TOOL_CATALOG);
    if (!checked.ok)
      return { ok: false, status: 400, problems: formatErrors(checked.errors).split('\n') };
    if (input.activate && input.shadow)
      return { ok: false, status: 400, problems: ['activate and shadow exclude each other'] };
    const sha = await sha256Hex(input.text);
    // After the await: the active version is read now, in the same turn as the write. Saving
    // alone changes nothing in force; a base given with it is still held to.
    const forced = input.forced === true;
    const moved =
      input.activate || input.shadow || input.base !== undefined
        ? this.notAgainstActive(input.base, forced)
        : null;
    if (moved) return moved;
    const version = this.t.insert(input, sha, now);
    let event = this.event(now, input.author, 'add', version, input.comment, forced);
    if (input.activate) {
      this.activateVersion(version, now);
      event = this.event(now, input.author, 'activate', version, input.comment, forced);
    } else if (input.shadow) {
      this.startShadow(version, now);
      event = this.event(now, input.author, 'shadow_start', version, input.comment, forced);
    }
    return { ok: true, value: { version, event } };
  }

  /** Makes a stored version the active one (a rollback is the activation of an older one). */
  activate(version: number, by: ChangeBy): StoreAnswer<{ event: PolicyEvent }> {
    const { actor, comment, now, base, forced = false } = by;
    if (!this.t.meta(version))
      return { ok: false, status: 404, problems: [`no version ${version}`] };
    const moved = this.notAgainstActive(base, forced);
    if (moved) return moved;
    if (this.t.state('active') === version)
      return { ok: false, status: 409, problems: [`version ${version} is already active`] };
    this.activateVersion(version, now);
    return {
      ok: true,
      value: { event: this.event(now, actor, 'activate', version, comment, forced) },
    };
  }

  /**
   * Runs a stored version in shadow beside the active one, or stops the shadow (version null).
   * Written against the active version (`base`), as an activation is: a shadow measures a draft
   * against what is in force, and one started against a version since replaced measures nothing
   * its editor looked at.
   */
  shadow(version: number | null, by: ChangeBy): StoreAnswer<{ event: PolicyEvent }> {
    const { actor, comment, now, base, forced = false } = by;
    const moved = this.notAgainstActive(base, forced);
    if (moved) return moved;
    if (version === null) {
      const current = this.t.state('shadow');
      if (current === null)
        return { ok: false, status: 409, problems: ['no version runs in shadow'] };
      this.t.setState('shadow', null);
      this.t.bump(now);
      return {
        ok: true,
        value: { event: this.event(now, actor, 'shadow_stop', current, comment, forced) },
      };
    }
    if (!this.t.meta(version))
      return { ok: false, status: 404, problems: [`no version ${version}`] };
    if (this.t.state('active') === version)
      return {
        ok: false,
        status: 409,
        problems: [`version ${version} is the active one: a shadow needs another version`],
      };
    this.startShadow(version, now);
    return {
      ok: true,
      value: { event: this.event(now, actor, 'shadow_start', version, comment, forced) },
    };
  }

  /** Counts (and keeps, up to a cap) a live call the shadow version would have decided otherwise. */
  recordDisagreement(d: ShadowDisagreement): void {
    // Only for the version in shadow now: a late record of a stopped shadow is not its count.
    if (this.t.state('shadow') !== d.shadow.version) return;
    this.t.setState('shadow_count', (this.t.state('shadow_count') ?? 0) + 1);
    this.t.addDisagreement(d);
  }

  /** The newest disagreements of a shadow version, newest first. */
  disagreements(version: number, limit: number): ShadowDisagreement[] {
    return this.t.disagreements(version, limit);
  }

  /** Seeds or adds the deployed policy as the active version; its problems if it fails the checks. */
  private takeDeployed(text: string, sha: string, now: number): string[] | null {
    const checked = checkPolicyText(text, TOOL_CATALOG);
    if (!checked.ok) {
      const problems = formatErrors(checked.errors).split('\n');
      this.t.saveDeploy(sha, now, { problems }, CATALOG_MARK);
      return problems;
    }
    const active = this.t.meta(this.t.state('active'));
    let version: number | null = active?.sha256 === sha ? active.version : null;
    if (version === null) {
      const comment = active === null && this.t.isEmpty() ? 'first start' : 'from deploy';
      version = this.t.insert({ text, author: 'deploy', comment }, sha, now);
      this.activateVersion(version, now);
      this.event(now, 'deploy', 'deploy', version, comment);
    }
    this.t.saveDeploy(sha, now, { version }, CATALOG_MARK);
    return null;
  }

  /**
   * A refusal unless the change names the version in force as `base` (the one its editor saw; 0
   * when none was) or is forced, which its event records. A change that names no base is refused
   * too, naming the version in force: nothing replaces what an editor has not seen without saying
   * so.
   */
  private notAgainstActive(base: number | undefined, forced: boolean): Refusal | null {
    if (forced) return null;
    const active = this.t.state('active');
    if (base === (active ?? 0)) return null;
    const refused = (problem: string): Refusal => ({ ok: false, status: 409, problems: [problem] });
    if (active === null)
      return refused(
        base === undefined
          ? 'no version is active (the deployed policy was refused) and the change names no base: nothing was changed; send base 0 once you have seen that none is, or force the change (recorded as forced)'
          : `no version is active (the deployed policy was refused), not version ${base}: nothing was changed; reload, compare, and try again`,
      );
    if (base === undefined)
      return refused(
        `version ${active} is in force and the change names no base: nothing was changed; send base ${active} once you have compared with it, or force the change (recorded as forced)`,
      );
    const last = this.t.lastActivation();
    const by = last ? ` (by ${last.actor} at ${new Date(last.ts).toISOString()})` : '';
    return refused(
      `version ${active} has been activated since you opened version ${base}${by}: reload, compare, and try again`,
    );
  }

  private activateVersion(version: number, now: number): void {
    this.t.setState('active', version);
    // The shadow of the version now active would agree with it always: it stops.
    if (this.t.state('shadow') === version) this.t.setState('shadow', null);
    this.t.bump(now);
  }

  private startShadow(version: number, now: number): void {
    // A new shadow starts with no disagreements, whichever version ran before (even this one).
    this.t.clearDisagreements();
    this.t.setState('shadow', version);
    this.t.setState('shadow_since', now);
    this.t.setState('shadow_count', 0);
    this.t.bump(now);
  }

  /**
   * Records a change in the history, and its audit record, written by this object as it commits
   * the change (so no change goes unrecorded because a Worker gave up waiting); one that cannot
   * be written is counted lost.
   */
  private event(
    ts: number,
    actor: string,
    action: PolicyEvent['action'],
    version: number | null,
    comment: string,
    forced = false,
  ): PolicyEvent {
    const event = this.t.addEvent({
      ts,
      actor,
      action,
      version,
      comment,
      ...(forced ? { forced } : {}),
    });
    const ns = this.audit;
    if (ns) {
      const stub = (name: string) => ns.get(ns.idFromName(name));
      this.ctx.waitUntil(
        stub(AUDIT_OBJECT)
          .append(policyEventRecord(event))
          .catch(() => stub(AUDIT_LOST_OBJECT).recordLost(1))
          .catch(() => undefined),
      );
    }
    return event;
  }
}

/**
 * This release's tools and their arguments, as a short mark (FNV-1a): a deployed policy refused
 * under other tools is checked again.
 */
const CATALOG_MARK = (() => {
  const text = JSON.stringify(
    Object.entries(TOOL_CATALOG)
      .map(([name, args]) => [name, Object.keys(args).sort()])
      .sort(),
  );
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16);
})();
