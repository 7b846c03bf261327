// Who may reach a server that trusts loopback (AUTH_MODE=none, or the development sign-in):
//   - DNS rebinding: the Host and any Origin must be a loopback address. A page on evil.example
//     that rebinds its name to 127.0.0.1 still sends Host: evil.example, and is refused.
//   - Other local web pages: a page served from another localhost port is a different origin;
//     without a sign-in nothing else tells it apart from the user, so cross-origin browser
//     requests are refused unless CORS_ORIGINS names that origin.

/**
 * Loopback as RFC 8252 §7.3 and the OAuth library define it: `localhost`, 127.0.0.0/8 and ::1.
 * Names under .localhost are not accepted: resolvers need not map them, and the sign-in refuses
 * them as resources.
 */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h);
}

/** Returns why a request is refused, or null when Host and Origin are both loopback. */
export function loopbackViolation(request: Request): string | null {
  const host = request.headers.get('host') ?? new URL(request.url).host;
  if (!isLoopbackHostname(hostnameOf(`http://${host}`))) return 'Host is not a loopback address';
  const origin = request.headers.get('origin');
  if (origin !== null && !isLoopbackHostname(hostnameOf(origin)))
    return 'Origin is not a loopback address';
  return null;
}

/**
 * A browser request from another origin (an Origin header that is not this server's own) that
 * CORS_ORIGINS does not name: refused. Same-origin and non-browser requests pass.
 */
export function crossOriginViolation(request: Request, allowed: readonly string[]): string | null {
  const origin = request.headers.get('origin');
  if (origin === null || origin === new URL(request.url).origin || allowed.includes(origin))
    return null;
  return `Origin ${origin.slice(0, 100)} may not call this server from a browser (set CORS_ORIGINS to allow it)`;
}

const CORS_ALLOW_HEADERS =
  'Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, traceparent, tracestate';

/**
 * The response with CORS headers for exactly the allowed origin that asked, or none at all
 * (libraries in the chain add `Access-Control-Allow-Origin: *` on their own).
 */
export function withCors(
  response: Response,
  request: Request,
  allowed: readonly string[],
): Response {
  if (response.status === 101) return response; // a WebSocket upgrade is not a CORS response
  const out = new Response(response.body, response);
  for (const name of [...out.headers.keys()])
    if (name.startsWith('access-control-')) out.headers.delete(name);
  const origin = request.headers.get('origin');
  if (origin !== null && allowed.includes(origin)) {
    out.headers.set('Access-Control-Allow-Origin', origin);
    out.headers.set('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
    out.headers.set('Access-Control-Allow-Methods', 'GET, POST, DELETE, OPTIONS');
    out.headers.set('Access-Control-Expose-Headers', 'Mcp-Session-Id');
    out.headers.append('Vary', 'Origin');
  }
  return out;
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
