// The Worker. AUTH_MODE=none: no sign-in, loopback requests only (DNS-rebinding protection),
// same-origin browsers only. AUTH_MODE=oauth (the default): an OAuth 2.1 authorization server
// in front of /mcp and /sse, signing people in through the configured identity provider.
// Every request body is read with a size cap (chunked ones too); no request gets a stack trace.

import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { env as startupEnv } from 'cloudflare:workers';
import { idpKind, publicOrigin } from './auth/config';
import { providerFor } from './app/oauth';
import { configOf, envCopy } from './config';
import type { AppEnv } from './env';
import { crossOriginViolation, loopbackViolation, withCors } from './guard';
import { MAX_MESSAGE_DEPTH } from './http/json-depth';
import { readMcpBody } from './http/mcp-body';
import { health } from './health';
import { ANONYMOUS } from './identity';
import { mcpApi } from './mcp/route';
import { webRoutes } from './web/routes';

export { ProxmoxMcp } from './mcp/legacy/agent';
export { PolicyCounters } from './counters/policy-counters';
export { Approvals } from './approvals/approvals-store';
export { AuditLog } from './audit/audit-log';

/** MCP messages: the MCP transports' own limit, now also for bodies sent without a length. */
const MCP_BODY_LIMIT = 4 * 1024 * 1024;
/** Everything else (sign-in and web forms, token and registration requests) is small. */
const FORM_BODY_LIMIT = 64 * 1024;

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
  console.warn(
    'IDP=dev: the local development sign-in believes any name typed into it. Only loopback requests are served.',
  );
}

type AppContext = Context<{ Bindings: AppEnv }>;

/** AUTH_MODE=none: health and the MCP endpoints as the anonymous local user. */
const local = new Hono<{ Bindings: AppEnv }>();
local.get('/health', health);
const asAnonymous = (c: AppContext): Promise<Response> => {
  // Hono types its execution context loosely; it is the Worker's own.
  const ctx = c.executionCtx as unknown as ExecutionContext & { props?: unknown };
  ctx.props = { ...ANONYMOUS };
  return mcpApi.fetch(c.req.raw, c.env, ctx);
};
local.all('/mcp', asAnonymous);
local.all('/sse', asAnonymous);
local.all('/sse/*', asAnonymous);
local.route('/', webRoutes);
local.notFound((c) =>
  c.json(
    { error: 'not_found', message: 'Try /mcp (streamable HTTP), /sse (SSE) or /health.' },
    404,
  ),
);
local.onError((err, c) => {
  logUnhandled(err);
  return c.json({ error: 'internal', message: 'Internal error.' }, 500);
});

