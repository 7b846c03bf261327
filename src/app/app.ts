// The Worker's one Hono app. Every request first gets the body caps (chunked bodies too, before
// any other work: ../http/body-cap.ts), then the Runtime; then the door: AUTH_MODE=none serves
// loopback requests only (DNS-rebinding protection) from same-origin browsers, as the anonymous
// local person; AUTH_MODE=oauth hands the request to the OAuth 2.1 authorization server
// (../app/oauth.ts), which serves its own endpoints, checks the token of /mcp and /sse and passes
// everything else back here, to the pages. One not-found answer and one error handler: no
// request gets a stack trace.

import { errorText, logLine } from '../log';
import { Hono, type Context, type MiddlewareHandler, type Next } from 'hono';
import { authRoutes } from '../auth/authorize';
import { publicOrigin } from '../auth/config';
import { CALLBACK_PATH } from '../auth/idp';
import { DEV_LOGIN_PATH } from '../auth/idp-dev';
import { type AppBindings, cameThroughProvider, providerEnv, runtimeOf } from '../compose/runtime';
import { crossOriginViolation, loopbackViolation, withCors } from '../net/loopback-guard';
import { health } from '../health/endpoint';
import { MAX_MESSAGE_DEPTH } from '../http/json-depth';
import { MAX_POLICY_BYTES } from '../policy/text';
import { bodyCap } from '../http/body-cap';
import { jsonRpcError, Refusal } from '../http/refusal';
import { messageResponse } from '../auth/pages';
import { readMcpBody } from '../http/mcp-body';
import { ANONYMOUS } from '../core/identity';
import { DEFAULT_SCOPES } from '../core/scopes';
import { mcpApi } from '../mcp/route';
import { webRoutes } from '../web/routes';
import { providerFor } from './oauth';

/** MCP messages: the MCP transports' own limit, now also for bodies sent without a length. */
const MCP_BODY_LIMIT = 4 * 1024 * 1024;
/** Everything else (sign-in and web forms, token and registration requests) is small. */
const FORM_BODY_LIMIT = 64 * 1024;
/** The policy API and console take a policy (at most MAX_POLICY_BYTES) in a JSON body or a form. */
const POLICY_PATHS = /^\/admin\/(?:api\/)?policy(?:\/|$)/;
const POLICY_BODY_LIMIT = 2 * MAX_POLICY_BYTES;

const SUFFIXED_RESOURCE_METADATA = /^\/\.well-known\/oauth-protected-resource\/(?:mcp|sse)\/?$/;
/** Pages a person opens in a browser: with PUBLIC_URL set they live on that origin only. */
const BROWSER_PATHS = /^\/(?:authorize|login|admin(?:\/.*)?|approvals\/[^/]+|dev-idp\/login)$/;

type Ctx = Context<AppBindings>;

export const app = new Hono<AppBindings>();

// The caps and the door apply once, on the way in: not again when the OAuth provider hands a
// request back (it passes on the same request, with its own copy of env).
const onTheWayIn =
  (middleware: MiddlewareHandler<AppBindings>): MiddlewareHandler<AppBindings> =>
  (c, next) =>
    cameThroughProvider(c.env) ? next() : middleware(c, next);

const tooLarge = (limit: number) => (c: Ctx) =>
  c.json(
    { error: 'payload_too_large', message: `The request body is larger than ${limit} bytes.` },
    413,
    // A client is not to send another request on this connection: what follows a body this
    // large is best read on a fresh one (and a proxy in front frees its slot at once).
    { connection: 'close' },
  );
const mcpLimit = bodyCap(MCP_BODY_LIMIT, tooLarge(MCP_BODY_LIMIT));
const formLimit = bodyCap(FORM_BODY_LIMIT, tooLarge(FORM_BODY_LIMIT));
const policyLimit = bodyCap(POLICY_BODY_LIMIT, tooLarge(POLICY_BODY_LIMIT));

/**
 * An MCP message is read once here: one nested absurdly deep is refused before any code walks it
 * (see json-depth.ts); the rest go on with their parse (see mcp-body.ts).
 */
