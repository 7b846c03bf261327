// /health as seen from a given origin, and an access token got the way an MCP client gets one
// (registration, consent, sign-in at the fake OpenID Connect provider, PKCE code exchange) for a
// resource on that origin — a public hostname or loopback — with the scopes asked for.

import { FormBrowser, signInUpstream } from '../form-browser';
import { fake, type FakeLogin } from '../idp-clients';
import { exchangeCode, REDIRECT } from './oauth';
import { workerFetch } from './mcp';

export const PUBLIC_ORIGIN = 'https://mcp.example.test';

export interface HealthBody {
  ok: boolean;
  view: 'operator' | 'public';
  proxmox: Record<string, unknown>;
  problems?: { check: string; message: string; fix: string }[];
  problem_count?: number;
  failing?: string[];
  [key: string]: unknown;
}

export async function getHealth(
  origin: string,
  token?: string,
): Promise<{ body: HealthBody; text: string; status: number }> {
  const res = await workerFetch(
    `${origin}/health`,
    token ? { headers: { authorization: `Bearer ${token}` } } : {},
  );
  const text = await res.text();
  return { body: JSON.parse(text) as HealthBody, text, status: res.status };
}

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** `scopes`: asked for and ticked at consent (the consent page's own choice when not given). */
export async function accessToken(
  origin: string,
  login: FakeLogin,
  scopes?: readonly string[],
): Promise<string> {
  const reg = await workerFetch(`${origin}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'health test',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }),
  });
  const { client_id: clientId } = (await reg.json()) as { client_id: string };
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: 'health',
    resource: origin,
    ...(scopes ? { scope: scopes.join(' ') } : {}),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  await fake.nextLogin(login);
  // The Worker on `origin`, the fake identity provider over real HTTP.
  const browser = new FormBrowser((url, init) =>
    new URL(url).origin === origin ? workerFetch(url, init) : fetch(url, init),
  );
  const result = await signInUpstream(browser, `${origin}/authorize?${params}`, REDIRECT, scopes);
  const code = result.location ? new URL(result.location).searchParams.get('code') : null;
  if (!code)
    throw new Error(
      `sign-in gave no code: ${result.status} ${result.finalHtml?.slice(0, 300) ?? ''}`,
    );
  return (await exchangeCode(origin, clientId, code, verifier)).access_token;
}
