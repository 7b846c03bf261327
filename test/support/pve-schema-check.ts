// Checks one HTTP request our Worker sent against the real PVE API schema (the endpoint
// definitions the globalSetup cut out of Proxmox's own apiSchema), the way pve-http-server and
// pve-common's PVE::JSONSchema do: decoded path → endpoint, path parameters merged over the
// query or form body, then check_object/check_prop, property strings and named formats.
// Pure, importing only pure modules (the extra formats), because it runs inside workerd.
//
// Two rules hold throughout. What this file cannot check (a named format it does not implement,
// a Perl pattern it cannot translate, a schema keyword it does not know) comes back as a problem
// "… not checked", never as a silent pass. Where Perl is looser than JavaScript (a `$` that also
// matches before a final newline, Unicode `\w` and `\d`) we stay strict: a value that passes
// only through such a quirk is a bug on our side.

import type { EndpointDef } from './pve-endpoint.ts';
import { EXTRA_CODE_FORMATS, EXTRA_HASH_FORMATS } from './pve-formats-extra';

export interface LoggedRequest {
  method: string;
  /** e.g. /api2/json/nodes/pve1/qemu or /nodes/pve1/qemu, still percent-encoded. */
  path: string;
  query: Record<string, string>;
  /** Decoded form body (a repeated key as a list, as pve-http-server decodes it). */
  params: Record<string, string | string[]> | null;
}

type Schema = Readonly<Record<string, unknown>>;

/** One check's state; the endpoint's own properties are kept because formats derive from them. */
interface Ctx {
  props: Schema;
  indexLimits: Readonly<Record<string, number>> | null;
  problems: string[];
}

const isRecord = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Perl truthiness of a schema flag or value: undef, '', '0' and 0 are false. */
const perlTrue = (value: unknown): boolean =>
  value !== undefined &&
  value !== null &&
  value !== false &&
  value !== '' &&
  value !== '0' &&
  value !== 0;

const own = (schema: Schema, key: string): unknown =>
  Object.hasOwn(schema, key) ? schema[key] : undefined;

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

// ---------------------------------------------------------------------------------------------
// Request → endpoint

/**
 * Returns the problems (empty when valid): unmatched endpoint, unknown parameter, missing
 * required, type/enum/range/pattern/format errors, with the parameter name in each message.
 */
export function checkRequest(endpoints: EndpointDef[], req: LoggedRequest): string[] {
  const method = req.method.toUpperCase();
  const segments = pathSegments(req.path);
  if (typeof segments === 'string') return [segments];

  const onPath = endpoints.flatMap((def) => {
    const uriParams = matchTemplate(def.path, segments);
    return uriParams ? [{ def, uriParams }] : [];
  });
  if (onPath.length === 0) return [`endpoint: no checked endpoint matches ${method} ${req.path}`];
  const hit = onPath.find((m) => m.def.method === method);
  if (!hit) {
    const allowed = onPath.map((m) => m.def.method).join(', ');
    return [`endpoint: ${method} is not defined for ${onPath[0]?.def.path} (only ${allowed})`];
  }

  const problems: string[] = [];
  // pve-http-server reads a body only for POST/PUT and refuses one on GET ("Unexpected content").
  const hasBody = method === 'POST' || method === 'PUT';
  if (!hasBody && req.params && Object.keys(req.params).length > 0) {
    problems.push(`body: ${method} requests must not carry a body`);
  }
  // extract_params: body first, query over it; RESTHandler then sets the path parameters.
  const values = new Map<string, string | string[]>([
    ...Object.entries(hasBody ? (req.params ?? {}) : {}),
    ...Object.entries(req.query),
    ...Object.entries(hit.uriParams),
  ]);
  checkParameters(hit.def, values, problems);
  // The task handlers reject what PVE::UPID::decode cannot parse; the schema only says "string".
  const upid = hit.uriParams.upid;
  if (upid !== undefined && !UPID_RE.test(upid)) {
    problems.push(`upid: unable to parse worker upid '${upid}'`);
  }
  return problems;
}

/** UPID:node:pid(8 hex):pstart(8-9 hex):starttime(8 hex):type:id:user: (pve-common UPID.pm). */
const UPID_RE = new RegExp(
  '^UPID:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?:[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8,9}:[0-9A-Fa-f]{8}' +
    ':[^:\\s/]+:[^:\\s/]*:[^:\\s/]+:$',
);

/** The server unescapes the whole path before splitting it, so %2F separates segments too. */
function pathSegments(raw: string): string[] | string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return `path: malformed percent-encoding in ${raw}`;
  }
  let rel = decoded;
  const api = /^\/api2\/+([a-z][a-z0-9]+)(\/.*)?$/.exec(decoded);
  if (api) {
    if (api[1] !== 'json') return `path: response format '${api[1]}' is not json`;
    rel = api[2] ?? '/';
  }
  return rel.split(/\/+/).filter((segment) => segment.length > 0);
}