async function mcpBody(c: Ctx, next: Next): Promise<void> {
  const read = await readMcpBody(c.req.raw);
  if (!('request' in read)) {
    const message = `Invalid params: the message nests more than ${MAX_MESSAGE_DEPTH} levels deep.`;
    throw Refusal.jsonRpc(400, -32602, message);
  }
  c.req.raw = read.request;
  await next();
}

// The caps come before any other work a request gets (the Runtime, the door, a session's
// check): a body over its cap costs nothing but its reading.
app.use(
  '*',
  onTheWayIn((c, next) => {
    if (c.req.path === '/mcp' || c.req.path.startsWith('/sse/')) return mcpLimit(c, next);
    return POLICY_PATHS.test(c.req.path) ? policyLimit(c, next) : formLimit(c, next);
  }),
);
app.use('*', async (c, next) => {
  c.set('runtime', runtimeOf(c.env));
  await next();
});
app.use('/mcp', onTheWayIn(mcpBody));
app.use('/sse/*', onTheWayIn(mcpBody));

/** The door: who may come in, and (with sign-in) the OAuth provider in front of everything. */
app.use(
  '*',
  onTheWayIn(async (c, next) => {
    const { config } = c.var.runtime;
    const request = c.req.raw;
    const mode = config.authMode;
    if (typeof mode !== 'string') return refuse(c, 500, 'misconfigured', mode.error);
    if (mode === 'none' || config.signIn.idpKind === 'dev') {
      const why = loopbackViolation(request);
      if (why) {
        const reason =
          mode === 'none' ? 'With AUTH_MODE=none' : 'With the development sign-in (IDP=dev)';
        return refuse(
          c,
          403,
          'forbidden',
          `${why}. ${reason} this server only answers loopback requests.`,
        );
      }
    }
    if (mode === 'none') {
      // Nobody signs in, so a browser page on another origin would act as the user: refuse it.
      const allowed = config.corsOrigins;
      const why = crossOriginViolation(request, allowed);
      if (why)
        return refuse(
          c,
          403,
          'forbidden',
          `${why}. With AUTH_MODE=none only same-origin browser requests are served.`,
        );
      if (request.method === 'OPTIONS')
        return withCors(new Response(null, { status: 204 }), request, allowed);
      await next();
      const answered = withCors(c.res, request, allowed);
      // Hono copies the old response's headers into a new one: clear it first, so the CORS
      // headers withCors took out stay out.
      c.res = undefined;
      c.res = answered;
      return undefined;
    }
    const origin = publicOrigin(config, request);
    const url = new URL(request.url);
    if (origin !== url.origin && request.method === 'GET' && BROWSER_PATHS.test(url.pathname)) {
      // Sign-in works on the public origin (its callback is the one registered with the IdP).
      return Response.redirect(`${origin}${url.pathname}${url.search}`, 302);
    }
    let provider;
    try {
      provider = providerFor(origin, pages);
    } catch (err) {
      logUnhandled(err);
      return refuse(
        c,
        400,
        'unsupported_origin',
        `This server cannot sign anyone in at ${origin.slice(0, 100)}. Use its https address, or http://localhost or http://127.0.0.1 locally.`,
      );
    }
    // Clients look for the path-suffixed metadata of the resource they were given (RFC 9728
    // §3.1) before the root one; the library serves only the root one, which covers /mcp, /sse.
    const forwarded = SUFFIXED_RESOURCE_METADATA.test(url.pathname)
      ? new Request(new URL('/.well-known/oauth-protected-resource', url), request)
      : request;
    // The OAuth library keeps its helpers on the env object it is given (only when absent): each
    // request gets its own copy, so one origin's provider never answers for another's.
    const res = await provider.fetch(forwarded, providerEnv(c.env), executionContext(c));
    return res.status === 401 && API_PATHS.test(url.pathname) ? explained401(res, origin) : res;
  }),
);

const API_PATHS = /^\/(?:mcp|sse)(?:\/|$)/;

/**
 * The OAuth library's 401 on /mcp and /sse says what is wrong in its WWW-Authenticate header
 * only; a person trying the URL by hand (or an Inspector printing the body) sees nothing. The
 * body says what to do; the status stays, for clients that sign in. The challenge names the
 * scopes ticked by default (the library names every scope the metadata lists): a client asks
 * for those, and the consent page offers the rest for the person to tick.
 */
