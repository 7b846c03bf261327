// The 2025 era: one McpAgent Durable Object per MCP session (streamable HTTP or SSE). It wires
// the SDK v1 server to the tool seam and keeps what only a session has: its owner (the grant
// that opened it), its session-scoped counters, and its end when the grant is revoked.

import { errorText, logLine } from '../../log';
import { McpAgent } from 'agents/mcp';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { recordGrantSession } from '../../auth/grants';
import { composeHost } from '../../compose/call-host';
import { type Runtime, runtimeOf } from '../../compose/runtime';
import { INSTRUCTIONS, SERVER_INFO } from '../../compose/server-info';
import { WindowCounters } from '../../counters/window-counters';
import type { AppEnv, SessionObject } from '../../env';
import { identityFromProps } from '../../core/identity';
import { sameScopes } from '../../auth/sessions';
import { installTools } from './tools';

/** Storage key set when the session was ended by a revocation. */
const ENDED_KEY = 'ended';

export class ProxmoxMcp
  extends McpAgent<AppEnv, unknown, Record<string, unknown>>
  implements SessionObject
{
  // The low-level SDK server: our seam answers tools/list and tools/call itself, so that
  // validation, policy and logging wrap every call (McpServer would validate before us).
  server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });

  /** Session-scoped counters live in this session's own storage, so a new session starts at 0. */
  private sessionCounters: WindowCounters | undefined;

  /**
   * A session belongs to the grant that opened it, with the scopes of the token that opened it:
   * props carrying another grant or other scopes never replace the stored ones (the Worker
   * refuses such requests, ../../auth/sessions.ts; this holds even if a path misses it).
   */
  override async updateProps(props?: Record<string, unknown>): Promise<void> {
    const storedProps = await this.ctx.storage.get<Record<string, unknown>>('props');
    const stored = identityFromProps(storedProps);
    const incoming = identityFromProps(props);
    if (
      (stored &&
        (!incoming ||
          incoming.grantId !== stored.grantId ||
          !sameScopes(incoming.scopes, stored.scopes))) ||
      (await this.ctx.storage.get(ENDED_KEY))
    ) {
      logLine('warn', 'session_props_kept', { session: this.name });
      this.props = storedProps as Record<string, unknown>;
      return;
    }
    await super.updateProps(props);
    // The grant's first request here: remember the session under the grant, so that revoking
    // the grant ends it (../auth/grants.ts).
    if (!stored && incoming) {
      await recordGrantSession(this.runtime.stores.kv, incoming.grantId, this.name).catch(
        (err: unknown) => {
          logLine('error', 'session_index_failed', { error: errorText(err, 200) });
        },
      );
    }
  }

  /**
   * Who opened this session (its grant), or null if it was never opened. For ownership checks:
   * an ended session belongs to nobody, so every grant is told it does not exist.
   */
  async owner(): Promise<{ userId: string; grantId: string; scopes: readonly string[] } | null> {
    if (await this.ctx.storage.get(ENDED_KEY))
      return { userId: '', grantId: '(ended)', scopes: [] };
    const identity = identityFromProps(this.props ?? (await this.ctx.storage.get('props')));
    return identity
      ? { userId: identity.userId, grantId: identity.grantId, scopes: identity.scopes }
      : null;
  }

  /** Ends the session for good (its grant was revoked): open streams close, its id is dead. */
  async endSession(): Promise<void> {
    await this.ctx.storage.put(ENDED_KEY, this.runtime.clock.now());
    for (const connection of this.getConnections()) connection.close(1000, 'Access revoked');
  }

  /** The Runtime (../../compose/runtime.ts) of this object's environment. */
  private get runtime(): Runtime {
    return runtimeOf(this.env);
  }

  /** The public origin this session was opened through (for approval page links). */
  private origin(): string {
    const fromProps = (this.props as { publicOrigin?: unknown } | undefined)?.publicOrigin;
    return typeof fromProps === 'string' ? fromProps : 'http://localhost:8787';
  }

  override async init(): Promise<void> {
    this.sessionCounters ??= await WindowCounters.load(this.ctx.storage);
    const host = composeHost(this.runtime, {
      sessionId: this.name,
      sessionCounters: this.sessionCounters,
      identity: () => identityFromProps(this.props),
      publicOrigin: () => this.origin(),
      waitUntil: (work) => this.ctx.waitUntil(work),
    });
    // The scopes the session was opened with: every request to it carries a token with the same.
    installTools(
      this.server,
      this.runtime.tools,
      host,
      () => identityFromProps(this.props)?.scopes ?? [],
    );
  }
}
