// List settings (ALLOWED_USERS, ADMIN_GROUPS, OIDC_SCOPES...): entries separated by commas or
// white space, empty ones dropped.

export function listSetting(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[,\s]+/)
    .map((v) => v.trim())
    .filter(Boolean);
}
