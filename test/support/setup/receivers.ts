// A local HTTP receiver for the approval notifications (the project's APPROVAL_WEBHOOKS point
// here) and for spans (OTLP/HTTP, JSON: the project's OTEL_EXPORTER_OTLP_TRACES_ENDPOINT points
// at /v1/traces): it records every request (path, headers, raw body) and answers by path: /json,
// /slack, /teams with 200; /flaky with 500 to the first attempt of each delivery, then 200; /hang
// never answers; /v1/traces as an OTLP collector does (below). GET /_log lists the notifications
// received, POST /_reset forgets them; GET /_spans lists the span exports, kept for the project's
// whole run (its files, side by side, each find theirs by trace id).

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { otlpSpans } from '../otlp';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
  answered: number | null;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let log: Received[] = [];
  const spans: Received[] = [];
  let flakyFailed = new Set<string>();
  const server: Server = createServer(async (req, res) => {
    const body = await read(req);
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/_log') return void res.writeHead(200).end(JSON.stringify(log));
    if (path === '/_spans') return void res.writeHead(200).end(JSON.stringify(spans));
    if (path === '/_reset') {
      log = [];
      flakyFailed = new Set();
      return void res.writeHead(204).end();
    }
    const entry: Received = {
      path,
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [
          k,
          Array.isArray(v) ? v.join(', ') : (v ?? ''),
        ]),
      ),
      body,
      at: Date.now(),
      answered: null,
    };
    if (path === OTLP_TRACES) {
      spans.push(entry);
      const [status, answer] = otlpAnswer(req, body);
      entry.answered = status;
      return void res.writeHead(status, { 'content-type': 'application/json' }).end(answer);
    }
    log.push(entry);
    if (path === '/hang') return; // never answers
    // A delivery is known by its id (a retry carries the same one, with a new sent_at).
    const key = deliveryOf(body);
    const status = path === '/flaky' && !flakyFailed.has(key) ? 500 : 200;
    if (path === '/flaky') flakyFailed.add(key);
    entry.answered = status;
    res.writeHead(status).end(status === 200 ? 'ok' : 'try again');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  project.provide('receiverUrl', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

/** Where spans are sent (OTLP/HTTP's path for traces). */
const OTLP_TRACES = '/v1/traces';

/**
 * An OTLP/HTTP collector's answer to an export: JSON only (415 otherwise, as the specification
 * lets a server answer an encoding it does not take); an ExportTraceServiceRequest whose spans
 * each have a trace id, a span id and a name (400 otherwise); then 200 with an empty
 * ExportTraceServiceResponse, full success.
 */
function otlpAnswer(req: IncomingMessage, body: string): [number, string] {
  if (req.method !== 'POST') return [405, '{}'];
  if (!String(req.headers['content-type']).startsWith('application/json')) return [415, '{}'];
  try {
    otlpSpans(body);
  } catch (err) {
    return [400, JSON.stringify({ message: (err as Error).message })];
  }
  return [200, '{}'];
}

function deliveryOf(body: string): string {
  try {
    return (JSON.parse(body) as { delivery?: string }).delivery ?? body;
  } catch {
    return body;
  }
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => resolve(text));
  });
}