/**
 * Below a storage's content (pve-storage registers it with `fragmentDelimiter => ''`: volume ids
 * hold '/'), the rest of the path is one component.
 */
const CONTENT_PREFIX = ['nodes', '{node}', 'storage', '{storage}', 'content'];

/** A `{name}` segment matches `\S+` (RESTHandler's default), anything else literally. */
function matchTemplate(template: string, given: string[]): Record<string, string> | null {
  const parts = template.split('/').filter((part) => part.length > 0);
  const underContent = CONTENT_PREFIX.every((p, i) => parts[i] === p) && parts.length > 5;
  const segments = underContent ? [...given.slice(0, 5), given.slice(5).join('/')] : given;
  if (parts.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (const [i, part] of parts.entries()) {
    const segment = segments[i] ?? '';
    const name = /^\{([\w-]+)\}$/.exec(part)?.[1];
    if (name !== undefined) {
      if (!/^\S+$/.test(segment)) return null;
      params[name] = segment;
    } else if (part !== segment) return null;
  }
  return params;
}

function checkParameters(
  def: EndpointDef,
  values: Map<string, string | string[]>,
  problems: string[],
) {
  const schema = def.parameters;
  if (!isRecord(schema)) return; // RESTHandler validates nothing for a method without a schema
  const props = isRecord(schema.properties) ? schema.properties : {};
  const indexLimits = def.path.startsWith('/nodes/{node}/qemu')
    ? QEMU_INDEX_LIMITS
    : def.path.startsWith('/nodes/{node}/lxc')
      ? LXC_INDEX_LIMITS
      : null;
  const ctx: Ctx = { props, indexLimits, problems };
  checkObject('', props, values, schema.additionalProperties, ctx);
}

// ---------------------------------------------------------------------------------------------
// check_object / check_prop / check_type

/** Schema keywords PVE acts on that this file does not implement (none occur in our endpoints). */
const UNSUPPORTED_KEYWORDS = ['oneOf', 'type-property', 'instance-types', 'extends', 'disallow'];

/** The dump writes indexed options once (api_clone_schema): `net[n]` stands for net0, net1, … */
const INDEXED_KEY_RE = /^([a-z]+)\[n\]$/;

const NOT_IN_SCHEMA =
  'property is not defined in schema and the schema does not allow additional properties';

function checkObject(
  path: string,
  props: Schema,
  values: Map<string, string | string[]>,
  additional: unknown,
  ctx: Ctx,
): void {
  for (const [key, sub] of Object.entries(props)) {
    if (!INDEXED_KEY_RE.test(key)) checkProp(values.get(key), sub, join(path, key), ctx);
  }
  for (const [key, value] of values) {
    const at = join(path, key);
    const found = lookupProperty(props, key, ctx);
    if (found === 'range-unknown') {
      const placeholder = key.replace(/\d+$/, '[n]');
      ctx.problems.push(`${at}: index range of ${placeholder} unknown here, not checked`);
    } else if (found) {
      if (found.indexed) checkProp(value, found.schema, at, ctx);
      const requires = found.schema.requires;
      if (typeof requires === 'string' && !values.has(requires)) {
        const missing = join(path, requires);
        ctx.problems.push(`${missing}: missing property - '${at}' requires this property`);
      } else if (requires !== undefined && typeof requires !== 'string') {
        ctx.problems.push(`${at}: schema-valued 'requires' not checked`);
      }
    } else if (additional !== undefined && !perlTrue(additional)) {
      ctx.problems.push(`${at}: ${NOT_IN_SCHEMA}`);
    } else if (isRecord(additional)) checkProp(value, additional, at, ctx);
  }
}

type Lookup = { schema: Schema; indexed: boolean } | 'range-unknown' | null;

function lookupProperty(props: Schema, key: string, ctx: Ctx): Lookup {
  if (INDEXED_KEY_RE.test(key)) return null; // the placeholder itself is no option
  const direct = own(props, key);
  if (isRecord(direct)) return { schema: direct, indexed: false };
  // Only canonical indexes exist as options: net1 is one, net01 is not.
  const m = /^([a-z]+)(0|[1-9]\d*)$/.exec(key);
  if (!m) return null;
  const name = m[1] ?? '';
  const indexed = own(props, `${name}[n]`);
  if (!isRecord(indexed)) return null;
  const limit = ctx.indexLimits?.[name];
  if (limit === undefined) return 'range-unknown';
  return Number(m[2]) < limit ? { schema: indexed, indexed: true } : null;
}

function checkProp(
  value: string | string[] | undefined,
  schema: unknown,
  path: string,
  ctx: Ctx,
): undefined {
  const fail = (message: string): undefined => {
    ctx.problems.push(`${path}: ${message}`);
  };
  if (!isRecord(schema)) return fail('Invalid schema definition.');
  if (value === undefined) {
    const optional = perlTrue(schema.optional) || perlTrue(schema.alias) || perlTrue(schema.group);
    if (!optional) fail('property is missing and it is not optional');
    return;
  }
  // An array parameter: a repeated key arrives as a list, a single one is taken as a list of one
  // (RESTHandler's normalize_legacy_param_formats); each item is checked against `items`.
  if (schema.type === 'array') {
    const items = Array.isArray(value) ? value : [value];
    for (const [i, item] of items.entries()) checkProp(item, schema.items, `${path}[${i}]`, ctx);
    return;
  }
  if (Array.isArray(value)) return fail('sent more than once; PVE turns it into a list');
  const unsupported = UNSUPPORTED_KEYWORDS.find((k) => schema[k] !== undefined);
  if (unsupported) return fail(`schema keyword '${unsupported}' not checked`);

  const typeError = checkType(schema.type, value);
  if (typeError) return fail(typeError);
  if (perlTrue(schema.format) && !checkFormat(schema.format, value, path, ctx)) return;

  if (typeof schema.pattern === 'string' && schema.pattern !== '') {
    const re = compilePattern(schema.pattern);
    if (!re) return fail(`pattern ${schema.pattern} not checked`);
    if (!re.test(value)) return fail('value does not match the regex pattern');
  }
  const length = [...value].length; // Perl counts characters, not UTF-16 units
  const { maxLength, minLength, maximum, minimum } = schema;
  if (maxLength !== undefined && length > Number(maxLength)) {
    return fail(`value may only be ${String(maxLength)} characters long`);
  }
  if (minLength !== undefined && length < Number(minLength)) {
    return fail(`value must be at least ${String(minLength)} characters long`);
  }
  if (isNumber(value)) {
    if (maximum !== undefined && Number(value) > Number(maximum)) {
      return fail(`value must have a maximum value of ${String(maximum)}`);
    }
    if (minimum !== undefined && Number(value) < Number(minimum)) {
      return fail(`value must have a minimum value of ${String(minimum)}`);
    }
  }
  const choices = schema.enum;
  if (Array.isArray(choices) && !choices.some((choice) => String(choice) === value)) {
    fail(`value '${value}' does not have a value in the enumeration '${choices.join(', ')}'`);
  }
}

/** pve-common is_number / is_integer. */
const isNumber = (v: string): boolean => /^[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?$/.test(v);
const isInteger = (v: string): boolean => /^[+-]?\d+$/.test(v);

/** check_type for a plain (form) value; returns the error, or null. */
function checkType(type: unknown, value: string): string | null {
  if (!perlTrue(type)) return null;
  if (Array.isArray(type)) {
    const passes = type.some((t) => checkType(t, value) === null);
    return passes ? null : `type check ('${type.join('|')}') failed`;
  }
  if (typeof type !== 'string') return 'type given as a schema not checked';
  const got = `type check ('${type}') failed - got '${value}'`;
  switch (type) {
    case 'null':
      return "type check ('null') failed - value is not null";
    case 'array':
    case 'object':
    case 'coderef':
      return `type check ('${type}') failed`;
    // Form values are strings, and check_type takes only '0' and '1' as booleans.
    case 'boolean':
      return value === '0' || value === '1' ? null : got;
    case 'integer':
      return isInteger(value) ? null : got;
    case 'number':
      return isNumber(value) ? null : got;
    default:
      return null; // 'string', 'any' and unknown types pass, as in pve-common
  }
}

// ---------------------------------------------------------------------------------------------
// Formats: property strings (parse_property_string) and named formats (check_format)

/** Validators attached to named hash formats; they add problems themselves. */
type Validator = (parsed: ReadonlyMap<string, string>, path: string, problems: string[]) => void;

type NamedFormat =
  | { kind: 'code'; check: (value: string) => string | null }
  | { kind: 'hash'; props: Schema; validate?: Validator };

/** Returns true when the value passed (problems were added otherwise). */
function checkFormat(format: unknown, value: string, path: string, ctx: Ctx): boolean {
  const fail = (message: string): false => {
    ctx.problems.push(`${path}: ${message}`);
    return false;
  };
  if (isRecord(format)) return checkPropertyString(format, undefined, value, path, ctx);
  if (typeof format !== 'string') return fail('format of unexpected type not checked');
  if (format === 'regex') return true;

  const [, name = format, kind] = /^(.*?)(?:-(list|opt))?$/.exec(format) ?? [];
  const named = resolveFormat(name, ctx.props);
  if (!named) return fail(`format ${format} not checked`);
  if (named.kind === 'hash') {
    if (kind) return fail(`invalid format - '-${kind}' format must have code ref, not hash`);
    return checkPropertyString(named.props, named.validate, value, path, ctx);
  }
  if (kind === 'opt' && !perlTrue(value)) return true;
  for (const item of kind === 'list' ? splitList(value) : [value]) {
    const error = named.check(item);
    if (error) return fail(`invalid format - ${error}`);
  }
  return true;
}

/** PVE::Tools::split_list: NUL-separated if any NUL, else on `,`, `;` and whitespace. */
function splitList(text: string): string[] {
  if (text.includes('\0')) return perlSplit(text, '\0');
  return perlSplit(text.replace(/[,;]/g, ' ').trimStart(), /\s+/);
}

/** Perl's split drops trailing empty fields (and so yields nothing for an empty string). */
function perlSplit(text: string, separator: string | RegExp): string[] {
  const fields = text.split(separator);
  while (fields.length > 0 && fields[fields.length - 1] === '') fields.pop();
  return fields;
}

/** parse_boolean, applied to boolean keys inside property strings only. */
function parseBoolean(value: string): string | null {
  if (/^(1|on|yes|true)$/i.test(value)) return '1';
  if (/^(0|off|no|false)$/i.test(value)) return '0';
  return null;
}

function checkPropertyString(
  props: Schema,
  validate: Validator | undefined,
  data: string,
  path: string,
  ctx: Ctx,
): boolean {
  const fail = (message: string): false => {
    ctx.problems.push(`${path}: invalid format - ${message}`);
    return false;
  };
  const duplicate = (key: string): false =>
    fail(`duplicate key in comma-separated list property: ${key}`);
  const parsed = new Map<string, string>();
  let defaultKey: string | undefined;
  for (const part of data.split(',')) {
    if (/^\s*$/.test(part)) continue;
    const kv = /^([^=]+)=(.+)$/.exec(part);
    if (kv) {
      let key = kv[1] ?? '';
      let value = kv[2] ?? '';
      // The duplicate check sees the key as written, before an alias renames it (as in PVE).
      if (parsed.has(key)) return duplicate(key);
      let sub = own(props, key);
      if (isRecord(sub) && typeof sub.alias === 'string' && sub.alias !== '') {
        // keyAlias: `virtio=<mac>` stores the key itself as the model.
        const keyAlias = sub.keyAlias;
        if (typeof keyAlias === 'string' && keyAlias !== '') {
          if (parsed.has(keyAlias)) return fail(`key alias '${keyAlias}' is already defined`);
          parsed.set(keyAlias, key);
        }
        key = sub.alias;
        sub = own(props, key);
      }
      if (!isRecord(sub)) return fail(`invalid key in comma-separated list property: ${key}`);
      if (sub.type === 'boolean') value = parseBoolean(value) ?? value;
      parsed.set(key, value);
    } else if (!part.includes('=')) {
      if (defaultKey !== undefined) return duplicate(defaultKey);
      defaultKey = Object.keys(props).find((k) => {
        const sub = props[k];
        return isRecord(sub) && perlTrue(sub.default_key);
      });
      if (defaultKey === undefined) {
        return fail('value without key, but schema does not define a default key');
      }
      if (perlTrue(parsed.get(defaultKey))) return duplicate(defaultKey);
      parsed.set(defaultKey, part); // a bare value is not run through parse_boolean
    } else return fail('missing key in comma-separated list property');
  }
  const before = ctx.problems.length;
  checkObject(path, props, parsed, 0, ctx);
  if (ctx.problems.length > before) return false;
  validate?.(parsed, path, ctx.problems);
  return ctx.problems.length === before;
}

function resolveFormat(name: string, endpointProps: Schema): NamedFormat | undefined {
  const check = own(CODE_FORMATS, name) ?? own(EXTRA_CODE_FORMATS, name);
  if (typeof check === 'function') {
    return { kind: 'code', check: check as (value: string) => string | null };
  }
  const hash = own(EXTRA_HASH_FORMATS, name);
  if (isRecord(hash)) return { kind: 'hash', props: hash };
  if (name === 'pve-qm-boot') return { kind: 'hash', props: BOOT_FORMAT };
  if (name === 'pve-vm-cpu-conf') return { kind: 'hash', props: CPU_FORMAT, validate: checkVmCpu };
  if (name === 'pve-qm-ide') {
    // qemu-server's $ide_fmt: the endpoint's ide[n] format without the create-only import-from.
    const ide = own(endpointProps, 'ide[n]');
    if (!isRecord(ide) || !isRecord(ide.format)) return undefined;
    const { 'import-from': _importFrom, ...props } = ide.format;
    return { kind: 'hash', props };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Named formats, written from pve-common, pve-storage, pve-access-control and qemu-server 9.1.
// Each returns the error PVE would give, or null.

const NODE_RE = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/;
const DNS_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const DNS_NAME_RE = new RegExp(`^(?:${DNS_LABEL}\\.)*${DNS_LABEL}$`);
const STORAGE_ID = '[a-z][a-z0-9\\-_.]*[a-z0-9]';
const STORAGE_ID_RE = new RegExp(`^${STORAGE_ID}$`, 'i');
const VOLUME_ID_RE = new RegExp(`^${STORAGE_ID}:.+$`, 'i');
const POOL_RE = /^[A-Za-z0-9.\-_]+(?:\/[A-Za-z0-9.\-_]+){0,2}$/;
const MAC_RE = /^[a-f0-9][02468ace](?::[a-f0-9]{2}){5}$/i;

/** How many of each indexed qemu option exist (qemu-server 9.1's $MAX_NETS, $MAX_*_DISKS, …). */
export const QEMU_INDEX_LIMITS: Readonly<Record<string, number>> = {
  net: 32,
  ipconfig: 32,
  ide: 4,
  sata: 6,
  scsi: 31,
  virtio: 16,
  unused: 256,
  usb: 14,
  hostpci: 16,
  serial: 4,
  parallel: 3,
  numa: 8,
  virtiofs: 10,
};

/** pve-container 9.1's $MAX_LXC_NETWORKS, $MAX_MOUNT_POINTS, $MAX_UNUSED_DISKS, $MAX_DEVICES. */
export const LXC_INDEX_LIMITS: Readonly<Record<string, number>> = {
  net: 32,
  mp: 256,
  unused: 256,
  dev: 256,
};

const hasIndex = (name: string, dev: string): boolean => {
  const m = new RegExp(`^${name}(0|[1-9]\\d*)$`).exec(dev);
  return m !== null && Number(m[1]) < (QEMU_INDEX_LIMITS[name] ?? 0);
};
/** Drive.pm is_valid_drivename; efidisk0/tpmstate0 count as drives but cannot be booted from. */
const isDriveName = (dev: string, withSpecial: boolean): boolean =>
  ['ide', 'sata', 'scsi', 'virtio'].some((bus) => hasIndex(bus, dev)) ||
  (withSpecial && (dev === 'efidisk0' || dev === 'tpmstate0'));
const isBootDevice = (dev: string): boolean =>
  isDriveName(dev, false) || ['net', 'usb', 'hostpci'].some((kind) => hasIndex(kind, dev));

const checkVolumeId = (v: string): string | null =>
  VOLUME_ID_RE.test(v) ? null : `unable to parse volume ID '${v}'`;
const checkVolumeOrPath = (v: string): string | null =>
  v.startsWith('/') ? null : checkVolumeId(v);

/** pve_parse_startup_order: an empty or '0' value is refused, blank parts are skipped. */
const isStartupOrder = (v: string): boolean =>
  perlTrue(v) &&
  v.split(',').every((p) => /^\s*$/.test(p) || /^(?:(?:order=)?\d+|up=\d+|down=\d+)$/.test(p));

const CODE_FORMATS: Readonly<Record<string, (value: string) => string | null>> = {
  string: () => null,
  'pve-node': (v) => (NODE_RE.test(v) ? null : 'value does not look like a valid node name'),
  'pve-vmid': (v) =>
    /^[1-9][0-9]{2,8}$/.test(v) ? null : 'value does not look like a valid VM ID',
  'dns-name': (v) => (DNS_NAME_RE.test(v) ? null : 'value does not look like a valid DNS name'),
  'pve-tag': (v) => (/^[a-z0-9_][a-z0-9_\-+.]*$/i.test(v) ? null : 'invalid characters in tag'),
  'pve-poolid': (v) => {
    if (perlSplit(v, '/').length > 3) return `pool name '${v}' nested too deeply (max levels = 3)`;
    return POOL_RE.test(v) ? null : `pool name '${v}' contains invalid characters`;
  },
  'pve-storage-id': (v) =>
    STORAGE_ID_RE.test(v) ? null : `storage ID '${v}' contains illegal characters`,
  'pve-bridge-id': (v) => (/^[-_.A-Za-z0-9]+$/.test(v) ? null : `invalid bridge ID '${v}'`),
  'pve-configid': (v) => (/^[a-z][a-z0-9_-]+$/i.test(v) ? null : `invalid configuration ID '${v}'`),
  'mac-addr': (v) =>
    MAC_RE.test(v) ? null : 'value does not look like a valid unicast MAC address',
  urlencoded: (v) =>
    /^[-%a-zA-Z0-9_.!~*'()]*$/.test(v) ? null : `invalid urlencoded string: ${v}`,
  'disk-size': (v) =>
    /^\d+(\.\d+)?[KMGT]?$/.test(v) ? null : `value does not look like a valid disk size: ${v}`,
  'pve-volume-id': checkVolumeId,
  'pve-volume-id-or-absolute-path': checkVolumeOrPath,
  'pve-volume-id-or-qm-path': (v) => (v === 'none' || v === 'cdrom' ? null : checkVolumeOrPath(v)),
  'pve-qm-bootdisk': (v) => (isDriveName(v, true) ? null : `invalid boot disk '${v}'`),
  'pve-qm-bootdev': (v) => (isBootDevice(v) ? null : `invalid boot device '${v}'`),
  'pve-startup-order': (v) => (isStartupOrder(v) ? null : 'unable to parse startup options'),
  'pve-phys-bits': (v) => {
    const ok = v === 'host' || (/^\d{1,2}$/.test(v) && Number(v) >= 8 && Number(v) <= 64);
    return ok ? null : "value must be an integer between 8 and 64 or 'host'";
  },
};

/** qemu-server's boot format: legacy `[acdn]{1,4}` (default key) or `order=dev;dev`. */
const BOOT_FORMAT: Schema = {
  legacy: { type: 'string', optional: 1, default_key: 1, pattern: '[acdn]{1,4}' },
  order: { type: 'string', optional: 1, format: 'pve-qm-bootdev-list' },
};

/** CPU models qemu-server 9.1 knows (CPUConfig.pm, both arches), `host` on an x86_64 host. */
const CPU_MODELS = new Set(
  `486 pentium pentium2 pentium3 coreduo core2duo Conroe Penryn Nehalem Nehalem-IBRS Westmere
  Westmere-IBRS SandyBridge SandyBridge-IBRS IvyBridge IvyBridge-IBRS Haswell Haswell-IBRS
  Haswell-noTSX Haswell-noTSX-IBRS Broadwell Broadwell-IBRS Broadwell-noTSX Broadwell-noTSX-IBRS
  Skylake-Client Skylake-Client-IBRS Skylake-Client-noTSX-IBRS Skylake-Client-v4 Skylake-Server
  Skylake-Server-IBRS Skylake-Server-noTSX-IBRS Skylake-Server-v4 Skylake-Server-v5
  Cascadelake-Server Cascadelake-Server-v2 Cascadelake-Server-noTSX Cascadelake-Server-v4
  Cascadelake-Server-v5 Cooperlake Cooperlake-v2 KnightsMill Icelake-Client Icelake-Client-noTSX
  Icelake-Server Icelake-Server-noTSX Icelake-Server-v3 Icelake-Server-v4 Icelake-Server-v5
  Icelake-Server-v6 Icelake-Server-v7 SapphireRapids SapphireRapids-v2 SapphireRapids-v3
  SapphireRapids-v4 GraniteRapids GraniteRapids-v2 GraniteRapids-v3 SierraForest SierraForest-v2
  SierraForest-v3 ClearwaterForest athlon phenom Opteron_G1 Opteron_G2 Opteron_G3 Opteron_G4
  Opteron_G5 EPYC EPYC-IBPB EPYC-v3 EPYC-v4 EPYC-v5 EPYC-Rome EPYC-Rome-v2 EPYC-Rome-v3
  EPYC-Rome-v4 EPYC-Rome-v5 EPYC-Milan EPYC-Milan-v2 EPYC-Milan-v3 EPYC-Genoa EPYC-Genoa-v2
  EPYC-Turin kvm32 kvm64 qemu32 qemu64 max host a64fx cortex-a35 cortex-a53 cortex-a55
  cortex-a57 cortex-a710 cortex-a72 cortex-a76 neoverse-n1 neoverse-n2 neoverse-v1`.split(/\s+/),
);
/** qemu-server's built-in models, defined as flag sets over qemu64. */
const BUILTIN_CPU_MODELS = new Set(['x86-64-v2', 'x86-64-v2-AES', 'x86-64-v3', 'x86-64-v4']);
/** The only flags a VM's own cpu option may set (the rest need a custom model). */
const VM_CPU_FLAGS = `aes amd-no-ssb amd-ssbd hv-evmcs hv-tlbflush ibpb md-clear nested-virt
  pcid pdpe1gb spec-ctrl ssbd virt-ssbd`.split(/\s+/);
const VM_CPU_FLAG = `[+-](?:${VM_CPU_FLAGS.join('|')})`;
const VM_CPU_FLAGS_RE = new RegExp(`^${VM_CPU_FLAG}(?:;${VM_CPU_FLAG})*$`);
const CPU_FLAG = '[+-][a-zA-Z0-9\\-_\\.]+';

const CPU_FORMAT: Schema = {
  cputype: { type: 'string', optional: 1, default_key: 1 },
  'reported-model': { type: 'string', optional: 1, enum: [...CPU_MODELS] },
  hidden: { type: 'boolean', optional: 1 },
  'hv-vendor-id': { type: 'string', optional: 1, pattern: '[a-zA-Z0-9]{1,12}' },
  flags: { type: 'string', optional: 1, pattern: `${CPU_FLAG}(;${CPU_FLAG})*` },
  'guest-phys-bits': { type: 'integer', optional: 1, minimum: 32, maximum: 64 },
  'phys-bits': { type: 'string', optional: 1, format: 'pve-phys-bits' },
};

/** validate_vm_cpu_conf: a known cputype, VM-safe flags only, no reported-model. */
const checkVmCpu: Validator = (parsed, path, problems) => {
  const fail = (message: string): void =>
    void problems.push(`${path}: invalid format - ${message}`);
  const cputype = parsed.get('cputype') ?? '';
  if (!perlTrue(cputype)) return fail('CPU is missing cputype');
  if (cputype.startsWith('custom-')) {
    // Custom models live in the cluster's cpu-models.conf, which a request cannot show us.
    return void problems.push(`${path}: custom CPU model '${cputype}' not checked`);
  }
  if (!CPU_MODELS.has(cputype) && !BUILTIN_CPU_MODELS.has(cputype)) {
    return fail(`Built-in cputype '${cputype}' is not defined (missing 'custom-' prefix?)`);
  }
  const flags = parsed.get('flags') ?? '';
  if (perlTrue(flags) && !VM_CPU_FLAGS_RE.test(flags)) {
    return fail(`VM-specific CPU flags must be a subset of: ${VM_CPU_FLAGS.join(', ')}`);
  }
  if (parsed.has('reported-model')) {
    fail("Property 'reported-model' not allowed in VM-specific CPU config.");
  }
};

// ---------------------------------------------------------------------------------------------
// Perl patterns. PVE anchors a schema pattern as m/^$pattern$/ (so a top-level `|` binds as it
// does there). qr// objects reach the dump stringified as `(?^:…)`, and Perl 5.34+ reads `{,n}`
// as `{0,n}`; both are translated. Anything else Perl-only makes the pattern untranslatable.

const patternCache = new Map<string, RegExp | null>();

function compilePattern(perl: string): RegExp | null {
  if (patternCache.has(perl)) return patternCache.get(perl) ?? null;
  const js = translatePerlPattern(perl);
  let re: RegExp | null = null;
  if (js !== null) {
    try {
      re = new RegExp(`^${js}$`);
    } catch {
      re = null;
    }
  }
  patternCache.set(perl, re);
  return re;
}

/** Escaped letters that mean the same in Perl and in a non-unicode JavaScript RegExp. */
const SAME_ESCAPES = /[dDsSwWbBntrf]/;

function translatePerlPattern(src: string): string | null {
  let out = '';
  let inClass = false;
  let afterQuantifier = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i] ?? '';
    const quantified: boolean = afterQuantifier;
    afterQuantifier = false;
    if (c === '\\') {
      const next = src[i + 1] ?? '';
      const hex = /^x[0-9a-fA-F]{2}/.exec(src.slice(i + 1))?.[0];
      const backref = !inClass && /[1-9]/.test(next);
      const nul = next === '0' && !/[0-9]/.test(src[i + 2] ?? '');
      if (hex) {
        out += `\\${hex}`;
        i += hex.length;
      } else if (
        next !== '' &&
        (SAME_ESCAPES.test(next) || /[^A-Za-z0-9]/.test(next) || backref || nul)
      ) {
        out += `\\${next}`;
        i += 1;
      } else return null; // \A \z \Z \G \K \h \v \R \N \p \Q … have no faithful JS spelling
      continue;
    }
    if (inClass) {
      if (c === '[' && src[i + 1] === ':') return null; // POSIX [:alpha:]
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (src[i + 1] === '^') out += src[++i];
      if (src[i + 1] === ']') out += `\\${src[++i]}`; // a leading ] is literal in Perl
      continue;
    }
    if (c === '(' && src[i + 1] === '?') {
      const rest = src.slice(i + 2);
      const caret = /^\^([a-z]*):/.exec(rest);
      if (caret) {
        if (caret[1] !== '') return null; // inline flags such as (?^i:…)
        out += '(?:';
        i += 1 + caret[0].length;
        continue;
      }
      const group = /^(?::|=|!|<=|<!|<[A-Za-z_][A-Za-z0-9_]*>)/.exec(rest)?.[0];
      if (group === undefined) return null; // (?>…) (?|…) (?i) (?#…) and friends
      out += `(?${group}`;
      i += 1 + group.length;
      continue;
    }
    if (c === '{') {
      const q = /^\{(\d*)(,?)(\d*)\}/.exec(src.slice(i));
      if (q && (q[1] || q[3])) {
        out += `{${q[1] || '0'}${q[2]}${q[3]}}`;
        i += q[0].length - 1;
        afterQuantifier = true;
      } else out += '\\{'; // not a quantifier: a literal brace, as Perl reads it
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      if (quantified && c === '+') return null; // possessive quantifier
      out += c;
      afterQuantifier = !(quantified && c === '?'); // `+?` is lazy; nothing may follow it
      continue;
    }
    out += c;
  }
  return inClass ? null : out;
}

/** Every schema pattern in these endpoints that cannot be checked here, as "where: pattern". */
export function uncheckedPatterns(endpoints: EndpointDef[]): string[] {
  const found = new Set<string>();
  forEachSchema(endpoints, (schema, where) => {
    if (typeof schema.pattern === 'string' && compilePattern(schema.pattern) === null) {
      found.add(`${where}: ${schema.pattern}`);
    }
  });
  return [...found];
}

/** Every named format these endpoints use that is not implemented here (e.g. pve-qm-ipconfig). */
export function uncheckedFormats(endpoints: EndpointDef[]): string[] {
  const found = new Set<string>();
  forEachSchema(endpoints, (schema, _where, endpointProps) => {
    const format = schema.format;
    if (typeof format !== 'string' || format === 'regex') return;
    const name = /^(.*?)(?:-(list|opt))?$/.exec(format)?.[1] ?? format;
    if (!resolveFormat(name, endpointProps)) found.add(format);
  });
  return [...found].sort();
}

type SchemaVisitor = (schema: Schema, where: string, endpointProps: Schema) => void;

/** Visits each parameter schema and each sub-schema of inline property-string formats. */
function forEachSchema(endpoints: EndpointDef[], visit: SchemaVisitor): void {
  for (const def of endpoints) {
    const params = isRecord(def.parameters) ? def.parameters : {};
    const props = isRecord(params.properties) ? params.properties : {};
    const walk = (schemas: Schema, prefix: string): void => {
      for (const [key, schema] of Object.entries(schemas)) {
        if (!isRecord(schema)) continue;
        visit(schema, `${prefix}${key}`, props);
        if (isRecord(schema.format)) walk(schema.format, `${prefix}${key}.`);
      }
    };
    walk(props, `${def.method} ${def.path} `);
  }
}

// ---------------------------------------------------------------------------------------------
// Form bodies as PVE decodes them

/**
 * Decodes an x-www-form-urlencoded body the way pve-http-server does (decode_urlencoded), and
 * reports each place where that differs from what a standard decoder gives: pairs split on `&`
 * and `;`, only the text up to a second `=` kept, an empty value read as absent, a repeated key
 * turned into a list. Use it to build LoggedRequest.params from the raw body.
 */
export function decodeFormLikePve(body: string): {
  params: Record<string, string | string[]>;
  problems: string[];
} {
  const params: Record<string, string | string[]> = {};
  const problems: string[] = [];
  if (body.includes(';')) problems.push("body: a raw ';' splits parameters for PVE; encode it");
  const seen = new Set<string>();
  for (const pair of perlSplit(body, /[&;]/)) {
    if (pair === '') continue;
    const fields = perlSplit(pair, '=');
    const key = formUnescape(fields[0] ?? '');
    const repeated = seen.has(key);
    seen.add(key);
    if (fields.length > 2) problems.push(`${key}: an unencoded '=' cuts the value short for PVE`);
    if (fields.length < 2) {
      problems.push(`${key}: no value; PVE treats the parameter as absent`);
      continue;
    }
    const value = formUnescape(fields[1] ?? '');
    // A repeated key becomes a list: right for an array parameter, an error for any other (the
    // schema check says which).
    const before = params[key];
    params[key] = repeated && before !== undefined ? [...[before].flat(), value] : value;
  }
  return { params, problems };
}

/** `+` is a space and %XX a byte; the bytes are then read as UTF-8 (invalid ones become U+FFFD). */
function formUnescape(text: string): string {
  const bytes: number[] = [];
  for (const piece of text.replace(/\+/g, ' ').split(/(%[0-9a-fA-F]{2})/)) {
    if (/^%[0-9a-fA-F]{2}$/.test(piece)) bytes.push(parseInt(piece.slice(1), 16));
    else bytes.push(...new TextEncoder().encode(piece));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
