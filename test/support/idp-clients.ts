// The fake IdP as the sign-in clients under test meet it (in Node, in the serial project, and in
// workerd, where each Worker has its own): its control API, and a sign-in driven the way a
// browser would (prepare → authorizeUrl → the IdP's immediate 302 → our callback URL → finish). The wire types are restated here rather than
// imported from test/support/fake-idp.ts, which the Worker's typecheck (tsconfig.json) leaves out.
import { expect, inject } from 'vitest';
import type { UpstreamIdentity, UpstreamIdp } from '../../src/auth/idp';

export const CALLBACK = 'https://mcp.example.com/oauth/callback';
/** The client the fake IdP always knows. */
export const CLIENT = { id: 'mcp-test-client', secret: 'mcp-test-secret' } as const;

/** The fake IdP of this file: its Worker's own (TEST_FAKE_IDP_URL), or its Node project's. */
export function fakeUrl(): string {
  const url = process.env.TEST_FAKE_IDP_URL ?? inject('fakeIdpUrl');
  if (!url) throw new Error('no fake IdP: neither TEST_FAKE_IDP_URL nor a servers setup');
  return url;
}

export type Fault = 'badSignature' | 'wrongAudience' | 'expired' | 'wrongNonce' | 'wrongIssuer';

/** POST /control/next-login; null removes a default claim. */
export interface FakeLogin {
  sub?: string;
  email?: string | null;
  email_verified?: boolean | string | null;
  name?: string | null;
  preferred_username?: string | null;
  groups?: unknown;
  claims?: Record<string, unknown>;
  userinfoOnly?: string[];
  github?: {
    id?: number;
    login?: string;
    name?: string | null;
    email?: string | null;
    email_verified?: boolean;
    orgs?: string[];
    pendingOrgs?: string[];
    restrictedOrgs?: string[];
    teams?: { org: string; slug: string }[];
  };
  deny?: boolean;
  fault?: Fault;
}

export interface FakeLogEntry {
  endpoint: string;
  status: number;
  clientId?: string;
  clientAuth?: string;
  pkce?: string;
  error?: string;
  scope?: string;
  userAgent?: string;
  apiVersion?: string;
}

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${fakeUrl()}/control${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok)
    throw new Error(`fake IdP control ${method} ${path}: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return text ? (JSON.parse(text) as unknown) : null;
}

export const fake = {
  reset: () => control('POST', '/reset'),
  nextLogin: (login: FakeLogin) => control('POST', '/next-login', login),
  rotateKey: () => control('POST', '/rotate-key'),
  async requests(): Promise<FakeLogEntry[]> {
    return ((await control('GET', '/requests')) as { requests: FakeLogEntry[] }).requests;
  },
};

/** Runs prepare and authorizeUrl, follows the fake's redirect, and returns our callback request. */
export async function authorize(idp: UpstreamIdp, login?: FakeLogin) {
  if (login) await fake.nextLogin(login);
  const data = await idp.prepare();
  const state = crypto.randomUUID();
  const url = await idp.authorizeUrl(data, state, CALLBACK);
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = res.headers.get('location') ?? '';
  expect(location.startsWith(`${CALLBACK}?`)).toBe(true);
  expect(new URL(location).searchParams.get('state')).toBe(state);
  return { data, url: new URL(url), callback: new Request(location) };
}

/** One whole sign-in: the identity, or the IdpError that `finish` threw. */
export async function signIn(idp: UpstreamIdp, login?: FakeLogin): Promise<UpstreamIdentity> {
  const { data, callback } = await authorize(idp, login);
  return idp.finish(callback, data, CALLBACK);
}
