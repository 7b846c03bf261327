// The MCP agent: one Durable Object per MCP session (streamable HTTP or SSE). It only wires
// the SDK server to our tool seam; tools and policy never see McpAgent types.

import { McpAgent } from 'agents/mcp';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { auditEnabled, configuredSecrets, type AppEnv } from '../env';
import { identityFromProps } from '../identity';
import { approvalStore, approvalTtlMs } from '../approvals/config';
import { argsHasher } from '../audit/arg-hash';
import { recordGrantSession } from '../auth/grants';
import { AUDIT_LOST_OBJECT, AUDIT_OBJECT } from '../audit/names';
import type { AuditRecord } from '../audit/record';
import { counterObjectName, type CounterBackend } from '../counters/reserve';
import type { Decision } from '../policy/evaluate';
import { SqlCounters } from '../counters/sql-counters';
import { activePolicy } from '../policy/source';
import { scrubberFor } from '../secrets/scrub';
import { STORE_DEADLINE_MS, withDeadline } from '../stores/deadline';
import { TOOL_CATALOG, TOOLS } from '../tools';
import { SERVER_NAME, VERSION } from '../version';
import { makeScope } from './context';
import { installTools } from './tool-registry';
import { ToolFailure } from './tool-spec';

const INSTRUCTIONS = [
  'Proxmox VE tools. Reads (pve_get_*, pve_list_*) change nothing.',
  'Every write (start, shutdown, stop, reboot, suspend, resume, snapshots, create) sends nothing without confirm: true:',
  "call it first without confirm to get the exact request and the guest's state, show that to the user, and confirm only with their consent.",
  'Writes start Proxmox tasks: pass wait: true to wait for the end, or follow the returned upid with pve_get_task_status.',
  'A failed call has isError and structuredContent.error {kind, message, fields?: [{field, message}], upstream_status?}.',
  'A refusal by the server policy has structuredContent.policy {decision: deny | limited | approval_required, rule, reason, retry_after_s?}.',
  '[APPROVAL REQUIRED] carries approval_id and approval_url: give the user the link, and once they have approved call again with the same arguments and approval_id.',
].join(' ');

/** Storage key set when the session was ended by a revocation. */
const ENDED_KEY = 'ended';

/** Audit records are written after the answer: they may take longer than a call's stores. */
const AUDIT_DEADLINE_MS = 10_000;

