// A port of the parts of pve-common JSONSchema.pm that API parameter checks go through
// (check_prop, check_object, check_type, check_format, parse_property_string), keeping the
// order of checks and the exact error texts, because clients show and match on those.
import { EXTRA_CODE_FORMATS } from './formats-extra.ts';
import { CODE_FORMATS, splitList } from './formats.ts';
import { NAMED_PROPERTY_FORMATS } from './named-formats.ts';
import {
  isAlias,
  PveDie,
  type KeySchema,
  type ParamErrors,
  type Params,
  type ParamValue,
  type PropertyStringFormat,
  type SchemaType,
} from './schema-types.ts';

const NOT_IN_SCHEMA =
  'property is not defined in schema and the schema does not allow additional properties';

/** pve-common add_error: a second error on the same path is joined with a literal '\n'. */
function addError(errors: ParamErrors, path: string, message: string): void {
  const key = path || '_root';
  const previous = Object.hasOwn(errors, key) ? errors[key] : undefined;
  errors[key] = previous === undefined ? message : `${previous}\\n${message}`;
}

/** Own-property lookup, so names like 'constructor' never resolve to Object.prototype members. */
function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

const isNumber = (text: string) => /^[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?$/.test(text);
const isInteger = (text: string) => /^[+-]?\d+$/.test(text);

/** What Perl's ref() says about a decoded value: '' for plain scalars. */
function perlRef(value: ParamValue): string {
  if (typeof value === 'boolean') return 'JSON::PP::Boolean';
  if (Array.isArray(value)) return 'ARRAY';
  if (value !== null && typeof value === 'object') return 'HASH';
  return '';
}

function checkType(
  path: string,
  type: SchemaType,
  value: ParamValue,
  errors: ParamErrors,
): boolean {
  const ref = perlRef(value);
  if (type === 'array') {
    if (ref === 'ARRAY') return true;
    addError(errors, path, "type check ('array') failed");
    return false;
  }
  if (ref) {
    if (type === 'boolean' && typeof value === 'boolean') return true;
    addError(errors, path, `type check ('${type}') failed - got ${ref}`);
    return false;
  }
  const text = String(value);
  const ok =
    type === 'string' ||
    (type === 'boolean' && (text === '1' || text === '0')) ||
    (type === 'integer' && isInteger(text)) ||
    (type === 'number' && isNumber(text));
  if (!ok) addError(errors, path, `type check ('${type}') failed - got '${text}'`);
  return ok;
}

function checkProp(
  value: ParamValue | undefined,
  schema: KeySchema,
  path: string,
  errors: ParamErrors,
): void {
  if (isAlias(schema)) return; // aliases are remapped before checking
  if (value === undefined || value === null) {
    if (!schema.optional) addError(errors, path, 'property is missing and it is not optional');
    return;
  }
  if (!checkType(path, schema.type, value, errors)) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items)
      for (const [i, item] of value.entries()) checkProp(item, items, `${path}[${i}]`, errors);
    return;
  }
  if (perlRef(value)) return;
  const text = String(value);
  if (schema.format !== undefined) {
    try {
      checkFormat(schema.format, text, path);
    } catch (err) {
      addError(errors, path, `invalid format - ${dieText(err)}`);
      return;
    }
  }
  if (schema.pattern !== undefined && !new RegExp(`^${schema.pattern}$`).test(text)) {
    addError(errors, path, 'value does not match the regex pattern');
    return;
  }
  const length = [...text].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    addError(errors, path, `value may only be ${schema.maxLength} characters long`);
    return;
  }
  if (schema.minLength !== undefined && length < schema.minLength) {
    addError(errors, path, `value must be at least ${schema.minLength} characters long`);
    return;
  }
  if (isNumber(text)) {
    if (schema.maximum !== undefined && Number(text) > schema.maximum) {
      addError(errors, path, `value must have a maximum value of ${schema.maximum}`);
      return;
    }
    if (schema.minimum !== undefined && Number(text) < schema.minimum) {
      addError(errors, path, `value must have a minimum value of ${schema.minimum}`);
      return;
    }
  }
  if (schema.enum !== undefined && !schema.enum.includes(text)) {
    const values = schema.enum.join(', ');
    addError(errors, path, `value '${text}' does not have a value in the enumeration '${values}'`);
  }
}

/** check_object with additionalProperties => 0, the setting of every endpoint we serve. */
export function checkObject(
  path: string,
  schema: Readonly<Record<string, KeySchema>>,
  value: Params,
  errors: ParamErrors,
): void {
  for (const key of Object.keys(schema)) {
    checkProp(own(value, key), schema[key] as KeySchema, path ? `${path}.${key}` : key, errors);
  }
  for (const key of Object.keys(value)) {
    const sub = own(schema, key);
    const newPath = path ? `${path}.${key}` : key;
    if (sub === undefined) {
      addError(errors, newPath, NOT_IN_SCHEMA);
    } else if (!isAlias(sub) && sub.requires !== undefined && own(value, sub.requires) == null) {
      const target = path ? `${path}.${sub.requires}` : sub.requires;
      addError(errors, target, `missing property required by '${newPath}'`);
    }
  }
}

