// A request path's route (src/proxmox/path-template.ts), the name of its span: every route of the
// real PVE 9.1.3 schema, its values filled in, comes back as itself, and each of its words is
// spelled as the route words are; a path the API does not have names no value.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pathTemplate } from '../../src/proxmox/path-template';
import { findSchemaFile, requireInCi } from '../support/pve-schema-load.ts';

const schemaFile = findSchemaFile(path.resolve(import.meta.dirname, '../..'));
requireInCi(schemaFile, 'The PVE 9.1.3 API schema (every route is checked against it)');

interface Node {
  path: string;
  children?: Node[];
}

function routes(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const tree = JSON.parse(text.slice(text.indexOf('['), text.lastIndexOf(']') + 1)) as Node[];
  const out: string[] = [];
  const walk = (nodes: Node[]): void => {
    for (const node of nodes) {
      out.push(node.path);
      if (node.children) walk(node.children);
    }
  };
  walk(tree);
  return out;
}

/** A value as a request holds it: a vmid's digits, a name's letters (no digit to give it away). */
function filled(route: string): string {
  return route.replace(/\{([^}]+)\}/g, (_all, name: string) =>
    name === 'vmid' ? '4100' : `v${name.replace(/[^a-z]/g, '')}`,
  );
}

describe.runIf(schemaFile)('pathTemplate', () => {
  const all = schemaFile ? routes(schemaFile) : [];

  it('gives back each of the schema routes from a path of it', () => {
    expect(all.length).toBeGreaterThan(400);
    const wrong = all.filter((route) => pathTemplate(filled(route)) !== route);
    expect(wrong).toEqual([]);
  });

  it("keeps every word of the schema's routes as it is, first or after another word", () => {
    const words = new Set(all.flatMap((r) => r.split('/')).filter((w) => w && !w.startsWith('{')));
    expect(words.size).toBeGreaterThan(200);
    expect([...words].filter((w) => pathTemplate(`/${w}`) !== `/${w}`)).toEqual([]);
    expect([...words].filter((w) => pathTemplate(`/version/${w}`) !== `/version/${w}`)).toEqual([]);
  });

  it.each([
    ['/cluster/my-secret-project', '/cluster/{id}'],
    ['/nodes/pve1/qemu/100/agent/hunter-two', '/nodes/{node}/qemu/{vmid}/{id}/{id}'],
    ['/nodes/pve1/storage/local/content', '/nodes/{node}/storage/{storage}/content'],
    ['/secret/nodes', '/{id}/nodes'],
    ['/cluster/resources', '/cluster/resources'],
  ])("%s, the caller's own path, is %s (no word of theirs kept)", (given, route) => {
    expect(pathTemplate(given, true)).toBe(route);
  });

  it.each([
    ['/nodes/pve1/qemu/100/status/current', '/nodes/{node}/qemu/{vmid}/status/current'],
    ['/nodes/pve1/capabilities/qemu/cpu-flags', '/nodes/{node}/capabilities/qemu/cpu-flags'],
    [
      '/nodes/pve1/lxc/9000/snapshot/before-upgrade',
      '/nodes/{node}/lxc/{vmid}/snapshot/{snapname}',
    ],
    // Not routes of PVE 9.1: what is not spelled as a route word is a value.
    ['/nodes/pve1/made-up/4242', '/nodes/{node}/made-up/{id}'],
    ['/cluster/Zq7rawPasswordXw/x', '/cluster/{id}/x'],
    [
      '/nodes/pve1/storage/local/content/local:iso',
      '/nodes/{node}/storage/{storage}/content/{volume}',
    ],
    ['/made.up', '/{id}'],
    // Names every object has are words like others, never a table's entry.
    ['/access/constructor/toString', '/access/constructor/{id}'],
    ['/cluster/__proto__/valueOf', '/cluster/{id}/{id}'],
    ['/version', '/version'],
  ])('%s is %s', (given, route) => {
    expect(pathTemplate(given)).toBe(route);
  });
});
