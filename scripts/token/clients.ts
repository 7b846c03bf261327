// The OAuth clients `npm run token` registered, one per server, kept in
// <state>/token-clients.json (state: PERSIST_TO when set, as for npm start, else .wrangler/ in the
// checkout). Signing a person in again through the same client replaces their earlier grant to it
// (the OAuth library revokes a person's older grants to one client), so /admin shows one grant per
// person and client, not one per run.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What is kept per server: the client id and, once used, the authorization server it belongs to. */
export interface SavedClient {
  client_id: string;
  issuer?: string;
}

export class SavedClients {
  readonly file: string;

  constructor(stateDir: string) {
    this.file = path.join(stateDir, 'token-clients.json');
  }

  static forCheckout(root: string, env: Record<string, string | undefined>): SavedClients {
    return new SavedClients(
      env.PERSIST_TO ? path.resolve(env.PERSIST_TO) : path.join(root, '.wrangler'),
    );
  }

  get(server: string): SavedClient | undefined {
    const entry = this.all()[server];
    return entry && typeof entry.client_id === 'string' ? entry : undefined;
  }

  set(server: string, client: SavedClient | undefined): void {
    const all = this.all();
    if (client) all[server] = { client_id: client.client_id, issuer: client.issuer };
    else delete all[server];
    mkdirSync(path.dirname(this.file), { recursive: true });
    // Written whole, then renamed over the old file: a run beside this one reads one or the other.
    const next = `${this.file}.${process.pid}`;
    writeFileSync(next, `${JSON.stringify(all, null, 2)}\n`);
    renameSync(next, this.file);
  }

  private all(): Record<string, SavedClient> {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as unknown;
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, SavedClient>) : {};
    } catch {
      return {};
    }
  }
}

/**
 * Whether the server still knows `clientId` (its state may have been reset since): a refresh
 * request with a made-up token answers `invalid_client` for a client it does not know and
 * `invalid_grant` for one it does (a malformed token, refused before any grant is read), and
 * changes nothing either way; the server logs it as a refused token request.
 */
export async function clientKnown(tokenEndpoint: string, clientId: string): Promise<boolean> {
  const res = await fetch(tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: 'probe',
      client_id: clientId,
    }),
  });
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  return body.error !== 'invalid_client';
}
