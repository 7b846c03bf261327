// The doctor's client checks before sign-in, the way an MCP client discovers the server: the
// authorization server metadata (RFC 8414) and the protected-resource metadata (RFC 9728, root and
// path-suffixed) must name the URL the client uses; a token-less /mcp must answer 401 with
// `resource_metadata`; dynamic client registration or client ID metadata documents must be
// advertised.

import { errorText } from './health-checks.ts';
import { fail, pass, type CheckResult } from './report.ts';

const TIMEOUT_MS = 15_000;
const ROOT_PRM = '/.well-known/oauth-protected-resource';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'proxmox-mcp-doctor', version: '1' },
  },
};

type Json = Record<string, unknown>;

const samePlace = (a: unknown, b: string): boolean =>
  typeof a === 'string' && a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
const under = (a: unknown, origin: string): boolean =>
  typeof a === 'string' && (a === origin || a.startsWith(`${origin}/`));

/** The fix whenever the server names another origin than the one asked. */
const usePublicUrl = (origin: string, named: unknown): string =>
  `Clients must use the URL the server names: set PUBLIC_URL to ${origin} if that is the one clients use${typeof named === 'string' ? `, or give them ${named}` : ''}.`;

async function getJson(url: string): Promise<{ status: number; json?: Json; error?: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'manual' });
    const text = await res.text();
    try {
      return { status: res.status, json: JSON.parse(text) as Json };
    } catch {
      return { status: res.status };
    }
  } catch (err) {
    return { status: 0, error: errorText(err) };
  }
}

export async function oauthResults(origin: string): Promise<CheckResult[]> {
  const [as, root, suffixed, challenge] = await Promise.all([
    getJson(`${origin}/.well-known/oauth-authorization-server`),
    getJson(`${origin}${ROOT_PRM}`),
    getJson(`${origin}${ROOT_PRM}/mcp`),
    unauthenticatedMcp(origin),
  ]);
  const rootResult = resource('resource metadata', ROOT_PRM, origin, root, false);
  return [
    authorizationServer(origin, as),
    rootResult,
    resource(
      'resource metadata /mcp',
      `${ROOT_PRM}/mcp`,
      origin,
      suffixed,
      rootResult.outcome === 'PASS',
    ),
    challenge,
    registration(as.json),
  ];
}

function authorizationServer(
  origin: string,
  { status, json, error }: Awaited<ReturnType<typeof getJson>>,
): CheckResult {
  const name = 'oauth metadata';
  if (!json)
    return fail(
      name,
      `GET /.well-known/oauth-authorization-server: ${error ?? `${status}, no JSON`}`,
      'Check that AUTH_MODE=oauth and the URL is this server.',
    );
  if (!samePlace(json.issuer, origin))
    return fail(
      name,
      `issuer is ${String(json.issuer)}, not ${origin}: clients reject metadata for another issuer.`,
      usePublicUrl(origin, json.issuer),
    );
  const endpoints = ['authorization_endpoint', 'token_endpoint', 'registration_endpoint'].filter(
    (k) => json[k] !== undefined && !under(json[k], origin),
  );
  if (endpoints.length)
    return fail(
      name,
      `${endpoints.join(', ')} not under ${origin}.`,
      usePublicUrl(origin, json.issuer),
    );
  const pkce =
    Array.isArray(json.code_challenge_methods_supported) &&
    json.code_challenge_methods_supported.includes('S256');
  if (!pkce)
    return fail(
      name,
      'PKCE S256 is not advertised (code_challenge_methods_supported).',
      'MCP clients require PKCE S256: check the OAuth provider setup.',
    );
  return pass(name, `issuer and endpoints on ${origin}, PKCE S256`);
}

/** `rootServed`: a 404 here is fine when the root document is served (see below). */
function resource(
  name: string,
  path: string,
  origin: string,
  { status, json, error }: Awaited<ReturnType<typeof getJson>>,
  rootServed: boolean,
): CheckResult {
  // RFC 9728: a resource without a path has its document at the root only; clients that try the
  // path-suffixed one first fall back to the root, which the 401 names anyway.
  if (rootServed && status === 404)
    return pass(
      name,
      'not served (the resource is the origin): clients fall back to the root document',
    );
  if (!json) {
    return fail(
      name,
      `GET ${path}: ${error ?? `${status}${status === 404 ? ', not served for this origin' : ', no JSON'}`}`,
      status === 404
        ? usePublicUrl(origin, undefined)
        : 'Check that AUTH_MODE=oauth and the URL is this server.',
    );
  }
  if (!samePlace(json.resource, origin))
    return fail(
      name,
      `resource is ${String(json.resource)}, not ${origin}: tokens would be for another resource.`,
      usePublicUrl(origin, json.resource),
    );
  const servers = Array.isArray(json.authorization_servers) ? json.authorization_servers : [];
  if (!servers.some((s) => samePlace(s, origin)))
    return fail(
      name,
      `authorization_servers ${JSON.stringify(servers)} do not include ${origin}.`,
      usePublicUrl(origin, servers[0]),
    );
  return pass(name, `resource ${origin}, authorization server ${origin}`);
}

async function unauthenticatedMcp(origin: string): Promise<CheckResult> {
  const name = '401 challenge';
  let res: Response;
  try {
    res = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(INITIALIZE),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.body?.cancel();
  } catch (err) {
    return fail(
      name,
      `POST /mcp: ${errorText(err)}`,
      'Check the URL and that the server is running.',
    );
  }
  if (res.status !== 401)
    return fail(
      name,
      `POST /mcp without a token answered ${res.status}, not 401.`,
      'Nothing may reach the tools without a token: check AUTH_MODE=oauth.',
    );
  const challenge = res.headers.get('www-authenticate') ?? '';
  const metadata = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
  if (!metadata)
    return fail(
      name,
      `401 without resource_metadata (WWW-Authenticate: ${challenge || 'none'}): clients cannot find where to sign in.`,
      usePublicUrl(origin, undefined),
    );
  if (!under(metadata, origin))
    return fail(
      name,
      `401 names resource metadata at ${metadata}, not on ${origin}.`,
      usePublicUrl(origin, new URL(metadata).origin),
    );
  return pass(name, `401 with resource_metadata=${metadata}`);
}

function registration(metadata: Json | undefined): CheckResult {
  const name = 'client registration';
  const dcr = typeof metadata?.registration_endpoint === 'string';
  const cimd = metadata?.client_id_metadata_document_supported === true;
  if (!dcr && !cimd) {
    return fail(
      name,
      'neither dynamic client registration nor client ID metadata documents are advertised: hosted assistants cannot register.',
      'Check the OAuth provider setup (clientRegistrationEndpoint).',
    );
  }
  return pass(
    name,
    [
      dcr ? `dynamic registration at ${String(metadata?.registration_endpoint)}` : '',
      cimd ? 'client ID metadata documents' : '',
    ]
      .filter(Boolean)
      .join(', '),
  );
}
