// The doctor's signed-in checks, with the MCP SDK client over streamable HTTP: tools/list, then one
// read-only call (pve_list_vms with limit 1), each with its latency. The token is --token, or on a
// local server with the development sign-in (IDP=dev) one got through it as `npm run token` does;
// AUTH_MODE=none needs none.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { devAccessToken } from '../../test/support/oauth-node.ts';
import { POLICY_READ_SCOPE, SCOPES } from '../../src/core/scopes.ts';
import { errorText, type Health } from './health-checks.ts';
import { fail, notApplicable, pass, skip, type CheckResult } from './report.ts';

const TIMEOUT_MS = 20_000;
const READ_TOOL = 'pve_list_vms';
const DEV_USER = 'doctor@localhost';

/**
 * A token through the development sign-in, with every tool scope (so that tools/list shows all the
 * policy lets through) and policy:read (so that /health gives an administrator its details).
 */
export function devToken(origin: string): Promise<string> {
  return devAccessToken(origin, DEV_USER, '', [...SCOPES, POLICY_READ_SCOPE].join(' '));
}

/** `dev`: a token devToken already got for this server. */
export async function signInResult(
  origin: string,
  health: Health,
  given: string | undefined,
  dev?: string,
): Promise<{ result: CheckResult; token?: string }> {
  const name = 'sign-in';
  if (health.auth_mode !== 'oauth')
    return { result: notApplicable(name, `AUTH_MODE=${health.auth_mode}: no token needed`) };
  if (given) return { result: pass(name, 'bearer token from --token / MCP_TOKEN'), token: given };
  if (dev) return { result: pass(name, `development sign-in as ${DEV_USER}`), token: dev };
  if (health.idp !== 'dev') {
    return {
      result: skip(
        name,
        'no token: tools/list and the read-only call cannot be checked',
        'Pass --token <access token> (or MCP_TOKEN): docs/deploy.md, "npm run doctor".',
      ),
    };
  }
  try {
    const token = await devToken(origin);
    return { result: pass(name, `development sign-in as ${DEV_USER}`), token };
  } catch (err) {
    return {
      result: fail(
        name,
        `development sign-in failed: ${errorText(err)}`,
        'Check /health (PUBLIC_URL must be this URL, ALLOWED_USERS/ALLOWED_GROUPS).',
      ),
    };
  }
}

export async function toolResults(
  origin: string,
  token: string | undefined,
  signedIn: CheckResult,
): Promise<CheckResult[]> {
  if (signedIn.outcome === 'FAIL' || signedIn.outcome === 'SKIP') {
    const why = signedIn.outcome === 'FAIL' ? 'no token (sign-in failed)' : 'no token';
    return [
      skip('tools/list', why, signedIn.fix ?? ''),
      skip('read-only call', why, signedIn.fix ?? ''),
    ];
  }
  const client = new Client({ name: 'proxmox-mcp-doctor', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  try {
    await client.connect(transport, { timeout: TIMEOUT_MS });
  } catch (err) {
    const text = errorText(err);
    const fix = /401|unauthori[sz]ed/i.test(text)
      ? 'The token was refused: access tokens last 1 hour and are only good for the URL they were issued for (PUBLIC_URL).'
      : 'Check /health and the server logs (wrangler tail).';
    return [
      fail('tools/list', `cannot open an MCP session at ${origin}/mcp: ${text}`, fix),
      skip('read-only call', 'no session', fix),
    ];
  }
  try {
    return [await listTools(client), await readOnlyCall(client)];
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function listTools(client: Client): Promise<CheckResult> {
  const started = performance.now();
  try {
    const { tools } = await client.listTools({}, { timeout: TIMEOUT_MS });
    const ms = Math.round(performance.now() - started);
    const names = tools.map((t) => t.name);
    if (!names.includes(READ_TOOL)) {
      return fail(
        'tools/list',
        `${READ_TOOL} is not offered (${names.join(', ') || 'no tools'}).`,
        'The policy hides or denies it: check /health policy and `npm run policy -- explain`.',
      );
    }
    const shown =
      names.length > 4
        ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`
        : names.join(', ');
    return pass('tools/list', `${names.length} tools in ${ms} ms: ${shown}`);
  } catch (err) {
    return fail('tools/list', errorText(err), 'Check /health and the server logs (wrangler tail).');
  }
}

async function readOnlyCall(client: Client): Promise<CheckResult> {
  const name = 'read-only call';
  const started = performance.now();
  try {
    const result = await client.callTool({ name: READ_TOOL, arguments: { limit: 1 } }, undefined, {
      timeout: TIMEOUT_MS,
    });
    const ms = Math.round(performance.now() - started);
    const text = (Array.isArray(result.content) ? result.content : [])
      .map((c: { type?: string; text?: string }) => (c.type === 'text' ? c.text : ''))
      .join(' ')
      .slice(0, 400);
    if (result.isError)
      return fail(
        name,
        `${READ_TOOL} {limit: 1} failed in ${ms} ms: ${text}`,
        'The message says what to check; /health shows the same from the server.',
      );
    const total = (result.structuredContent as { total?: number } | undefined)?.total;
    return pass(
      name,
      `${READ_TOOL} {limit: 1} answered in ${ms} ms${total !== undefined ? ` (${total} guests in all)` : ''}`,
    );
  } catch (err) {
    return fail(name, errorText(err), 'Check /health and the server logs (wrangler tail).');
  }
}
