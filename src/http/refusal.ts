// A request refused on purpose, in the form its caller reads: a page for a person, a JSON error
// for a script, a JSON-RPC error for an MCP client, or the way to sign in first. A route's checks
// throw it instead of returning "a value or a Response", and the app's one error handler
// (../app/app.ts) renders it. The MCP route, which the OAuth library calls outside the app, words
// its JSON-RPC errors with jsonRpcError.

import type { ContentfulStatusCode, RedirectStatusCode } from 'hono/utils/http-status';

/** What the caller is answered with. */
export type RefusalAnswer =
  | { format: 'page'; status: ContentfulStatusCode; title: string; message: string }
  | {
      format: 'json';
      status: ContentfulStatusCode;
      error: string;
      message: string;
      more?: Record<string, unknown>;
    }
  | { format: 'json-rpc'; status: ContentfulStatusCode; code: number; message: string }
  | { format: 'redirect'; status: RedirectStatusCode; location: string };

/** A JSON-RPC error answering no request id (the message could not be read as one). */
export function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null } as const;
}

export class Refusal extends Error {
  override readonly name = 'Refusal';

  private constructor(readonly answer: RefusalAnswer) {
    super(answer.format === 'redirect' ? `redirect to ${answer.location}` : answer.message);
  }

  /** A page that says what is refused, and why, in words for a person. */
  static page(status: ContentfulStatusCode, title: string, message: string): Refusal {
    return new Refusal({ format: 'page', status, title, message });
  }

  /** `{error, message, ...more}` for a script. */
  static json(
    status: ContentfulStatusCode,
    error: string,
    message: string,
    more?: Record<string, unknown>,
  ): Refusal {
    return new Refusal({ format: 'json', status, error, message, ...(more ? { more } : {}) });
  }

  /** A JSON-RPC error for an MCP client: `code` as JSON-RPC and MCP number them. */
  static jsonRpc(status: ContentfulStatusCode, code: number, message: string): Refusal {
    return new Refusal({ format: 'json-rpc', status, code, message });
  }

  /** Elsewhere first (to sign in), then back. */
  static redirect(location: string, status: RedirectStatusCode = 302): Refusal {
    return new Refusal({ format: 'redirect', status, location });
  }
}
