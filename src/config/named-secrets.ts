// The secrets a JSON setting names by variable (PVE_CLUSTERS', PVE_IDENTITIES'), read however
// wrong the rest of the setting is: the scrubber removes their values wherever upstream text
// goes, so a mistake elsewhere in the setting never lets one out.

import type { AppEnv } from '../env';
import { OWN_SETTINGS, VAR_NAME_RE } from './own-settings';

/** The objects of a JSON setting: its list's, or (`byKey`) each of its lists' by key too. */
export function entriesOfJson(text: string | undefined, byKey: boolean): Record<string, unknown>[] {
  if (!text?.trim()) return [];
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return [];
  }
  const lists = Array.isArray(document)
    ? [document]
    : byKey && document && typeof document === 'object'
      ? Object.values(document)
      : [];
  return lists.flatMap((list) =>
    Array.isArray(list)
      ? list.filter((e): e is Record<string, unknown> => !!e && typeof e === 'object')
      : [],
  );
}

/**
 * The values of the variables `names` names: upper case, and never one of the server's own
 * settings (PUBLIC_URL would then be scrubbed from every answer) unless `allowed` says so.
 */
export function secretValues(
  env: AppEnv,
  names: readonly unknown[],
  allowed: ReadonlySet<string> = new Set(),
): string[] {
  const variables = env as unknown as Record<string, unknown>;
  return names.flatMap((name) => {
    if (typeof name !== 'string' || !VAR_NAME_RE.test(name)) return [];
    if (OWN_SETTINGS.has(name) && !allowed.has(name)) return [];
    const value = variables[name];
    return typeof value === 'string' && value.trim() !== '' ? [value.trim()] : [];
  });
}
