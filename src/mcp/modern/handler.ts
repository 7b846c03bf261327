// The 2026-07-28 era: stateless. Each request is one exchange with a fresh SDK v2 server (the
// SDK's createMcpHandler: server/discover, envelope and header checks, error codes), whose
// tools/list and tools/call go to the same seam as the 2025 sessions. No session: session-scoped
// limits count per grant. A person is asked through input_required; the question's state goes
// out signed (the SDK's request-state codec, bound to the method and the grant) and carries the
// tool, the argument hash and a one-time nonce, so a forged, altered or replayed answer is refused.

import { randomToken } from '../../encoding';
import { errorText, logLine } from '../../log';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type AuthInfo,
  type McpRequestContext,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { insufficientScope, type OAuthResourceAuth } from '@cloudflare/workers-oauth-provider';
import { elicitsForms, type Conversation } from '../../calls/conversation';
import type { CallHost } from '../../calls/host';
import { scopeMessage } from '../../calls/messages';
import { missingScope } from '../../calls/scope-gate';
import { runCall } from '../../calls/run-call';
import { traceInput } from '../../calls/trace';
import { composeHost } from '../../compose/call-host';
import { INSTRUCTIONS, SERVER_INFO } from '../../compose/server-info';
import type { Runtime } from '../../compose/runtime';
import type { Identity } from '../../core/identity';
import { z } from 'zod';
import { listLegacyVersions } from './discover-versions';

/** How long a person has to answer before the question must be asked again. */
const ANSWER_TTL_S = 5 * 60;
const QUESTION_KEY = 'approve';

/** What the signed state of an open question holds: the call it is about, and a nonce. */
interface QuestionState {
  t: string;
  h: string;
  /** The digest of the requests the question showed. */
  r: string;
  n: string;
}

/** What the router hands each exchange (keyed by the authInfo the SDK passes through). */
interface Exchange {
  runtime: Runtime;
  identity: Identity;
  origin: string;
  waitUntil(work: Promise<unknown>): void;
  codec: RequestStateCodec<QuestionState>;
  /** The request's `traceparent` and `tracestate` headers (W3C Trace Context), if sent. */
  traceparent: string | null;
  tracestate: string | null;
}

/** Each request's exchange, by the authInfo object the SDK hands through to its server. */
const exchanges = new WeakMap<AuthInfo, Exchange>();

const handler = createMcpHandler((rc: McpRequestContext) => buildServer(exchangeOf(rc.authInfo)), {
  legacy: 'reject',
  responseMode: 'auto',
  onerror: (err) => logLine('error', 'mcp_2026_error', { error: errorText(err) }),
});

/** Serves one 2026-07-28 request for a signed-in (or, with AUTH_MODE=none, local) person. */
export async function serveModern(
  request: Request,
  message: unknown,
  runtime: Runtime,
  identity: Identity,
  origin: string,
  ctx: ExecutionContext,
  auth?: OAuthResourceAuth,
): Promise<Response> {
  const exchange: Exchange = {
    runtime,
    identity,
    origin,
    waitUntil: (work) => ctx.waitUntil(work),
    codec: await codecFor(runtime),
    traceparent: request.headers.get('traceparent'),
    tracestate: request.headers.get('tracestate'),
  };
  const refused = auth ? await outOfScope(message, exchange, auth) : null;
  if (refused) return refused;
  const authInfo: AuthInfo = { token: '', clientId: identity.clientId, scopes: [] };
  exchanges.set(authInfo, exchange);
  // With the message already parsed (undefined when it was not JSON) the SDK does not read the body.
  return handler.fetch(
    request,
    message === undefined ? { authInfo } : { authInfo, parsedBody: message },
  );
}