function refuse(status: number, error: string, message: string): Response {
  return new Response(JSON.stringify({ error, message }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function logUnhandled(err: unknown): void {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  console.error(JSON.stringify({ msg: 'unhandled', error: text.slice(0, 300) }));
}

const tooLarge = (limit: number) => (c: AppContext) =>
  c.json(
    { error: 'payload_too_large', message: `The request body is larger than ${limit} bytes.` },
    413,
  );

const SUFFIXED_RESOURCE_METADATA = /^\/\.well-known\/oauth-protected-resource\/(?:mcp|sse)\/?$/;

/** Pages a person opens in a browser: with PUBLIC_URL set they live on that origin only. */
const BROWSER_PATHS = /^\/(?:authorize|login|admin(?:\/.*)?|approvals\/[^/]+|dev-idp\/login)$/;

const entry = new Hono<{ Bindings: AppEnv }>();
/**
 * An MCP message is read once here: one nested absurdly deep is refused before any code walks it
 * (see json-depth.ts); the rest go on with their parse (see mcp-body.ts).
 */
const mcpBody = async (c: AppContext, next: () => Promise<void>): Promise<Response | undefined> => {
  const read = await readMcpBody(c.req.raw);
  if ('request' in read) {
    c.req.raw = read.request;
    await next();
    return undefined;
  }
  return c.json(
    {
      jsonrpc: '2.0',
      error: {
        code: -32602,
        message: `Invalid params: the message nests more than ${MAX_MESSAGE_DEPTH} levels deep.`,
      },
      id: null,
    },
    400,
  );
};
entry.use(
  '/mcp',
  bodyLimit({ maxSize: MCP_BODY_LIMIT, onError: tooLarge(MCP_BODY_LIMIT) }),
  mcpBody,
);
entry.use(
  '/sse/*',
  bodyLimit({ maxSize: MCP_BODY_LIMIT, onError: tooLarge(MCP_BODY_LIMIT) }),
  mcpBody,
);
entry.use('*', async (c, next) => {
  const path = c.req.path;
  if (path === '/mcp' || path.startsWith('/sse/')) return next();
  return bodyLimit({ maxSize: FORM_BODY_LIMIT, onError: tooLarge(FORM_BODY_LIMIT) })(c, next);
});
entry.all('*', (c) => dispatch(c.req.raw, c.env, c.executionCtx as unknown as ExecutionContext));
entry.onError((err) => {
  logUnhandled(err);
  return refuse(500, 'internal', 'Internal error.');
});

async function dispatch(request: Request, env: AppEnv, ctx: ExecutionContext): Promise<Response> {
  const mode = configOf(env).authMode;
  if (typeof mode !== 'string') return refuse(500, 'misconfigured', mode.error);
  const loopbackOnly = mode === 'none' || idpKind(env) === 'dev';
  if (loopbackOnly) {
    const why = loopbackViolation(request);
    if (why) {
      const reason =
        mode === 'none' ? 'With AUTH_MODE=none' : 'With the development sign-in (IDP=dev)';
      return refuse(
        403,
        'forbidden',
        `${why}. ${reason} this server only answers loopback requests.`,
      );
    }
  }
  if (mode === 'none') {
    // Nobody signs in, so a browser page on another origin would act as the user: refuse it.
    const allowed = configOf(env).corsOrigins;
    const why = crossOriginViolation(request, allowed);
    if (why)
      return refuse(
        403,
        'forbidden',
        `${why}. With AUTH_MODE=none only same-origin browser requests are served.`,
      );
    if (request.method === 'OPTIONS')
      return withCors(new Response(null, { status: 204 }), request, allowed);
    return withCors(await local.fetch(request, env, ctx), request, allowed);
  }
  const origin = publicOrigin(env, request);
  const url = new URL(request.url);
  if (origin !== url.origin && request.method === 'GET' && BROWSER_PATHS.test(url.pathname)) {
    // Sign-in works on the public origin (its callback is the one registered with the IdP).
    return Response.redirect(`${origin}${url.pathname}${url.search}`, 302);
  }
  let provider;
  try {
    provider = providerFor(origin);
  } catch (err) {
    logUnhandled(err);
    return refuse(
      400,
      'unsupported_origin',
      `This server cannot sign anyone in at ${origin.slice(0, 100)}. Use its https address, or http://localhost or http://127.0.0.1 locally.`,
    );
  }
  // Clients look for the path-suffixed metadata of the resource they were given (RFC 9728 §3.1)
  // before the root one; the library serves only the root one, which covers /mcp and /sse.
  const forwarded = SUFFIXED_RESOURCE_METADATA.test(url.pathname)
    ? new Request(new URL('/.well-known/oauth-protected-resource', url), request)
    : request;
  // The OAuth library keeps its helpers on the env object it is given (only when absent): each
  // request gets its own copy, so one origin's provider never answers for another's.
  return provider.fetch(forwarded, envCopy(env), ctx);
}

export default {
  fetch(request: Request, env: AppEnv, ctx: ExecutionContext): Promise<Response> {
    return Promise.resolve(entry.fetch(request, env, ctx));
  },
} satisfies ExportedHandler<AppEnv>;
