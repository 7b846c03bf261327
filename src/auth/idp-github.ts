// Sign-in with a GitHub OAuth app (github.com or GitHub Enterprise Server): authorization code
// with PKCE S256, then the user, their primary verified email and, when an org is configured,
// their active membership and teams in it as groups. The GitHub token lives only inside `finish`.

import type { GithubSettings } from '../config';
import { calculatePKCECodeChallenge, generateRandomCodeVerifier } from 'oauth4webapi';
import { z } from 'zod';
import { IdpError, type UpstreamData, type UpstreamIdentity, type UpstreamIdp } from './idp';
import { idpFetch, providerUrlProblem } from './idp-http';

/** The provider's settings, as ../config/sign-in.ts parses them. */
export type GithubConfig = GithubSettings;

/** Why this configuration cannot work (for /health or config checks), or undefined. */
export const githubConfigProblem = (config: GithubConfig): string | undefined =>
  providerUrlProblem(config.webUrl, 'GITHUB_URL') ??
  providerUrlProblem(config.apiUrl, 'GITHUB_API_URL');

/** /user/teams lists teams in every org; 10 pages of 100 is far more than anyone belongs to. */
const MAX_TEAM_PAGES = 10;
const USER_AGENT = 'proxmox-mcp-workers';

// GitHub answers token errors with HTTP 200 and an `error` field instead of a token.
const tokenAnswer = z.object({
  access_token: z.string().min(1).optional(),
  error: z.string().optional(),
});
const user = z.object({
  id: z.number().int(),
  login: z.string().min(1),
  name: z.string().nullish(),
});
const emails = z.array(
  z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }),
);
const membership = z.object({ state: z.string() });
const teams = z.array(
  z.object({ slug: z.string(), organization: z.object({ login: z.string() }) }),
);

export function githubIdp(config: GithubConfig): UpstreamIdp {
  const web = config.webUrl.replace(/\/+$/, '');
  const org = config.org?.trim() || undefined;
  const checked = (): void => {
    const problem = githubConfigProblem(config);
    if (problem) throw new IdpError(`Sign-in is misconfigured: ${problem}.`);
  };
  return {
    kind: 'github',
    prepare: () => Promise.resolve({ code_verifier: generateRandomCodeVerifier() }),

    async authorizeUrl(data, state, callbackUrl) {
      checked();
      const url = new URL(`${web}/login/oauth/authorize`);
      url.searchParams.set('client_id', config.clientId);
      url.searchParams.set('redirect_uri', callbackUrl);
      url.searchParams.set('state', state);
      // read:org lets the membership and teams calls see private membership too.
      url.searchParams.set('scope', org ? 'read:user user:email read:org' : 'read:user user:email');
      url.searchParams.set('code_challenge', await calculatePKCECodeChallenge(verifierOf(data)));
      url.searchParams.set('code_challenge_method', 'S256');
      url.searchParams.set('allow_signup', 'false');
      return url.href;
    },

    async finish(callback, data, callbackUrl) {
      checked();
      const verifier = verifierOf(data);
      const params = new URL(callback.url).searchParams;
      const error = params.get('error');
      if (error) throw new IdpError(`GitHub refused the sign-in: ${safeCode(error)}.`);
      const code = params.get('code');
      if (!code)
        throw new IdpError('The sign-in could not be verified: GitHub sent no authorization code.');
      const api = githubApi(
        config.apiUrl,
        await exchangeCode(config, web, code, verifier, callbackUrl),
      );
      const [who, addresses, groups] = await Promise.all([
        api.get('/user', user),
        api.get('/user/emails', emails),
        org ? orgGroups(api, org) : Promise.resolve([]),
      ]);
      const email = addresses.find((e) => e.primary && e.verified)?.email;
      const name = who.name?.trim();
      // Logins can be renamed (and then taken by someone else); the numeric id cannot.
      const identity: UpstreamIdentity = { userId: `github-${who.id}`, login: who.login, groups };
      if (email) identity.email = email;
      if (name) identity.name = name;
      return identity;
    },
  };
}

function verifierOf(data: UpstreamData): string {
  if (data.code_verifier) return data.code_verifier;
  throw new IdpError(
    'The sign-in could not be verified: its transaction is incomplete. Please start again.',
  );
}

/** Codes are echoed only when they look like codes: a callback URL is forgeable. */
const safeCode = (code: string): string =>
  /^[a-z0-9_.-]{1,64}$/i.test(code) ? code : 'unknown_error';

