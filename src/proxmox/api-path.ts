// A raw API path as pve_api_request takes it: relative to /api2/json, syntactically clean, so
// that what a policy rule matches (args.path) is exactly what pveproxy routes. pveproxy decodes
// percent-escapes (%2F is a separator to it) and splits on repeated slashes, so anything that
// could make the two differ is refused rather than normalised: no `%`, no `..`, no `//`, no query.

const SEGMENT_RE = /^[A-Za-z0-9._-]{1,128}$/;
export const MAX_API_SEGMENTS = 12;
const MAX_PATH = 512;

/** Null when the path is clean, else why not. */
export function checkApiPath(path: string): string | null {
  if (path.length > MAX_PATH) return `must be at most ${MAX_PATH} characters`;
  if (!path.startsWith('/')) return 'must start with "/", e.g. /nodes/pve1/qemu/100/rrddata';
  if (/^\/api2(?:\/|$)/.test(path)) return 'is relative to /api2/json: write /nodes/..., not /api2/json/nodes/...';
  if (path.includes('?') || path.includes('#')) return 'must not carry a query: pass parameters in params';
  if (path.includes('%')) return 'must not contain percent-encoding';
  if (path.includes('\\')) return 'must not contain backslashes';
  const segments = path.slice(1).split('/');
  if (segments.some((s) => s === '')) return 'must not contain empty segments ("//" or a trailing "/")';
  if (segments.some((s) => s === '.' || s === '..')) return 'must not contain "." or ".." segments';
  if (segments.length > MAX_API_SEGMENTS) return `must have at most ${MAX_API_SEGMENTS} segments`;
  const bad = segments.find((s) => !SEGMENT_RE.test(s));
  return bad === undefined ? null : `segment ${JSON.stringify(bad.slice(0, 40))} may only hold letters, digits, ".", "_" and "-"`;
}

/** A parameter name as Proxmox defines them (every one in PVE 9.1 matches). */
export const API_PARAM_RE = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