/** A tools/call as far as the scope check reads it (the SDK checks the rest). */
const toolsCall = z.object({
  method: z.literal('tools/call'),
  params: z.object({
    name: z.string(),
    arguments: z.unknown().optional(),
    _meta: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** The client's capabilities in a request's envelope, as far as elicitation goes. */
const envelopeCapabilities = z.object({
  [CLIENT_CAPABILITIES_META_KEY]: z.object({ elicitation: z.unknown().optional() }).optional(),
});

/**
 * A tools/call of a tool outside the token's scopes: recorded as refused (log line and audit
 * record, as a 2025 session's refusal is), and answered before the MCP server sees it with
 * HTTP 403 and `WWW-Authenticate: Bearer error="insufficient_scope", scope="<the scope>"`, so the
 * client can ask the person for it (step-up) and call again. Nothing reaches Proxmox.
 */
async function outOfScope(
  message: unknown,
  exchange: Exchange,
  auth: OAuthResourceAuth,
): Promise<Response | null> {
  const call = toolsCall.safeParse(message);
  if (!call.success) return null;
  const { name, arguments: args, _meta: meta } = call.data.params;
  const found = exchange.runtime.tools.get(name);
  if (!found) return null;
  const scope = missingScope(found.tool, exchange.identity);
  if (!scope) return null;
  await runCall(found.tool, found.input, args, hostFor(exchange), null, traceInput(meta, exchange));
  return insufficientScope(
    auth,
    [scope],
    scopeMessage(found.tool.name, scope, exchange.identity.scopes),
  );
}

function hostFor(exchange: Exchange): CallHost {
  return composeHost(exchange.runtime, {
    sessionId: 'stateless',
    sessionCounters: 'per-grant',
    identity: () => exchange.identity,
    publicOrigin: () => exchange.origin,
    waitUntil: exchange.waitUntil,
  });
}

function exchangeOf(authInfo: AuthInfo | undefined): Exchange {
  const exchange = authInfo && exchanges.get(authInfo);
  if (!exchange)
    throw new ProtocolError(ProtocolErrorCode.InternalError, 'No caller for this request.');
  return exchange;
}

function buildServer(exchange: Exchange): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    // A state that fails verification (altered, expired, minted for another grant) never
    // reaches a handler: the SDK answers -32602 invalid_request_state.
    requestState: { verify: (state, ctx) => exchange.codec.verify(state, ctx) },
  });
  listLegacyVersions(server);
  const host = hostFor(exchange);
  server.setRequestHandler('tools/list', async () => ({
    tools: exchange.runtime.tools.listed(await host.policy(), exchange.identity.scopes),
  }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const found = exchange.runtime.tools.get(request.params.name);
    if (!found)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name.slice(0, 100)}`,
      );
    const conversation = canElicit(ctx) ? answersInRequest(ctx, exchange) : null;
    const outcome = await runCall(
      found.tool,
      found.input,
      request.params.arguments,
      host,
      conversation,
      traceInput(request.params._meta as Record<string, unknown> | undefined, exchange),
    );
    if (outcome.kind === 'result') return outcome.result;
    const { binding, question } = outcome;
    const state: QuestionState = {
      t: binding.tool,
      h: binding.argsHmac,
      r: binding.requests,
      n: randomToken(18),
    };
    return inputRequired({
      inputRequests: {
        [QUESTION_KEY]: inputRequired.elicit({
          message: question.message,
          requestedSchema: question.requestedSchema,
        }),
      },
      requestState: await exchange.codec.mint(state, ctx),
    });
  });
  return server;
}

/** The client declared form elicitation in this request's envelope (an empty object means form). */
function canElicit(ctx: ServerContext): boolean {
  const envelope = envelopeCapabilities.safeParse(ctx.mcpReq.envelope);
  return envelope.success && elicitsForms(envelope.data[CLIENT_CAPABILITIES_META_KEY]?.elicitation);
}

/**
 * The person's answer, when this request carries one for this exact call: its state verified by
 * the SDK (signature, expiry, grant), naming this tool, these arguments and the requests the
 * question showed, and its nonce not spent before. Without an answer the call is suspended and
 * the question goes out.
 */
function answersInRequest(ctx: ServerContext, exchange: Exchange): Conversation {
  return {
    async ask(question, binding) {
      const state = ctx.mcpReq.requestState<QuestionState>();
      const answer = inputResponse(ctx.mcpReq.inputResponses, QUESTION_KEY);
      if (!state || answer.kind !== 'elicit')
        return { kind: 'ask_next_request', question, binding };
      if (state.t !== binding.tool || state.h !== binding.argsHmac) {
        return {
          action: 'decline',
          refusal:
            'The answer sent with this call was given for another call (other tool or arguments). Call again without it to ask anew.',
        };
      }
      // The same arguments may send other requests once what they act on changed meanwhile.
      if (state.r !== binding.requests) {
        return {
          action: 'decline',
          refusal:
            'The answer sent with this call was given for other requests than the call would send now (what it acts on changed since the question). Call again without it to ask anew.',
        };
      }
      const now = exchange.runtime.clock.now();
      const fresh = await exchange.runtime.stores
        .approvals()
        .spendOnce(state.n, now + ANSWER_TTL_S * 1000, now);
      if (!fresh)
        return {
          action: 'decline',
          refusal:
            'This answer was already used; each answer approves one call. Call again without it to ask anew.',
        };
      return {
        action: answer.action,
        ...(answer.content ? { content: answer.content } : {}),
      };
    },
  };
}

let cachedCodec: Promise<RequestStateCodec<QuestionState>> | undefined;

/** The codec, keyed by the server's own `request_state` key (made once, kept in the key store). */
function codecFor(runtime: Runtime): Promise<RequestStateCodec<QuestionState>> {
  cachedCodec ??= (async () => {
    const base64 = await runtime.stores.serverKey('request_state');
    const key = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    return createRequestStateCodec<QuestionState>({
      key,
      ttlSeconds: ANSWER_TTL_S,
      // A state answers only the same method for the same grant.
      bind: (ctx) => `${ctx.mcpReq.method}\u0000${grantOf(ctx)}`,
    });
  })();
  cachedCodec.catch(() => (cachedCodec = undefined));
  return cachedCodec;
}

function grantOf(ctx: ServerContext): string {
  const authInfo = ctx.http?.authInfo;
  return (authInfo && exchanges.get(authInfo)?.identity.grantId) ?? '';
}