async function exchangeCode(
  config: GithubConfig,
  web: string,
  code: string,
  verifier: string,
  callbackUrl: string,
): Promise<string> {
  const res = await idpFetch(
    `${web}/login/oauth/access_token`,
    {
      method: 'POST',
      redirect: 'manual',
      headers: {
        Accept: 'application/json',
        'Content-Type': 'application/x-www-form-urlencoded',
        'User-Agent': USER_AGENT,
      },
      body: new URLSearchParams({
        client_id: config.clientId,
        client_secret: config.clientSecret,
        code,
        redirect_uri: callbackUrl,
        code_verifier: verifier,
      }),
    },
    'GitHub (token exchange)',
  );
  const parsed = tokenAnswer.safeParse(res.ok ? await res.json().catch(() => null) : null);
  if (!parsed.success) {
    throw new IdpError(
      `GitHub answered the token exchange with HTTP ${res.status} and no usable body.`,
    );
  }
  const { access_token: token, error } = parsed.data;
  if (error === 'bad_verification_code') {
    throw new IdpError(
      'GitHub did not accept the authorization code (bad_verification_code); it may have expired or been used. Please sign in again.',
    );
  }
  if (error === 'incorrect_client_credentials') {
    throw new IdpError(
      "GitHub rejected this server's client credentials; check GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET.",
    );
  }
  if (error || !token)
    throw new IdpError(
      `GitHub refused the token exchange: ${safeCode(error ?? 'no_access_token')}.`,
    );
  return token;
}

interface GithubApi {
  /** GET a path below the API URL and validate the JSON; anything but 2xx is an IdpError. */
  get<T>(path: string, schema: z.ZodType<T>): Promise<T>;
  /** The response as it came, for callers that read the status or the Link header. */
  raw(pathOrUrl: string): Promise<Response>;
}

function githubApi(apiUrl: string, token: string): GithubApi {
  const base = apiUrl.replace(/\/+$/, '');
  const headers = {
    Accept: 'application/vnd.github+json',
    Authorization: `Bearer ${token}`,
    'User-Agent': USER_AGENT,
    'X-GitHub-Api-Version': '2022-11-28',
  };
  const raw = (pathOrUrl: string): Promise<Response> => {
    const url = pathOrUrl.startsWith('/') ? `${base}${pathOrUrl}` : pathOrUrl;
    // The token goes to the configured API origin only, whatever a Link header says.
    if (!URL.canParse(url) || new URL(url).origin !== new URL(base).origin) {
      throw new IdpError("GitHub's API sent a link to another host.");
    }
    return idpFetch(url, { headers, redirect: 'manual' }, `GitHub (GET ${new URL(url).pathname})`);
  };
  return {
    raw,
    async get(path, schema) {
      const res = await raw(path);
      if (!res.ok) throw new IdpError(`GitHub's API answered GET ${path} with HTTP ${res.status}.`);
      return parseBody(res, schema, path);
    },
  };
}

async function parseBody<T>(res: Response, schema: z.ZodType<T>, path: string): Promise<T> {
  const parsed = schema.safeParse(await res.json().catch(() => null));
  if (!parsed.success)
    throw new IdpError(`GitHub's API answered GET ${path} with an unexpected body.`);
  return parsed.data;
}

/**
 * `GET /user/memberships/orgs/{org}` is the one call that answers "is this user an active member":
 * it sees private membership (with read:org), tells a pending invitation (state "pending") from
 * a member, and answers 404 for anyone else. Teams cannot decide it (a member need not be in
 * one), and /user/orgs silently leaves out orgs that restrict OAuth apps.
 */
async function orgGroups(api: GithubApi, org: string): Promise<string[]> {
  const path = `/user/memberships/orgs/${encodeURIComponent(org)}`;
  const res = await api.raw(path);
  if (res.status === 404) return [];
  if (res.status === 403) {
    throw new IdpError(
      `GitHub would not show membership of ${org}: the organization restricts OAuth app access; an owner must approve this app.`,
    );
  }
  if (!res.ok) throw new IdpError(`GitHub's API answered GET ${path} with HTTP ${res.status}.`);
  if ((await parseBody(res, membership, path)).state !== 'active') return [];

  const slugs: string[] = [];
  let next: string | undefined = '/user/teams?per_page=100';
  for (let page = 0; next && page < MAX_TEAM_PAGES; page++) {
    const list = await api.raw(next);
    if (!list.ok)
      throw new IdpError(`GitHub's API answered GET /user/teams with HTTP ${list.status}.`);
    // Org logins are case-insensitive; groups name the org as configured, as ALLOWED_GROUPS does.
    for (const team of await parseBody(list, teams, '/user/teams')) {
      if (team.organization.login.toLowerCase() === org.toLowerCase())
        slugs.push(`${org}/${team.slug}`);
    }
    next = /<([^>]+)>;\s*rel="next"/.exec(list.headers.get('link') ?? '')?.[1];
  }
  return [org, ...new Set(slugs)];
}
