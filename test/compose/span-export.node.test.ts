// A call's spans sent to an OTLP/HTTP collector (src/compose/span-export.ts), against a local HTTP
// server: one JSON POST with the configured headers (the body's type never doubled by one of
// theirs); a collector that refuses, redirects or cannot be reached loses the spans with one
// `spans_lost` line saying how many, naming neither the endpoint nor its key, and never throws.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { callSpans } from '../../src/calls/spans';
import { callTrace } from '../../src/calls/trace';
import { exportSpans } from '../../src/compose/span-export';
import type { TracingSettings } from '../../src/core/tracing-settings';
import { scrubberFor } from '../../src/secrets/scrub';

const KEY = 'otlp-key-0a1b2c3d4e5f6a7b';
interface Got {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}
let got: Got[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/refuse')) return void res.writeHead(500).end('down');
      if (req.url?.startsWith('/moved'))
        return void res.writeHead(307, { location: `${base}/elsewhere` }).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  got = [];
  vi.restoreAllMocks();
});

/** A recorded call's ended spans: the call's, one stage's, one request's. */
async function someSpans() {
  const settings = { ratio: 1, parentBased: true, serviceName: 'proxmox-mcp' };
  const spans = callSpans(
    callTrace(),
    { endpoint: '', headers: {}, ...settings },
    { now: () => Date.now() },
    {
      tool: 'pve_get_vm_status',
      session: 's',
      requestId: 'r1',
      scrub: (t) => t,
      callersPaths: false,
    },
  );
  await spans.stage('run', () => spans.request('GET', '/version').end(200));
  spans.end({});
  return spans.ended();
}

const settingsAt = (path: string, headers: Record<string, string> = {}): TracingSettings => ({
  endpoint: `${base}${path}?key=${KEY}`,
  headers: { authorization: `Bearer ${KEY}`, ...headers },
  ratio: 1,
  parentBased: true,
  serviceName: 'proxmox-mcp',
});

function lostLines(): string[] {
  return vi
    .mocked(console.error)
    .mock.calls.map((c) => c.map(String).join(' '))
    .filter((l) => l.includes('"msg":"spans_lost"'));
}

describe('exportSpans', () => {
  it('POSTs the spans once, as OTLP JSON, with the configured headers', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const settings = settingsAt('/v1/traces', { 'Content-Type': 'text/plain' });
    await exportSpans(settings, await someSpans(), 'r1', scrubberFor([settings.endpoint, KEY]));
    expect(got).toHaveLength(1);
    expect(got[0]!.headers['content-type']).toBe('application/json');
    expect(got[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const body = JSON.parse(got[0]!.body) as {
      resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[];
    };
    expect(body.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name).sort()).toEqual([
      'GET /version',
      'run',
      'tools/call pve_get_vm_status',
    ]);
    expect(lostLines()).toEqual([]);
  });

  it.each([
    ['refuses', '/refuse', '"status":500'],
    ['redirects (not followed)', '/moved', '"status":307'],
  ])('loses the spans, saying so, when the collector %s', async (_what, path, why) => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const settings = settingsAt(path);
    await exportSpans(settings, await someSpans(), 'r1', scrubberFor([settings.endpoint, KEY]));
    expect(got.map((g) => g.path.split('?')[0])).toEqual([path]);
    const [line] = lostLines();
    expect(line).toContain(why);
    expect(line).toContain('"spans":3');
    expect(line).not.toContain(KEY);
  });

  it('loses the spans, naming neither the endpoint nor its key, when nothing answers', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const settings = {
      ...settingsAt('/v1/traces'),
      endpoint: `http://127.0.0.1:9/v1/traces?key=${KEY}`,
    };
    await exportSpans(settings, await someSpans(), 'r1', scrubberFor([settings.endpoint, KEY]));
    const [line] = lostLines();
    expect(line).toContain('"spans":3');
    expect(line).not.toContain(KEY);
    expect(line).not.toContain('127.0.0.1:9');
  });
});
