// The MCP agent: one Durable Object per MCP session (streamable HTTP or SSE). It only wires
// the SDK server to our tool seam; tools and policy never see McpAgent types.

import { McpAgent } from 'agents/mcp';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { auditEnabled, type AppEnv } from '../env';
import { identityFromProps } from '../identity';
import { approvalStore, approvalTtlMs } from '../approvals/config';
import { AUDIT_LOST_OBJECT, AUDIT_OBJECT } from '../audit/names';
import type { AuditRecord } from '../audit/record';
import { counterObjectName, type CounterBackend } from '../counters/reserve';
import { SqlCounters } from '../counters/sql-counters';
import { activePolicy } from '../policy/source';
import { TOOL_CATALOG, TOOLS } from '../tools';
import { SERVER_NAME, VERSION } from '../version';
import { makeScope } from './context';
import { installTools } from './tool-registry';
import { ToolFailure } from './tool-spec';

const INSTRUCTIONS =
  'Proxmox VE tools. pve_list_vms lists VMs and containers across the cluster. ' +
  'pve_create_qemu_vm creates a VM only with confirm=true; call it first without confirm to ' +
  'preview the exact parameters, show them to the user, and confirm only with their consent.';

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
      target: (scope, identity) =>
        scope === 'session' ? session : namespace.get(namespace.idFromName(counterObjectName(scope, identity))),
    };
  }

  /**
   * A session belongs to the grant that opened it: props carrying another grant never replace
   * the stored ones (the Worker refuses such requests; this holds even if a path misses it).
   */
  override async updateProps(props?: Record<string, unknown>): Promise<void> {
    const stored = identityFromProps(await this.ctx.storage.get('props'));
    const incoming = identityFromProps(props);
    if (stored && (!incoming || incoming.grantId !== stored.grantId)) {
      console.warn(JSON.stringify({ msg: 'session_props_kept', session: this.name }));
      this.props = (await this.ctx.storage.get('props')) as Record<string, unknown>;
      return;
    }
    await super.updateProps(props);
  }

  /** Who opened this session (its grant), or null if it was never opened. For ownership checks. */
  async owner(): Promise<{ userId: string; grantId: string } | null> {
    const identity = identityFromProps(this.props ?? (await this.ctx.storage.get('props')));
    return identity ? { userId: identity.userId, grantId: identity.grantId } : null;
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
        await audit.get(audit.idFromName(AUDIT_OBJECT)).append(record);
      } catch (err) {
        // Never fail the call for its record; count the loss where the admin page shows it.
        console.error(JSON.stringify({ msg: 'audit_lost', request_id: record.request_id, error: err instanceof Error ? err.message.slice(0, 200) : 'unknown' }));
        await audit.get(audit.idFromName(AUDIT_LOST_OBJECT)).recordLost(1).catch(() => undefined);
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
    });
  }
}