export class ProxmoxMcp extends McpAgent<AppEnv, unknown, Record<string, unknown>> {
  // The low-level SDK server: our seam answers tools/list and tools/call itself, so that
  // validation, policy and logging wrap every call (McpServer would validate before us).
  server = new Server(
    { name: SERVER_NAME, title: 'Proxmox VE', version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );

  /** Session-scoped counters live in this session's own storage, so a new session starts at 0. */
  private sessionCounters: SqlCounters | undefined;

  private counterBackend(): CounterBackend {
    this.sessionCounters ??= new SqlCounters(this.ctx.storage.sql);
    const session = this.sessionCounters;
    const namespace = this.env.POLICY_COUNTERS;
    return {
      target: (scope, identity) => {
        if (scope === 'session') return session;
        const name = counterObjectName(scope, identity);
        const stub = namespace.get(namespace.idFromName(name));
        return {
          // A reservation that lands after its deadline was never counted on: give it back.
          reserve: (items, now) =>
            withDeadline(stub.reserve(items, now) as Promise<Decision | null>, STORE_DEADLINE_MS, `counters ${name}`, (late) => {
              if (late === null) this.ctx.waitUntil(stub.release(items).catch(() => undefined));
            }),
          release: (items) => withDeadline(stub.release(items), STORE_DEADLINE_MS, `counters ${name}`),
        };
      },
    };
  }

  /**
   * A session belongs to the grant that opened it: props carrying another grant never replace
   * the stored ones (the Worker refuses such requests; this holds even if a path misses it).
   */
  override async updateProps(props?: Record<string, unknown>): Promise<void> {
    const stored = identityFromProps(await this.ctx.storage.get('props'));
    const incoming = identityFromProps(props);
    if ((stored && (!incoming || incoming.grantId !== stored.grantId)) || (await this.ctx.storage.get(ENDED_KEY))) {
      console.warn(JSON.stringify({ msg: 'session_props_kept', session: this.name }));
      this.props = (await this.ctx.storage.get('props')) as Record<string, unknown>;
      return;
    }
    await super.updateProps(props);
    // The grant's first request here: remember the session under the grant, so that revoking
    // the grant ends it (../auth/grants.ts).
    if (!stored && incoming) {
      await recordGrantSession(this.env, incoming.grantId, this.name).catch((err: unknown) => {
        console.error(JSON.stringify({ msg: 'session_index_failed', error: err instanceof Error ? err.message.slice(0, 200) : 'unknown' }));
      });
    }
  }

  /**
   * Who opened this session (its grant), or null if it was never opened. For ownership checks:
   * an ended session belongs to nobody, so every grant is told it does not exist.
   */
  async owner(): Promise<{ userId: string; grantId: string } | null> {
    if (await this.ctx.storage.get(ENDED_KEY)) return { userId: '', grantId: '(ended)' };
    const identity = identityFromProps(this.props ?? (await this.ctx.storage.get('props')));
    return identity ? { userId: identity.userId, grantId: identity.grantId } : null;
  }

  /** Ends the session for good (its grant was revoked): open streams close, its id is dead. */
  async endSession(): Promise<void> {
    await this.ctx.storage.put(ENDED_KEY, Date.now());
    for (const connection of this.getConnections()) connection.close(1000, 'Access revoked');
  }

  /** The public origin this session was opened through (for approval page links). */
  private origin(): string {
    const fromProps = (this.props as { publicOrigin?: unknown } | undefined)?.publicOrigin;
    return typeof fromProps === 'string' ? fromProps : 'http://localhost:8787';
  }

  private recordAudit(record: AuditRecord): void {
    if (!auditEnabled(this.env)) return;
    const audit = this.env.AUDIT;
    const write = async (): Promise<void> => {
      try {
        await withDeadline(audit.get(audit.idFromName(AUDIT_OBJECT)).append(record), AUDIT_DEADLINE_MS, 'audit append');
      } catch (err) {
        // Never fail the call for its record; count the loss where the admin page shows it.
        console.error(JSON.stringify({ msg: 'audit_lost', request_id: record.request_id, error: err instanceof Error ? err.message.slice(0, 200) : 'unknown' }));
        await withDeadline(audit.get(audit.idFromName(AUDIT_LOST_OBJECT)).recordLost(1), AUDIT_DEADLINE_MS, 'audit lost').catch(() => undefined);
      }
    };
    this.ctx.waitUntil(write());
  }

  override async init(): Promise<void> {
    installTools(this.server, TOOLS, {
      approvals: () => ({
        store: () => approvalStore(this.env),
        url: (id) => `${this.origin()}/approvals/${id}`,
        ttlMs: approvalTtlMs(this.env),
      }),
      audit: (record) => this.recordAudit(record),
      policy: () => activePolicy(this.env.POLICY, TOOL_CATALOG),
      counters: () => this.counterBackend(),
      scope: (requestId) => {
        const identity = identityFromProps(this.props);
        // No identity means the session did not come through our auth layer: fail closed.
        if (!identity) throw new ToolFailure('config', 'This session has no signed-in identity; reconnect.');
        return makeScope(this.env, identity, requestId);
      },
      sessionId: () => this.name,
      scrubber: () => scrubberFor(configuredSecrets(this.env)),
      hashArgs: argsHasher(() => {
        const audit = this.env.AUDIT;
        return withDeadline(audit.get(audit.idFromName(AUDIT_OBJECT)).argsHashKey(), STORE_DEADLINE_MS, 'audit key');
      }),
    });
  }
}
