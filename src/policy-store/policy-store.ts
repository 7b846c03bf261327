// The policy store: every version of the policy, which one is active, which one runs in shadow,
// and the history of changes, in one Durable Object (named POLICY_STORE_OBJECT) so that every
// isolate reads one truth. Only a policy that passes the checks of `npm run policy -- check`
// (../policy/text.ts) is ever stored, whoever sends it.
//
// Seeding: each isolate's check (`head`) carries the deployed policy (POLICY, or policy.json).
// The first one seeds version 1 from it. A deployed text this object has not seen before, once a
// history exists, is added as a new version ("from deploy") and activated: the redeploy wins, in
// the history and the audit trail, never silently. A deployed text seen before (an older Worker
// version still serving during a rollout, a redeploy of the same text) changes nothing, so two
// Worker versions cannot take turns. A deployed text that fails the checks is not stored; the
// active version stays, and /health says why.
//
// Storage (SQLite): policy_versions (version INTEGER PRIMARY KEY, text, sha256, author, created,
// comment, replaces), policy_state (key TEXT PRIMARY KEY, value INTEGER: generation, active,
// shadow, shadow_since, shadow_count), policy_deploys (sha256 TEXT PRIMARY KEY, seen, version,
// problems), policy_events (id, ts, actor, action, version, comment), shadow_disagreements (id,
// shadow_version, at most MAX_DISAGREEMENTS kept, each a JSON row). Every method is synchronous
// SQL, so each runs whole on the object's single thread: two editors cannot interleave.

import { DurableObject } from 'cloudflare:workers';
import { AUDIT_LOST_OBJECT, AUDIT_OBJECT } from '../audit/names';
import { auditEnabled } from '../config/parse';
import type { AppEnv, AuditObject } from '../env';
import { policyEventRecord } from './audit-event';
import { formatErrors } from '../policy/load';
import { checkPolicyText } from '../policy/text';
import { sha256Hex } from '../encoding';
import { TOOL_CATALOG } from '../tools';
import type {
  NewVersion,
  PolicyEvent,
  PolicyHead,
  PolicyOverview,
  PolicyVersion,
  PolicyVersionMeta,
  ShadowDisagreement,
  StoreAnswer,
} from './types';

/** Disagreements kept per store (the count keeps counting past it). */
const MAX_DISAGREEMENTS = 5_000;
const MAX_LISTED = 200;
const MAX_COMMENT = 500;

type StateKey = 'generation' | 'active' | 'shadow' | 'shadow_since' | 'shadow_count';

interface StoreEnv extends Pick<AppEnv, 'AUDIT_ENABLED'> {
  AUDIT?: DurableObjectNamespace<AuditObject>;
}

export class PolicyStore extends DurableObject {
  private readonly sql = this.ctx.storage.sql;
  /** Where each change is recorded: this object writes its own audit records (none when off). */
  private readonly audit: DurableObjectNamespace<AuditObject> | null;

