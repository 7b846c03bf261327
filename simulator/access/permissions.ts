// API permission checks as pve-access-control's check_api2_permissions runs them before a handler
// (exec_api2_perm_check: 'perm' with path templates, 'any', 'require_param'; 'and'; 'or'), and the
// check/check_any helpers handlers call themselves. Failures raise PVE's 403 texts.
import { permError } from '../schema/pve-error.ts';
import type { Params } from '../schema/schema-types.ts';
import { hasPrivilege, type Identity } from './tokens.ts';

export type PermCheck =
  | {
      readonly kind: 'perm';
      /** A path template such as '/vms/{vmid}' (template_replace with the request's params). */
      readonly path: string;
      readonly privs: readonly string[];
      readonly any?: boolean;
      readonly requireParam?: string;
    }
  | { readonly kind: 'and' | 'or'; readonly checks: readonly PermCheck[] }
  /** permissions => { user => 'all' }: any authenticated user; the handler filters. */
  | { readonly kind: 'all' };

export const perm = (path: string, privs: readonly string[], any = false): PermCheck => ({
  kind: 'perm',
  path,
  privs,
  any,
});

export const ALL_USERS: PermCheck = { kind: 'all' };

/** RPCEnvironment check(): every privilege; names the first missing one. */
export function check(
  identity: Identity,
  path: string,
  privs: readonly string[],
  noerr = false,
): boolean {
  const missing = privs.find((priv) => !hasPrivilege(identity, path, priv));
  if (missing === undefined) return true;
  if (noerr) return false;
  throw permError(`${path}, ${missing}`);
}

/** RPCEnvironment check_any(): one of the privileges; names them all joined with '|'. */
export function checkAny(
  identity: Identity,
  path: string,
  privs: readonly string[],
  noerr = false,
): boolean {
  if (privs.some((priv) => hasPrivilege(identity, path, priv))) return true;
  if (noerr) return false;
  throw permError(`${path}, ${privs.join('|')}`);
}

/** check_vm_perm: the pool path first (quietly), then /vms/<vmid>. */
export function checkVmPerm(
  identity: Identity,
  vmid: number,
  privs: readonly string[],
  any = false,
  pool?: string,
): boolean {
  const run = any ? checkAny : check;
  if (pool !== undefined && run(identity, `/pool/${pool}`, privs, true)) return true;
  return run(identity, `/vms/${vmid}`, privs);
}

function fillTemplate(template: string, params: Params): string {
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? ''));
  return `/${path.split('/').filter(Boolean).join('/')}`;
}

function run(identity: Identity, spec: PermCheck, params: Params, noerr: boolean): boolean {
  switch (spec.kind) {
    case 'all':
      return true;
    case 'and':
      for (const sub of spec.checks) run(identity, sub, params, false);
      return true;
    case 'or':
      if (spec.checks.some((sub) => run(identity, sub, params, true))) return true;
      if (noerr) return false;
      throw permError();
    case 'perm': {
      if (spec.requireParam !== undefined && params[spec.requireParam] == null) {
        if (noerr) return false;
        throw permError();
      }
      const path = fillTemplate(spec.path, params);
      return (spec.any ? checkAny : check)(identity, path, spec.privs, noerr);
    }
  }
}

/** The check pveproxy runs before proxying and before parameter validation. */
export function checkApiPermissions(identity: Identity, spec: PermCheck, params: Params): void {
  // Every simulator identity is an API token, never root@pam itself, so no check is skipped.
  run(identity, spec, params, false);
}
