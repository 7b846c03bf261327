// A raw API path as pve_api_request takes it: relative to /api2/json, syntactically clean, so
// that what a policy rule matches (args.path) is exactly what pveproxy routes. pveproxy decodes
// percent-escapes (%2F is a separator to it) and splits on repeated slashes, so anything that
// could make the two differ is refused rather than normalised: no `%`, no `..`, no `//`, no query,
// and no node named `localhost`.

import { isNodeAlias } from './formats';

const SEGMENT_RE = /^[A-Za-z0-9._-]{1,128}$/;
export const MAX_API_SEGMENTS = 12;
const MAX_PATH = 512;

/** Null when the path is clean, else why not. */
export function checkApiPath(path: string): string | null {
  if (path.length > MAX_PATH) return `must be at most ${MAX_PATH} characters`;
  if (!path.startsWith('/')) return 'must start with "/", e.g. /nodes/pve1/qemu/100/rrddata';
  if (/^\/api2(?:\/|$)/.test(path))
    return 'is relative to /api2/json: write /nodes/..., not /api2/json/nodes/...';
  if (path.includes('?') || path.includes('#'))
    return 'must not carry a query: pass parameters in params';
  if (path.includes('%')) return 'must not contain percent-encoding';
  if (path.includes('\\')) return 'must not contain backslashes';
  const segments = path.slice(1).split('/');
  if (segments.some((s) => s === ''))
    return 'must not contain empty segments ("//" or a trailing "/")';
  if (segments.some((s) => s === '.' || s === '..')) return 'must not contain "." or ".." segments';
  if (segments.length > MAX_API_SEGMENTS) return `must have at most ${MAX_API_SEGMENTS} segments`;
  const bad = segments.find((s) => !SEGMENT_RE.test(s));
  if (bad !== undefined)
    return `segment ${JSON.stringify(bad.slice(0, 40))} may only hold letters, digits, ".", "_" and "-"`;
  // pveproxy serves /nodes/localhost/... on whichever node answers: a rule on the path, and the
  // node its guest is judged on, would not see which.
  return segments[0] === 'nodes' && segments[1] !== undefined && isNodeAlias(segments[1])
    ? 'must name the node (e.g. /nodes/pve1/...), not localhost: the policy judges paths as written'
    : null;
}

/** A parameter name as Proxmox defines them (every one in PVE 9.1 matches). */
export const API_PARAM_RE = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/**
 * Whether every JavaScript object has a member of this name (`__proto__`, `constructor`,
 * `toString`, ...: anything `in Object.prototype`). A lookup by such a name finds the member, and
 * zod's records drop a `__proto__` key without a word, so these names are refused wherever one
 * becomes a parameter name (an API parameter, a config key). No PVE 9.1 parameter has one
 * (test/proxmox/api-path.node.test.ts), so refusing them loses nothing.
 */
export function isObjectMemberName(name: string): boolean {
  return name in Object.prototype;
}

/**
 * Why `name` cannot be a parameter of a raw request when every object has a member of that name,
 * else null (API_PARAM_RE judges the rest). Checked on the raw input's own keys, before a zod
 * record builds its copy and loses `__proto__`.
 */
export function checkApiParamName(name: string): string | null {
  return isObjectMemberName(name)
    ? 'no Proxmox parameter has this name (every JavaScript object has a member named so)'
    : null;
}
