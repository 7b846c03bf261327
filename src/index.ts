// The Worker: routes /health and the MCP endpoints (/mcp streamable HTTP, /sse legacy SSE),
// guarding them according to AUTH_MODE. The MCP agent class is exported for its DO binding.

import { Hono, type Context } from 'hono';
import { env as startupEnv } from 'cloudflare:workers';
import { authMode, pveConfig, type AppEnv } from './env';
import { loopbackViolation } from './guard';
import { ANONYMOUS } from './identity';
import { ProxmoxMcp } from './mcp/agent';
import { formatErrors } from './policy/load';
import { activePolicy } from './policy/source';
import { TOOL_CATALOG } from './tools';
import { VERSION } from './version';

export { ProxmoxMcp };
export { PolicyCounters } from './counters/policy-counters';

const streamable = ProxmoxMcp.serve('/mcp');
const sse = ProxmoxMcp.serveSSE('/sse');

// Said once per isolate start, so an operator sees it in `wrangler dev` and in Workers Logs.
if ((startupEnv as AppEnv).AUTH_MODE === 'none') {
  console.warn(
    'AUTH_MODE=none: no authentication. Only loopback requests are served (Host and Origin must be localhost); everything else gets 403.',
  );
}

const app = new Hono<{ Bindings: AppEnv }>();

app.use('*', async (c, next) => {
  const mode = authMode(c.env);
  if (typeof mode !== 'string') return c.json({ error: 'misconfigured', message: mode.error }, 500);
  if (mode === 'none') {
    const why = loopbackViolation(c.req.raw);
    if (why) {
      return c.json(
        { error: 'forbidden', message: `${why}. With AUTH_MODE=none this server only answers loopback requests.` },
        403,
      );
    }
  }
  await next();
});

app.get('/health', (c) => {
  const pve = pveConfig(c.env);
  const policy = activePolicy(c.env.POLICY, TOOL_CATALOG);
  const problems = [
    ...('error' in pve ? [pve.error] : []),
    ...(policy.ok ? [] : [`policy (${policy.origin}) is invalid; every tool call is denied:\n${formatErrors(policy.errors)}`]),
  ];
  return c.json({
    ok: problems.length === 0,
    version: VERSION,
    auth_mode: authMode(c.env),
    proxmox: 'error' in pve ? { configured: false } : { configured: true, via: pve.binding ? 'service-binding' : 'url' },
    policy: policy.ok ? { origin: policy.origin, valid: true } : { origin: policy.origin, valid: false, errors: policy.errors },
    ...(problems.length ? { problems } : {}),
  });
});

type AppContext = Context<{ Bindings: AppEnv }>;

function serveMcp(c: AppContext, handler: typeof streamable): Promise<Response> | Response {
  if (authMode(c.env) !== 'none') {
    return new Response(JSON.stringify({ error: 'unavailable', message: 'AUTH_MODE=oauth is not set up on this server yet.' }), {
      status: 503,
      headers: { 'content-type': 'application/json' },
    });
  }
  const ctx = c.executionCtx as ExecutionContext & { props?: unknown };
  ctx.props = { ...ANONYMOUS };
  return handler.fetch(c.req.raw, c.env, ctx);
}

app.all('/mcp', (c) => serveMcp(c, streamable));
app.all('/sse', (c) => serveMcp(c, sse));
app.all('/sse/*', (c) => serveMcp(c, sse));

app.notFound((c) => c.json({ error: 'not_found', message: 'Try /mcp (streamable HTTP), /sse (SSE) or /health.' }, 404));
app.onError((err, c) => {
  console.error(JSON.stringify({ msg: 'unhandled', error: `${err.name}: ${err.message}`.slice(0, 300) }));
  return c.json({ error: 'internal', message: 'Internal error.' }, 500);
});

export default app;
