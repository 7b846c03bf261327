// The policy store's SQLite tables (./policy-store.ts decides; this reads and writes rows):
// policy_versions (version INTEGER PRIMARY KEY, text, sha256, author, created, comment,
// replaces), policy_state (key TEXT PRIMARY KEY, value INTEGER: generation, active, shadow,
// shadow_since, shadow_count), policy_deploys (sha256 TEXT PRIMARY KEY, seen, version, problems,
// catalog), policy_events (id, ts, actor, action, version, comment, forced), shadow_disagreements (id,
// shadow_version, body: one JSON row each, at most MAX_DISAGREEMENTS kept).

import type {
  NewVersion,
  PolicyEvent,
  PolicyHead,
  PolicyVersion,
  PolicyVersionMeta,
  ShadowDisagreement,
} from './types';

/** Disagreements kept (the count keeps counting past it). */
const MAX_DISAGREEMENTS = 5_000;
export const MAX_LISTED = 200;
export const MAX_COMMENT = 500;

export type StateKey = 'generation' | 'active' | 'shadow' | 'shadow_since' | 'shadow_count';

export class PolicyTables {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS policy_versions (
      version INTEGER PRIMARY KEY, text TEXT NOT NULL, sha256 TEXT NOT NULL, author TEXT NOT NULL,
      created INTEGER NOT NULL, comment TEXT NOT NULL, replaces INTEGER)`);
    sql.exec(
      'CREATE TABLE IF NOT EXISTS policy_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL)',
    );
    sql.exec(`CREATE TABLE IF NOT EXISTS policy_deploys (
      sha256 TEXT PRIMARY KEY, seen INTEGER NOT NULL, version INTEGER, problems TEXT,
      catalog TEXT)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS policy_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT, ts INTEGER NOT NULL, actor TEXT NOT NULL,
      action TEXT NOT NULL, version INTEGER, comment TEXT NOT NULL)`);
    // Added in place for stores made before changes could be forced: 1 when one was.
    const columns = sql.exec<{ name: string }>('PRAGMA table_info(policy_events)').toArray();
    if (!columns.some((c) => c.name === 'forced'))
      sql.exec('ALTER TABLE policy_events ADD COLUMN forced INTEGER');
    sql.exec(`CREATE TABLE IF NOT EXISTS shadow_disagreements (
      id INTEGER PRIMARY KEY AUTOINCREMENT, shadow_version INTEGER NOT NULL, body TEXT NOT NULL)`);
  }

  state(key: StateKey): number | null {
    return (
      this.sql
        .exec<{ value: number }>('SELECT value FROM policy_state WHERE key = ?', key)
        .toArray()[0]?.value ?? null
    );
  }

  setState(key: StateKey, value: number | null): void {
    if (value === null) this.sql.exec('DELETE FROM policy_state WHERE key = ?', key);
    else
      this.sql.exec(
        'INSERT INTO policy_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
        key,
        value,
      );
  }

  /**
   * One more activation or shadow change: isolates compare this number. A store's first is the
   * time it is made (ms), so a store emptied and begun again (its storage deleted) counts on from
   * above any number an isolate holds from before, never meeting one of them again.
   */
  bump(now: number): void {
    const generation = this.state('generation');
    this.setState('generation', generation === null ? now : generation + 1);
  }

  meta(version: number | null): PolicyVersionMeta | null {
    if (version === null) return null;
    const row = this.sql
      .exec<MetaRow>(`SELECT ${META_COLUMNS} FROM policy_versions WHERE version = ?`, version)
      .toArray()[0];
    return row ? metaOf(row) : null;
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

  /** A version as a check gets it: its text only when asked. */
  ref(version: number | null, withText: boolean): PolicyHead['active'] {
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

  isEmpty(): boolean {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM policy_versions').one().n === 0;
  }

  /** Adds a version (the next number), replacing the active one; answers its number. */
  insert(input: Pick<NewVersion, 'text' | 'author' | 'comment'>, sha: string, now: number): number {
    const max = this.sql
      .exec<{ v: number | null }>('SELECT MAX(version) AS v FROM policy_versions')
      .one().v;
    const version = (max ?? 0) + 1;
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

  versions(): PolicyVersionMeta[] {
    return this.sql
      .exec<MetaRow>(
        `SELECT ${META_COLUMNS} FROM policy_versions ORDER BY version DESC LIMIT ?`,
        MAX_LISTED,
      )
      .toArray()
      .map(metaOf);
  }

  addEvent(event: Omit<PolicyEvent, 'id'>): PolicyEvent {
    const comment = event.comment.slice(0, MAX_COMMENT);
    const actor = event.actor.slice(0, 256);
    const row = this.sql
      .exec<{ id: number }>(
        'INSERT INTO policy_events (ts, actor, action, version, comment, forced) VALUES (?, ?, ?, ?, ?, ?) RETURNING id',
        event.ts,
        actor,
        event.action,
        event.version,
        comment,
        event.forced ? 1 : null,
      )
      .one();
    return { ...event, id: row.id, actor, comment };
  }

  events(): PolicyEvent[] {
    return this.sql
      .exec<EventRow>(
        'SELECT id, ts, actor, action, version, comment, forced FROM policy_events ORDER BY id DESC LIMIT ?',
        MAX_LISTED,
      )
      .toArray()
      .map(({ forced, ...e }) => ({
        ...e,
        action: e.action as PolicyEvent['action'],
        ...(forced ? { forced: true } : {}),
      }));
  }

  /** The newest activation (by a person or a deploy): who and when. */
  lastActivation(): { actor: string; ts: number } | null {
    return (
      this.sql
        .exec<{ actor: string; ts: number }>(
          "SELECT actor, ts FROM policy_events WHERE action IN ('activate', 'deploy') ORDER BY id DESC LIMIT 1",
        )
        .toArray()[0] ?? null
    );
  }

  deploy(sha: string): { problems: string[] | null; catalog: string | null } | null {
    const row = this.sql
      .exec<{ problems: string | null; catalog: string | null }>(
        'SELECT problems, catalog FROM policy_deploys WHERE sha256 = ?',
        sha,
      )
      .toArray()[0];
    return row
      ? {
          problems: row.problems ? (JSON.parse(row.problems) as string[]) : null,
          catalog: row.catalog,
        }
      : null;
  }

  /** Records a deployed text: taken in as `version`, or refused with `problems`. */
  saveDeploy(
    sha: string,
    now: number,
    outcome: { version: number } | { problems: string[] },
    catalog: string,
  ): void {
    this.sql.exec(
      `INSERT INTO policy_deploys (sha256, seen, version, problems, catalog) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(sha256) DO UPDATE SET seen = excluded.seen, version = excluded.version,
         problems = excluded.problems, catalog = excluded.catalog`,
      sha,
      now,
      'version' in outcome ? outcome.version : null,
      'problems' in outcome ? JSON.stringify(outcome.problems) : null,
      catalog,
    );
  }

  lastDeployProblems(): string[] | null {
    const row = this.sql
      .exec<{ problems: string | null }>(
        'SELECT problems FROM policy_deploys ORDER BY seen DESC, rowid DESC LIMIT 1',
      )
      .toArray()[0];
    return row?.problems ? (JSON.parse(row.problems) as string[]) : null;
  }

  addDisagreement(d: ShadowDisagreement): void {
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

  clearDisagreements(): void {
    this.sql.exec('DELETE FROM shadow_disagreements');
  }
}

const META_COLUMNS = 'version, sha256, author, created, comment, replaces';

type EventRow = {
  id: number;
  ts: number;
  actor: string;
  action: string;
  version: number | null;
  comment: string;
  forced: number | null;
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
