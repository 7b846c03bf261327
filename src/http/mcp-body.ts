// An MCP message is read once, at the door. The entry reads the body (after the size cap), refuses
// one nested too deep, and parses it; the request travels on with the same bytes, and its parsed
// message beside it, so routing by era and the 2026-07-28 handler use that parse instead of
// cloning, reading and parsing the body twice more (in Node the SDK handler alone spends about
// 0.2 ms a request on that).

import { PROTO_KEY_STAND_IN } from '../calls/issues';
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
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    // not JSON: nothing remembered, the body is read (and refused) where it is served
    return { request: new Request(request, { body: bytes }) };
  }
  const renamed = renameProtoArguments(message);
  const forwarded = new Request(request, { body: renamed ? JSON.stringify(message) : bytes });
  parsedBodies.set(forwarded, message);
  return { request: forwarded };
}

/**
 * Renames a tools/call argument named `__proto__` (in one message or a batch) to the stand-in the
 * seam refuses by name (see PROTO_KEY_STAND_IN); true when it did. Nested keys need no help: the
 * SDKs pass argument values through as they are.
 */
function renameProtoArguments(message: unknown): boolean {
  if (Array.isArray(message)) return message.map(renameProtoArguments).includes(true);
  if (!isRecord(message) || message.method !== 'tools/call' || !isRecord(message.params))
    return false;
  const args = message.params.arguments;
  if (!isRecord(args) || !Object.hasOwn(args, '__proto__')) return false;
  const value: unknown = Object.getOwnPropertyDescriptor(args, '__proto__')?.value;
  Reflect.deleteProperty(args, '__proto__');
  Object.defineProperty(args, PROTO_KEY_STAND_IN, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return true;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The message `readMcpBody` parsed for this request, if it did. */
export function parsedBodyOf(request: Request): unknown {
  return parsedBodies.get(request);
}
