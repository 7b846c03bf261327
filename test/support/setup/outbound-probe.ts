// The auth tests' outbound probe (see ../worker/outbound-probe.ts): a plain TCP trap on loopback
// that records every connection, a 302 hop to a landing server that records every request, and
// a counts endpoint. The trap speaks no TLS: a connection is the leak, whatever follows it.

import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import type { TestProject } from 'vitest/node';
import type { ProbeCounts } from '../worker/outbound-probe.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const counts: ProbeCounts = { trapConnections: 0, landingRequests: 0 };
  const trap = (socket: import('node:net').Socket) => {
    counts.trapConnections++;
    socket.destroy();
  };
  const trap4 = createTcpServer(trap);
  const trapPort = await listen(trap4, '127.0.0.1', 0);
  const trap6 = createTcpServer(trap);
  await listen(trap6, '::1', trapPort);

  const landing = createHttpServer((_req, res) => {
    counts.landingRequests++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"landed":true}');
  });
  const landingUrl = `http://127.0.0.1:${await listen(landing, '127.0.0.1', 0)}/landed`;
  const hop = createHttpServer((_req, res) => res.writeHead(302, { location: landingUrl }).end());
  const countsServer = createHttpServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts)),
  );

  project.provide('outboundProbe', {
    trapPort,
    hopUrl: `http://127.0.0.1:${await listen(hop, '127.0.0.1', 0)}/client.json`,
    landingUrl,
    countsUrl: `http://127.0.0.1:${await listen(countsServer, '127.0.0.1', 0)}/counts`,
  });
  return async () => {
    await Promise.all([trap4, trap6, landing, hop, countsServer].map(close));
  };
}

function listen(server: Server | HttpServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function close(server: Server | HttpServer): Promise<void> {
  if ('closeAllConnections' in server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