async function explained401(res: Response, origin: string): Promise<Response> {
  const text = await res.text();
  const headers = new Headers(res.headers);
  const challenge = headers.get('www-authenticate');
  if (challenge)
    headers.set(
      'www-authenticate',
      challenge.replace(/scope="[^"]*"/, `scope="${DEFAULT_SCOPES.join(' ')}"`),
    );
  if (text.trim()) return new Response(text, { status: res.status, headers });
  headers.set('content-type', 'application/json');
  // What the header already says (an expired or revoked token), first.
  const why = /error_description="([^"]{1,200})"/.exec(headers.get('www-authenticate') ?? '')?.[1];
  const body = {
    error: why ? 'invalid_token' : 'unauthorized',
    error_description: `${why ? `${why}. ` : ''}This MCP server needs a signed-in person. Connect with a client that supports OAuth (it reads ${origin}/.well-known/oauth-protected-resource and opens the sign-in page), or get a token with "npm run token" and send it as "Authorization: Bearer <token>".`,
  };
  return new Response(JSON.stringify(body), { status: 401, headers });
}

/** What the OAuth provider hands back to this app: everything but its own endpoints and the API. */
const pages = {
  fetch: (request: Request, env: AppBindings['Bindings'], ctx: ExecutionContext) =>
    app.fetch(request, env, ctx),
};

/** The sign-in routes and the welcome text exist only with sign-in: AUTH_MODE=none has neither. */
const withSignIn: MiddlewareHandler<AppBindings> = async (c, next) => {
  if (c.var.runtime.config.authMode === 'none') return notFound(c);
  await next();
  return undefined;
};
for (const path of ['/', '/authorize', CALLBACK_PATH, DEV_LOGIN_PATH]) app.use(path, withSignIn);

app.get('/health', health);
app.route('/', authRoutes);
app.route('/', webRoutes);
app.get('/', (c) =>
  c.text(
    'Proxmox VE MCP server. Add this URL with /mcp (or /sse) to your MCP client; it will ask you to sign in.\n',
  ),
);

/** AUTH_MODE=none: the MCP endpoints, as the anonymous local person (with sign-in, the OAuth provider serves them). */
const asAnonymous = (c: Ctx): Promise<Response> | Response => {
  if (c.var.runtime.config.authMode !== 'none') return notFound(c);
  const ctx = executionContext(c) as ExecutionContext & { props?: unknown };
  ctx.props = { ...ANONYMOUS };
  return mcpApi.fetch(c.req.raw, c.env, ctx);
};
app.all('/mcp', asAnonymous);
app.all('/sse', asAnonymous);
app.all('/sse/*', asAnonymous);

function notFound(c: Ctx): Response {
  return c.json(
    { error: 'not_found', message: 'Try /mcp (streamable HTTP), /sse (SSE) or /health.' },
    404,
  );
}
app.notFound(notFound);
app.onError((err, c) => {
  if (err instanceof Refusal) return refusalResponse(c, err);
  logUnhandled(err);
  return refuse(c, 500, 'internal', 'Internal error.');
});

/** A refusal a route threw, in the form its caller reads (../http/refusal.ts). */
async function refusalResponse(c: Ctx, { answer }: Refusal): Promise<Response> {
  if (answer.format === 'redirect') return c.redirect(answer.location, answer.status);
  if (answer.format === 'json')
    return c.json({ error: answer.error, message: answer.message, ...answer.more }, answer.status);
  if (answer.format === 'json-rpc')
    return c.json(jsonRpcError(answer.code, answer.message), answer.status);
  return messageResponse(answer.status, answer.title, answer.message);
}

function refuse(c: Ctx, status: 400 | 403 | 500, error: string, message: string): Response {
  return c.json({ error, message }, status);
}

function logUnhandled(err: unknown): void {
  logLine('error', 'unhandled', { error: errorText(err, 300, true) });
}

/** Hono types its execution context loosely; it is the Worker's own. */
function executionContext(c: Ctx): ExecutionContext {
  return c.executionCtx as unknown as ExecutionContext;
}
