// The local development identity provider: a page on this server that asks for a user name and
// optional groups, so the whole OAuth flow runs locally. It proves nothing about who is typing,
// so the Worker refuses to serve it unless every request is on loopback.

import { listSetting } from '../config/lists';
import { IdpError, type UpstreamIdentity, type UpstreamIdp } from './idp';

export const DEV_LOGIN_PATH = '/dev-idp/login';
const USER_RE = /^[A-Za-z0-9._@+-]{1,64}$/;
const GROUP_RE = /^[A-Za-z0-9._/-]{1,64}$/;

export function devIdp(origin: string): UpstreamIdp {
  return {
    kind: 'dev',
    prepare: () => Promise.resolve({}),
    authorizeUrl: (_data, state) =>
      Promise.resolve(`${origin}${DEV_LOGIN_PATH}?state=${encodeURIComponent(state)}`),
    finish: (callback) => Promise.resolve(devIdentity(new URL(callback.url).searchParams)),
  };
}

/** The identity typed on the dev login page (its form submits to the callback). */
export function devIdentity(params: URLSearchParams): UpstreamIdentity {
  const user = (params.get('user') ?? '').trim();
  if (!USER_RE.test(user)) {
    throw new IdpError('Enter a user name of letters, digits and . _ @ + - (at most 64).');
  }
  const groups = listSetting(params.get('groups') ?? undefined);
  const bad = groups.find((g) => !GROUP_RE.test(g));
  if (bad !== undefined)
    throw new IdpError('Groups are names of letters, digits and . _ / - separated by commas.');
  return {
    userId: user,
    login: user,
    ...(user.includes('@') ? { email: user } : {}),
    name: user,
    groups: [...new Set(groups)].slice(0, 50),
  };
}