  constructor(ctx: DurableObjectState, env: StoreEnv) {
    super(ctx, env as never);
    this.audit = env.AUDIT && auditEnabled(env) ? env.AUDIT : null;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS policy_versions (
      version INTEGER PRIMARY KEY, text TEXT NOT NULL, sha256 TEXT NOT NULL, author TEXT NOT NULL,
      created INTEGER NOT NULL, comment TEXT NOT NULL, replaces INTEGER)`);
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS policy_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL)',
    );
    this.sql.exec(`CREATE TABLE IF NOT EXISTS policy_deploys (
      sha256 TEXT PRIMARY KEY, seen INTEGER NOT NULL, version INTEGER, problems TEXT,
      catalog TEXT)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS policy_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT, ts INTEGER NOT NULL, actor TEXT NOT NULL,
      action TEXT NOT NULL, version INTEGER, comment TEXT NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS shadow_disagreements (
      id INTEGER PRIMARY KEY AUTOINCREMENT, shadow_version INTEGER NOT NULL, body TEXT NOT NULL)`);
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
    const seen = this.sql
      .exec<{ problems: string | null; catalog: string | null }>(
        'SELECT problems, catalog FROM policy_deploys WHERE sha256 = ?',
        deployed.sha256,
      )
      .toArray()[0];
    // A text refused under other tools than this release's is checked again (a tool it names may exist now).
    const recheck = seen?.problems && seen.catalog !== CATALOG_MARK;
    if (!seen || recheck) {
      if (text === undefined) out.needsDeployText = true;
      else {
        const problems = this.takeDeployed(text, deployed.sha256, now);
        if (problems) out.deployProblems = problems;
      }
    } else if (seen.problems) {
      out.deployProblems = JSON.parse(seen.problems) as string[];
    }
    const generation = this.state('generation') ?? 0;
    const withText = known !== generation;
    return {
      generation,
      active: this.ref(this.state('active'), withText),
      shadow: this.ref(this.state('shadow'), withText),
      ...out,
    };
  }

  /** Seeds or adds the deployed policy as the active version; its problems if it fails the checks. */
  private takeDeployed(text: string, sha: string, now: number): string[] | null {
    const checked = checkPolicyText(text, TOOL_CATALOG);
    if (!checked.ok) {
      const problems = formatErrors(checked.errors).split('\n');
      this.sql.exec(
        `INSERT INTO policy_deploys (sha256, seen, version, problems, catalog) VALUES (?, ?, NULL, ?, ?)
         ON CONFLICT(sha256) DO UPDATE SET seen = excluded.seen, problems = excluded.problems, catalog = excluded.catalog`,
        sha,
        now,
        JSON.stringify(problems),
        CATALOG_MARK,
      );
      return problems;
    }
    const active = this.meta(this.state('active'));
    let version: number | null = active?.sha256 === sha ? active.version : null;
    if (version === null) {
      const first = active === null && this.count() === 0;
      const comment = first ? 'first start' : 'from deploy';
      version = this.insert({ text, author: 'deploy', comment }, sha, now);
      this.activateVersion(version);
      this.event(now, 'deploy', 'deploy', version, comment);
    }
    this.sql.exec(
      `INSERT INTO policy_deploys (sha256, seen, version, problems, catalog) VALUES (?, ?, ?, NULL, ?)
       ON CONFLICT(sha256) DO UPDATE SET seen = excluded.seen, version = excluded.version, problems = NULL, catalog = excluded.catalog`,
      sha,
      now,
      version,
      CATALOG_MARK,
    );
    return null;
  }

  overview(): PolicyOverview {
    const active = this.meta(this.state('active'));
    const shadow = this.meta(this.state('shadow'));
    const lastDeploy = this.sql
      .exec<{ problems: string | null }>(
        'SELECT problems FROM policy_deploys ORDER BY seen DESC, rowid DESC LIMIT 1',
      )
      .toArray()[0];
    return {
      generation: this.state('generation') ?? 0,
      active,
      shadow: shadow
        ? {
            ...shadow,
            since: this.state('shadow_since') ?? 0,
            disagreements: this.state('shadow_count') ?? 0,
          }
        : null,
      versions: this.sql
        .exec<MetaRow>(
          `SELECT ${META_COLUMNS} FROM policy_versions ORDER BY version DESC LIMIT ?`,
          MAX_LISTED,
        )
        .toArray()
        .map(metaOf),
      events: this.sql
        .exec<EventRow>(
          'SELECT id, ts, actor, action, version, comment FROM policy_events ORDER BY id DESC LIMIT ?',
          MAX_LISTED,
        )
        .toArray()
        .map((e) => ({ ...e, action: e.action as PolicyEvent['action'] })),
      deployProblems: lastDeploy?.problems ? (JSON.parse(lastDeploy.problems) as string[]) : null,
    };
  }

  get(version: number): PolicyVersion | null {
    const row = this.sql
      .exec<MetaRow & { text: string }>(
        `SELECT ${META_COLUMNS}, text FROM policy_versions WHERE version = ?`,
        version,
      )
      .toArray()[0];
    return row ? { ...metaOf(row), text: row.text } : null;
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
    const moved = this.movedSince(input.base);
    if (moved) return moved;
    const version = this.insert(input, await sha256Hex(input.text), now);
    let event = this.event(now, input.author, 'add', version, input.comment);
    if (input.activate) {
      this.activateVersion(version);
      event = this.event(now, input.author, 'activate', version, input.comment);
    } else if (input.shadow) {
      this.startShadow(version, now);
      event = this.event(now, input.author, 'shadow_start', version, input.comment);
    }
    return { ok: true, value: { version, event } };
  }

  /** Makes a stored version the active one (a rollback is the activation of an older one). */
  activate(
    version: number,
    actor: string,
    comment: string,
    now: number,
    base?: number,
  ): StoreAnswer<{ event: PolicyEvent }> {
    if (!this.meta(version)) return { ok: false, status: 404, problems: [`no version ${version}`] };
    const moved = this.movedSince(base);
    if (moved) return moved;
    if (this.state('active') === version)
      return { ok: false, status: 409, problems: [`version ${version} is already active`] };
    this.activateVersion(version);
    return { ok: true, value: { event: this.event(now, actor, 'activate', version, comment) } };
  }

  /** Runs a stored version in shadow beside the active one, or stops the shadow (version null). */
  shadow(
    version: number | null,
    actor: string,
    comment: string,
    now: number,
  ): StoreAnswer<{ event: PolicyEvent }> {
    if (version === null) {
      const current = this.state('shadow');
      if (current === null)
        return { ok: false, status: 409, problems: ['no version runs in shadow'] };
      this.setState('shadow', null);
      this.bump();
      return {
        ok: true,
        value: { event: this.event(now, actor, 'shadow_stop', current, comment) },
      };
    }
    if (!this.meta(version)) return { ok: false, status: 404, problems: [`no version ${version}`] };
    if (this.state('active') === version)
      return {
        ok: false,
        status: 409,
        problems: [`version ${version} is the active one: a shadow needs another version`],
      };
    this.startShadow(version, now);
    return { ok: true, value: { event: this.event(now, actor, 'shadow_start', version, comment) } };
  }

  /** Counts (and keeps, up to a cap) a live call the shadow version would have decided otherwise. */
  recordDisagreement(d: ShadowDisagreement): void {
    // Only for the version in shadow now: a late record of a stopped shadow is not its count.
    if (this.state('shadow') !== d.shadow.version) return;
    this.setState('shadow_count', (this.state('shadow_count') ?? 0) + 1);
    this.sql.exec(
      'INSERT INTO shadow_disagreements (shadow_version, body) VALUES (?, ?)',
      d.shadow.version,
      JSON.stringify(d),
    );
    this.sql.exec(
      'DELETE FROM shadow_disagreements WHERE id <= (SELECT MAX(id) FROM shadow_disagreements) - ?',
      MAX_DISAGREEMENTS,
    );
  }

  /** The newest disagreements of a shadow version, newest first. */
  disagreements(version: number, limit: number): ShadowDisagreement[] {
    return this.sql
      .exec<{ body: string }>(
        'SELECT body FROM shadow_disagreements WHERE shadow_version = ? ORDER BY id DESC LIMIT ?',
        version,
        Math.max(1, Math.min(limit, 1000)),
      )
      .toArray()
      .map((r) => JSON.parse(r.body) as ShadowDisagreement);
  }

  /** A refusal when the active version is no longer `base`, the one the editor saw. */
  private movedSince(
    base: number | undefined,
  ): { ok: false; status: 409; problems: string[] } | null {
    const active = this.state('active');
    if (base === undefined || base === active) return null;
    const last = this.sql
      .exec<{ actor: string; ts: number }>(
        "SELECT actor, ts FROM policy_events WHERE action IN ('activate', 'deploy') ORDER BY id DESC LIMIT 1",
      )
      .toArray()[0];
    return {
      ok: false,
      status: 409,
      problems: [
        `version ${active} has been activated since you opened version ${base}${last ? ` (by ${last.actor} at ${new Date(last.ts).toISOString()})` : ''}: reload, compare, and try again`,
      ],
    };
  }

  private insert(
    input: Pick<NewVersion, 'text' | 'author' | 'comment'>,
    sha: string,
    now: number,
  ): number {
    const version = this.count() === 0 ? 1 : this.maxVersion() + 1;
    this.sql.exec(
      `INSERT INTO policy_versions (version, text, sha256, author, created, comment, replaces)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      version,
      input.text,
      sha,
      input.author.slice(0, 256),
      now,
      input.comment.slice(0, MAX_COMMENT),
      this.state('active'),
    );
    return version;
  }

  private activateVersion(version: number): void {
    this.setState('active', version);
    // The shadow of the version now active would agree with it always: it stops.
    if (this.state('shadow') === version) this.setState('shadow', null);
    this.bump();
  }

  private startShadow(version: number, now: number): void {
    // A new shadow starts with no disagreements, whichever version ran before (even this one).
    this.sql.exec('DELETE FROM shadow_disagreements');
    this.setState('shadow', version);
    this.setState('shadow_since', now);
    this.setState('shadow_count', 0);
    this.bump();
  }

  private bump(): void {
    this.setState('generation', (this.state('generation') ?? 0) + 1);
  }

  private event(
    ts: number,
    actor: string,
    action: PolicyEvent['action'],
    version: number | null,
    comment: string,
  ): PolicyEvent {
    const row = this.sql
      .exec<{ id: number }>(
        'INSERT INTO policy_events (ts, actor, action, version, comment) VALUES (?, ?, ?, ?, ?) RETURNING id',
        ts,
        actor.slice(0, 256),
        action,
        version,
        comment.slice(0, MAX_COMMENT),
      )
      .one();
    const event = {
      id: row.id,
      ts,
      actor,
      action,
      version,
      comment: comment.slice(0, MAX_COMMENT),
    };
    this.record(event);
    return event;
  }

  /**
   * The change's audit record, written by this object as it commits the change (so no change
   * goes unrecorded because a Worker gave up waiting); one that cannot be written is counted lost.
   */
  private record(event: PolicyEvent): void {
    const ns = this.audit;
    if (!ns) return;
    const stub = (name: string) => ns.get(ns.idFromName(name));
    this.ctx.waitUntil(
      stub(AUDIT_OBJECT)
        .append(policyEventRecord(event))
        .catch(() => stub(AUDIT_LOST_OBJECT).recordLost(1))
        .catch(() => undefined),
    );
  }

  private ref(version: number | null, withText: boolean): PolicyHead['active'] {
    if (version === null) return null;
    const row = this.sql
      .exec<{ sha256: string; text: string }>(
        `SELECT sha256, ${withText ? 'text' : "'' AS text"} FROM policy_versions WHERE version = ?`,
        version,
      )
      .toArray()[0];
    if (!row) return null;
    return withText
      ? { version, sha256: row.sha256, text: row.text }
      : { version, sha256: row.sha256 };
  }

  private meta(version: number | null): PolicyVersionMeta | null {
    if (version === null) return null;
    const row = this.sql
      .exec<MetaRow>(`SELECT ${META_COLUMNS} FROM policy_versions WHERE version = ?`, version)
      .toArray()[0];
    return row ? metaOf(row) : null;
  }

  private count(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM policy_versions').one().n;
  }

  private maxVersion(): number {
    return this.sql.exec<{ v: number }>('SELECT MAX(version) AS v FROM policy_versions').one().v;
  }

  private state(key: StateKey): number | null {
    return (
      this.sql
        .exec<{ value: number }>('SELECT value FROM policy_state WHERE key = ?', key)
        .toArray()[0]?.value ?? null
    );
  }

  private setState(key: StateKey, value: number | null): void {
    if (value === null) this.sql.exec('DELETE FROM policy_state WHERE key = ?', key);
    else
      this.sql.exec(
        'INSERT INTO policy_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
        key,
        value,
      );
  }
}

const META_COLUMNS = 'version, sha256, author, created, comment, replaces';

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
type EventRow = {
  id: number;
  ts: number;
  actor: string;
  action: string;
  version: number | null;
  comment: string;
};
type MetaRow = { [K in keyof PolicyVersionMeta]: PolicyVersionMeta[K] };

function metaOf(row: MetaRow): PolicyVersionMeta {
  return {
    version: row.version,
    sha256: row.sha256,
    author: row.author,
    created: row.created,
    comment: row.comment,
    replaces: row.replaces,
  };
}
