// The entry reads an MCP message once: the request goes on with exactly the bytes it came with,
// its parse travels beside it (so era routing and the 2026-07-28 handler do not read it again),
// and a message nested past the limit is refused before anything walks it.

import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_DEPTH } from '../../src/http/json-depth';
import { parsedBodyOf, readMcpBody } from '../../src/http/mcp-body';

const post = (
  body: BodyInit,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) => new Request('http://localhost/mcp', { method: 'POST', headers, body });

async function forwarded(request: Request): Promise<Request> {
  const read = await readMcpBody(request);
  if (!('request' in read)) throw new Error('refused');
  return read.request;
}

describe('readMcpBody', () => {
  it('passes the message on with the same bytes and headers, and its parse beside it', async () => {
    const message = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'pve_list_vms', arguments: { node: 'pvé1' } },
    };
    const original = post(JSON.stringify(message), {
      'content-type': 'application/json',
      authorization: 'Bearer t',
    });
    const next = await forwarded(original);
    expect(parsedBodyOf(next)).toEqual(message);
    expect(next.headers.get('authorization')).toBe('Bearer t');
    expect(await next.text()).toBe(JSON.stringify(message));
    expect(parsedBodyOf(original)).toBeUndefined();
  });

  it('keeps bytes that are not UTF-8 as they were (the handler reports them, not us)', async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]); // {"\xff\xfe":1}
    const next = await forwarded(post(bytes));
    expect(new Uint8Array(await next.arrayBuffer())).toEqual(bytes);
  });

  it('remembers no parse for a body that is not JSON, and leaves its text for the MCP layer to refuse', async () => {
    const next = await forwarded(post('not json {'));
    expect(parsedBodyOf(next)).toBeUndefined();
    expect(await next.text()).toBe('not json {');
  });

  it('refuses a message nested deeper than the limit, and accepts one at it', async () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(await readMcpBody(post(nest(MAX_MESSAGE_DEPTH + 1)))).toEqual({ tooDeep: true });
    expect(parsedBodyOf(await forwarded(post(nest(MAX_MESSAGE_DEPTH))))).toBeDefined();
  });

  it('leaves a GET (the SSE stream) untouched', async () => {
    const get = new Request('http://localhost/mcp', { headers: { accept: 'text/event-stream' } });
    expect(await forwarded(get)).toBe(get);
  });
});
