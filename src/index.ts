// The Worker: the one app (./app/app.ts) and the Durable Object classes it binds. AUTH_MODE=none:
// no sign-in, loopback requests only. AUTH_MODE=oauth (the default): an OAuth 2.1 authorization
// server in front of /mcp and /sse, signing people in through the configured identity provider.

import { env as startupEnv } from 'cloudflare:workers';
import { app } from './app/app';
import { runtimeOf } from './compose/runtime';
import { handleNotifications } from './notify/deliver';
import type { NotifyMessage } from './notify/event-formats';
import type { AppEnv } from './env';

export { ProxmoxMcp } from './mcp/legacy/agent';
export { PolicyCounters } from './counters/policy-counters';
export { Approvals } from './approvals/approvals-store';
export { AuditLog } from './audit/audit-log';
export { ServerKeys } from './keys/server-keys';
export { PolicyStore } from './policy-store/policy-store';

// Said once per isolate start, so an operator sees it in `wrangler dev` and in Workers Logs.
const { config } = runtimeOf(startupEnv as AppEnv);
if (config.authMode === 'none') {
  console.warn(
    'AUTH_MODE=none: no authentication. Only loopback requests are served (Host and Origin must be localhost); everything else gets 403.',
  );
}
if (!config.audit.enabled) {
  console.warn('AUDIT_ENABLED=false: tool calls are not recorded in the audit trail.');
}
if (config.authMode !== 'none' && config.signIn.idpKind === 'dev') {
  console.warn(
    'IDP=dev: the local development sign-in believes any name typed into it. Only loopback requests are served.',
  );
}

export default {
  fetch(request: Request, env: AppEnv, ctx: ExecutionContext): Promise<Response> {
    return Promise.resolve(app.fetch(request, env, ctx));
  },
  /** Approval notifications (NOTIFY_QUEUE): fanned out to the receivers, delivered, retried. */
  queue(batch: MessageBatch<NotifyMessage>, env: AppEnv): Promise<void> {
    const runtime = runtimeOf(env);
    return handleNotifications(batch, {
      ...runtime.config.notify,
      queue: env.NOTIFY_QUEUE,
      undelivered: (target) => runtime.stores.approvals().countUndelivered(target),
      now: () => runtime.clock.now(),
    });
  },
} satisfies ExportedHandler<AppEnv, NotifyMessage>;
