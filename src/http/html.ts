// Pages for people: HTML under one Content-Security-Policy — no scripts, no framing; forms may
// lead anywhere, since approving sends the browser to the identity provider and the client —
// never cached.

export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'";

export function htmlResponse(
  body: { toString(): string },
  status = 200,
  headers = new Headers(),
): Response {
  headers.set('Content-Type', 'text/html; charset=utf-8');
  headers.set('Cache-Control', 'no-store');
  headers.set('Content-Security-Policy', PAGE_CSP);
  headers.set('X-Frame-Options', 'DENY');
  return new Response(body.toString(), { status, headers });
}
