// Names every JavaScript object has (`__proto__`, `constructor`, `toString`: anything
// `in Object.prototype`) are refused as pve_api_request parameters and as config keys
// (src/proxmox/api-path.ts). Against the real PVE 9.1.3 schema: no API parameter has such a name,
// nor does any key of a property string the schema spells out, so refusing them loses nothing.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkApiParamName, checkApiPath, isObjectMemberName } from '../../src/proxmox/api-path';
import { findSchemaFile, requireInCi } from '../support/pve-schema-load.ts';

const schemaFile = findSchemaFile(path.resolve(import.meta.dirname, '../..'));
requireInCi(schemaFile, 'The PVE 9.1.3 API schema (parameter names are checked against it)');

const METHODS = ['GET', 'POST', 'PUT', 'DELETE'];
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every parameter name of every endpoint, and every key of an inline property-string format. */
function namesIn(file: string): { params: Set<string>; formatKeys: Set<string> } {
  const text = readFileSync(file, 'utf8');
  // The JSON array, or pve-docs' apidata.js (`const apiSchema = [...];`) it was cut from.
  const tree: unknown = JSON.parse(text.slice(text.indexOf('['), text.lastIndexOf(']') + 1));
  const params = new Set<string>();
  const formatKeys = new Set<string>();
  const walkSchema = (schema: unknown): void => {
    if (!isRecord(schema)) return;
    if (isRecord(schema.format)) {
      for (const [key, sub] of Object.entries(schema.format)) {
        formatKeys.add(key);
        walkSchema(sub);
      }
    }
    if (isRecord(schema.properties)) Object.values(schema.properties).forEach(walkSchema);
    walkSchema(schema.items);
  };
  const walk = (node: unknown): void => {
    if (!isRecord(node)) return;
    for (const method of METHODS) {
      const def = isRecord(node.info) ? node.info[method] : undefined;
      const props =
        isRecord(def) && isRecord(def.parameters) ? def.parameters.properties : undefined;
      if (!isRecord(props)) continue;
      for (const [name, schema] of Object.entries(props)) {
        params.add(name);
        walkSchema(schema);
      }
    }
    if (Array.isArray(node.children)) node.children.forEach(walk);
  };
  if (Array.isArray(tree)) tree.forEach(walk);
  return { params, formatKeys };
}

const MEMBER_NAMES = Object.getOwnPropertyNames(Object.prototype);

describe('parameter names like members of every object', () => {
  it.each(MEMBER_NAMES)('refuses %s', (name) => {
    expect(isObjectMemberName(name)).toBe(true);
    expect(checkApiParamName(name)).toMatch(/^no Proxmox parameter has this name/);
  });

  it.each(['vmid', 'node', 'net0', 'ssh-public-keys', 'delete', 'Constructor', 'prototype'])(
    'lets %s through',
    (name) => {
      expect(checkApiParamName(name)).toBeNull();
    },
  );
});

describe.skipIf(!schemaFile)('the PVE 9.1.3 API schema', () => {
  const { params, formatKeys } = schemaFile
    ? namesIn(schemaFile)
    : { params: new Set<string>(), formatKeys: new Set<string>() };

  it('has no parameter named like a member of every object', () => {
    expect(params.size).toBeGreaterThan(500);
    expect([...params].filter((name) => name in Object.prototype)).toEqual([]);
  });

  it('has no property-string key named like a member of every object', () => {
    expect(formatKeys.size).toBeGreaterThan(100);
    expect([...formatKeys].filter((name) => name in Object.prototype)).toEqual([]);
  });
});

describe('a node named localhost in a raw path', () => {
  // pveproxy serves it on whichever node answers the API: a rule on the path would not see which.
  it('is refused, in any case, only where a node is named', () => {
    const refusal = /^must name the node \(e\.g\. \/nodes\/pve1\/\.\.\.\), not localhost/;
    expect(checkApiPath('/nodes/localhost/qemu/100/status/current')).toMatch(refusal);
    expect(checkApiPath('/nodes/LocalHost/status')).toMatch(refusal);
    expect(checkApiPath('/nodes/pve1/qemu/100/status/current')).toBeNull();
    expect(checkApiPath('/nodes/localhost1/status')).toBeNull();
    expect(checkApiPath('/access/users/localhost')).toBeNull();
  });
});