function dieText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function checkFormat(format: string | PropertyStringFormat, value: string, path: string): void {
  if (typeof format !== 'string') {
    parsePropertyString(format, value, path);
    return;
  }
  const [, name = format, kind] = /^(.*?)(?:-(list|opt))?$/.exec(format) ?? [];
  const code = own(CODE_FORMATS, name) ?? own(EXTRA_CODE_FORMATS, name);
  const hash = own(NAMED_PROPERTY_FORMATS, name);
  if (code === undefined && hash === undefined) throw new PveDie(`undefined format '${format}'\n`);
  if (code && kind === 'list') {
    for (const item of splitList(value)) code(item);
  } else if (code && kind === 'opt') {
    if (value !== '' && value !== '0') code(value); // Perl: checked only when true
  } else if (code) {
    code(value);
  } else if (hash) {
    parsePropertyString(hash, value, path);
  }
}

function parseBoolean(text: string): string | undefined {
  if (/^(1|on|yes|true)$/i.test(text)) return '1';
  if (/^(0|off|no|false)$/i.test(text)) return '0';
  return undefined;
}

const duplicateKey = (key: string) =>
  new PveDie(`duplicate key in comma-separated list property: ${key}\n`);

const perlFalse = (value: string | undefined) =>
  value === undefined || value === '' || value === '0';

/** parse_property_string: split on ',', `key=value` or one bare value for the default key. */
export function parsePropertyString(
  format: PropertyStringFormat,
  data: string,
  path: string,
): Record<string, string> {
  const keys = format.keys;
  const res: Record<string, string> = Object.create(null);
  let defaultKey: string | undefined;
  for (const part of data.split(',')) {
    if (/^\s*$/.test(part)) continue;
    const pair = /^([^=]+)=(.+)$/.exec(part);
    if (pair) {
      let [, key = '', val = ''] = pair;
      if (res[key] !== undefined) throw duplicateKey(key);
      let schema = own(keys, key);
      if (schema !== undefined && isAlias(schema)) {
        if (schema.keyAlias !== undefined) {
          if (res[schema.keyAlias] !== undefined) {
            throw new PveDie(`key alias '${schema.keyAlias}' is already defined\n`);
          }
          res[schema.keyAlias] = key;
        }
        key = schema.alias;
        schema = own(keys, key);
        if (res[key] !== undefined)
          throw new PveDie(`key '${key}' is already defined (via alias)\n`);
      }
      if (schema === undefined || isAlias(schema)) {
        throw new PveDie(`invalid key in comma-separated list property: ${key}\n`);
      }
      res[key] = schema.type === 'boolean' ? (parseBoolean(val) ?? val) : val;
    } else if (!part.includes('=')) {
      if (defaultKey !== undefined) throw duplicateKey(defaultKey);
      for (const [key, schema] of Object.entries(keys)) {
        if (isAlias(schema) || !schema.defaultKey) continue;
        defaultKey = key;
        if (!perlFalse(res[key])) throw duplicateKey(key);
        res[key] = schema.type === 'boolean' ? (parseBoolean(part) ?? part) : part;
        break;
      }
      if (defaultKey === undefined) {
        throw new PveDie('value without key, but schema does not define a default key\n');
      }
    } else {
      throw new PveDie('missing key in comma-separated list property\n');
    }
  }
  const errors: ParamErrors = Object.create(null);
  checkObject(path, keys, res, errors);
  const entries = Object.entries(errors);
  if (entries.length > 0) {
    throw new PveDie(`format error\n${entries.map(([key, msg]) => `${key}: ${msg}\n`).join('')}`);
  }
  format.validate?.(res);
  return res;
}

/**
 * RESTHandler's $normalize_legacy_param_formats, run before validation: a repeated form key (an
 * array) for a string with a `-list` format is joined with ',', and a single (Perl-true) value for
 * an array parameter becomes a one-element array, since www-form-urlencoded has no arrays.
 */
export function normalizeLegacyParams(
  schema: Readonly<Record<string, KeySchema>>,
  params: Params,
): Params {
  const res: Params = { ...params };
  for (const [key, value] of Object.entries(params)) {
    const prop = own(schema, key);
    if (prop === undefined || isAlias(prop)) continue;
    if (value === undefined || value === null || value === '' || value === '0' || value === 0)
      continue;
    if (value === false) continue;
    const format = typeof prop.format === 'string' ? prop.format : '';
    if (Array.isArray(value) && prop.type === 'string' && format.endsWith('-list')) {
      res[key] = value.map((item) => String(item)).join(',');
    } else if (!Array.isArray(value) && perlRef(value) === '' && prop.type === 'array') {
      res[key] = [value];
    }
  }
  return res;
}

/** Validate request parameters; returns every error at once, like PVE::JSONSchema::validate. */
export function validateParams(
  schema: Readonly<Record<string, KeySchema>>,
  params: Params,
): ParamErrors {
  const errors: ParamErrors = Object.create(null);
  checkObject('', schema, params, errors);
  return errors;
}
