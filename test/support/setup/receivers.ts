// A local HTTP receiver for the approval notifications (the project's APPROVAL_WEBHOOKS point
// here): it records every request (path, headers, raw body) and answers by path: /json, /slack,
// /teams with 200; /flaky with 500 to the first attempt of each delivery, then 200; /hang never
// answers. GET
// /_log lists what it received; POST /_reset forgets it.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
  answered: number | null;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let log: Received[] = [];
  let flakyFailed = new Set<string>();
  const server: Server = createServer(async (req, res) => {
    const body = await read(req);
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/_log') return void res.writeHead(200).end(JSON.stringify(log));
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
