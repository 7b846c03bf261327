// wrangler dev stopped by a port another process holds: startStack says which port, so that a
// port it picked itself (taken between its pick and wrangler's bind, by a server starting beside
// it) is picked again. wrangler names the server's port ("Address already in use
// (localhost:8787)"), but for the devtools port only a socket ("(socket "direct:1:default")").

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PortTaken, startStack } from '../../scripts/dev-stack.ts';

const held: Server[] = [];
const dirs: string[] = [];

/** A port another process holds for the rest of the test. */
async function holdPort(): Promise<number> {
  const server = createServer();
  held.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

afterEach(async () => {
  await Promise.all(held.splice(0).map((s) => new Promise((r) => s.close(r))));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('startStack on a port another process holds', () => {
  for (const which of ['port', 'inspectorPort'] as const)
    it(`names the ${which === 'port' ? "server's" : 'devtools'} port it could not take`, async () => {
      const taken = await holdPort();
      const dir = mkdtempSync(path.join(os.tmpdir(), 'dev-stack-ports-'));
      dirs.push(dir);
      const started = startStack({
        port: which === 'port' ? taken : 0,
        inspectorPort: which === 'inspectorPort' ? taken : 0,
        simPort: 0,
        stdio: 'ignore',
        persistTo: dir,
      });
      const failed = await started.then(
        async (stack) => {
          await stack.stop();
          return null;
        },
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(PortTaken);
      expect((failed as PortTaken).port).toBe(taken);
    }, 60_000);
});
