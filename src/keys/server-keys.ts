// The server's own secret keys, in a Durable Object of their own: `args_hmac` keys the argument
// HMAC (../audit/arg-hash.ts) that audit records and approvals carry; `request_state` signs the
// state a 2026-07-28 client echoes back when it answers a question (../mcp/modern/). Each is 32
// random bytes, base64, made on first use and kept for good (so what it keys stays comparable
// across restarts and isolates), and never leaves the server.
//
// Storage: one SQLite table, server_keys (name TEXT PRIMARY KEY, value TEXT). A deployment from
// before this object existed kept its keys in the audit object; the first request for a key takes
// that one over, so argument HMACs stay comparable across the upgrade.

import { DurableObject } from 'cloudflare:workers';
import { AUDIT_OBJECT } from '../audit/names';
import type { AuditObject } from '../audit/record';
import type { Bound } from '../stores/stubs';
import { type KeysObject, SERVER_KEY_NAMES, type ServerKeyName } from './names';

const NAMES: readonly string[] = SERVER_KEY_NAMES;

export class ServerKeys extends DurableObject implements KeysObject {
  private readonly audit: Bound<AuditObject> | undefined;

  constructor(ctx: DurableObjectState, env: { AUDIT?: Bound<AuditObject> }) {
    super(ctx, env);
    this.audit = env.AUDIT;
    ctx.storage.sql.exec(
      'CREATE TABLE IF NOT EXISTS server_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL)',
    );
  }

  async key(name: ServerKeyName): Promise<string> {
    if (!NAMES.includes(name)) throw new RangeError('unknown server key');
    const stored = this.stored(name);
    if (stored) return stored;
    const legacy = this.audit
      ? await this.audit.get(this.audit.idFromName(AUDIT_OBJECT)).legacyServerKey(name)
      : null;
    // Another request may have made it while we asked: the first one stored wins.
    const made = this.stored(name);
    if (made) return made;
    const key = legacy ?? btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    this.ctx.storage.sql.exec('INSERT INTO server_keys (name, value) VALUES (?, ?)', name, key);
    return key;
  }

  private stored(name: string): string | null {
    return (
      this.ctx.storage.sql
        .exec<{ value: string }>('SELECT value FROM server_keys WHERE name = ?', name)
        .toArray()[0]?.value ?? null
    );
  }
}
