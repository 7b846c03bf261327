// An MCP message is read once, at the door. The entry reads the body (after the size cap), refuses
// one nested too deep, and parses it; the request travels on with the same bytes, and its parsed
// message beside it, so routing by era and the 2026-07-28 handler use that parse instead of
// cloning, reading and parsing the body twice more (in Node the SDK handler alone spends about
// 0.2 ms a request on that).

import { jsonDeeperThan, MAX_MESSAGE_DEPTH } from './json-depth';

const parsedBodies = new WeakMap<Request, unknown>();

export type ReadBody = { request: Request } | { tooDeep: true };

/**
 * Reads a POST body once. A body that is not JSON is passed on untouched by us (the MCP layer
 * answers it with its own parse error); one nested deeper than MAX_MESSAGE_DEPTH is refused.
 */
export async function readMcpBody(request: Request): Promise<ReadBody> {
  if (request.method !== 'POST' || !request.body) return { request };
  const bytes = await request.arrayBuffer();
  const text = new TextDecoder().decode(bytes);
  if (jsonDeeperThan(text, MAX_MESSAGE_DEPTH)) return { tooDeep: true };
  const forwarded = new Request(request, { body: bytes });
  try {
    parsedBodies.set(forwarded, JSON.parse(text));
  } catch {
    // not JSON: nothing remembered, the body is read (and refused) where it is served
  }
  return { request: forwarded };
}

/** The message `readMcpBody` parsed for this request, if it did. */
export function parsedBodyOf(request: Request): unknown {
  return parsedBodies.get(request);
}
