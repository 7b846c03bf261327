// The Worker's pages and routes outside the protected API, in AUTH_MODE=oauth: health, the
// sign-in flow, and a short landing page. The OAuth library serves metadata, /register, /token.

import { Hono } from 'hono';
import type { AppEnv } from '../env';
import { health } from '../health';
import { webRoutes } from '../web/routes';
import { authRoutes } from '../auth/routes';

export const authApp = new Hono<{ Bindings: AppEnv }>();

authApp.get('/health', health);
authApp.route('/', authRoutes as unknown as Hono<{ Bindings: AppEnv }>);
authApp.route('/', webRoutes);
authApp.get('/', (c) =>
  c.text(
    'Proxmox VE MCP server. Add this URL with /mcp (or /sse) to your MCP client; it will ask you to sign in.\n',
  ),
);
authApp.notFound((c) =>
  c.json(
    { error: 'not_found', message: 'Try /mcp (streamable HTTP), /sse (SSE) or /health.' },
    404,
  ),
);
authApp.onError((err, c) => {
  console.error(
    JSON.stringify({ msg: 'unhandled', error: `${err.name}: ${err.message}`.slice(0, 300) }),
  );
  return c.json({ error: 'internal', message: 'Internal error.' }, 500);
});
