// The Worker. AUTH_MODE=none: no sign-in, loopback requests only (DNS-rebinding protection).
// AUTH_MODE=oauth (the default): an OAuth 2.1 authorization server in front of /mcp and /sse,
// signing people in through the configured identity provider.

import { Hono, type Context } from 'hono';
import { env as startupEnv } from 'cloudflare:workers';
import { idpKind, publicOrigin } from './auth/config';
import { providerFor } from './auth/provider';
import { authMode, type AppEnv } from './env';
import { loopbackViolation } from './guard';
import { health } from './health';
import { ANONYMOUS } from './identity';
import { mcpApi } from './mcp/api';
import { webRoutes } from './web/routes';

export { ProxmoxMcp } from './mcp/agent';
export { PolicyCounters } from './counters/policy-counters';
export { Approvals } from './approvals/approvals-store';
export { AuditLog } from './audit/audit-log';

// Said once per isolate start, so an operator sees it in `wrangler dev` and in Workers Logs.
const startup = startupEnv as AppEnv;
if (startup.AUTH_MODE === 'none') {
  console.warn(
    'AUTH_MODE=none: no authentication. Only loopback requests are served (Host and Origin must be localhost); everything else gets 403.',
  );
}
if (startup.AUDIT_ENABLED?.trim().toLowerCase() === 'false') {
  console.warn('AUDIT_ENABLED=false: tool calls are not recorded in the audit trail.');
}
if (startup.AUTH_MODE !== 'none' && startup.IDP === 'dev') {
  console.warn('IDP=dev: the local development sign-in believes any name typed into it. Only loopback requests are served.');
}

/** AUTH_MODE=none: health and the MCP endpoints as the anonymous local user. */
const local = new Hono<{ Bindings: AppEnv }>();
local.get('/health', health);
const asAnonymous = (c: Context<{ Bindings: AppEnv }>): Promise<Response> => {
  // Hono types its execution context loosely; it is the Worker's own.
  const ctx = c.executionCtx as unknown as ExecutionContext & { props?: unknown };
  ctx.props = { ...ANONYMOUS };
  return mcpApi.fetch(c.req.raw, c.env, ctx);
};
local.all('/mcp', asAnonymous);
local.all('/sse', asAnonymous);
local.all('/sse/*', asAnonymous);
local.route('/', webRoutes);
local.notFound((c) => c.json({ error: 'not_found', message: 'Try /mcp (streamable HTTP), /sse (SSE) or /health.' }, 404));
local.onError((err, c) => {
  console.error(JSON.stringify({ msg: 'unhandled', error: `${err.name}: ${err.message}`.slice(0, 300) }));
  return c.json({ error: 'internal', message: 'Internal error.' }, 500);
});

function refuse(status: number, error: string, message: string): Response {
  return new Response(JSON.stringify({ error, message }), { status, headers: { 'content-type': 'application/json' } });
}

export default {
  async fetch(request: Request, env: AppEnv, ctx: ExecutionContext): Promise<Response> {
    const mode = authMode(env);
    if (typeof mode !== 'string') return refuse(500, 'misconfigured', mode.error);
    const loopbackOnly = mode === 'none' || idpKind(env) === 'dev';
    if (loopbackOnly) {
      const why = loopbackViolation(request);
      if (why) {
        const reason = mode === 'none' ? 'With AUTH_MODE=none' : 'With the development sign-in (IDP=dev)';
        return refuse(403, 'forbidden', `${why}. ${reason} this server only answers loopback requests.`);
      }
    }
    if (mode === 'none') return local.fetch(request, env, ctx);
    // A copy per request: the OAuth library caches its helpers on env, which one isolate shares
    // across hostnames (one provider each); the first hostname's would serve the others.
    return providerFor(publicOrigin(env, request)).fetch(request, { ...env }, ctx);
  },
} satisfies ExportedHandler<AppEnv>;
