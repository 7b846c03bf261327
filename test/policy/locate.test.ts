// Where a policy's problems are in its text: the console points a person at the line.

import { describe, expect, it } from 'vitest';
import { locateProblems } from '../../src/policy/locate';
import { checkPolicyText } from '../../src/policy/text';
import { TOOL_CATALOG } from '../../src/tools';

const at = (text: string) => {
  const checked = checkPolicyText(text, TOOL_CATALOG);
  if (checked.ok) throw new Error('expected problems');
  return locateProblems(text, checked.errors).map(({ line, column }) => [line, column]);
};

describe('locateProblems', () => {
  it('places a bad value at its key', () => {
    expect(at('{\n  "version": "1",\n  "default": "sometimes"\n}')).toEqual([[3, 3]]);
  });

  it('places a problem inside an array by index, a missing member at the object lacking it', () => {
    const text = JSON.stringify(
      {
        version: '1',
        default: 'deny',
        tools: {
          pve_list_vms: { deny_if: [{ path: 'args.name', op: 'eq', value: 'a' }, { op: 'nope' }] },
        },
      },
      null,
      2,
    );
    // The second condition lacks path and value (placed at it, line 12) and has a bad op (line 13).
    expect(at(text)).toEqual([
      [12, 9],
      [13, 11],
      [12, 9],
    ]);
  });

  it('places a member that is missing at the object that lacks it', () => {
    expect(at('{\n  "default": "deny"\n}')[0]).toEqual([1, 1]);
  });

  it('places a syntax error where the parser stopped', () => {
    expect(at('{\n  "version": "1",\n  "default" "deny"\n}')).toEqual([[3, 13]]);
  });

  it('gives no place for a problem of the whole text', () => {
    const checked = checkPolicyText('x'.repeat(300 * 1024), TOOL_CATALOG);
    if (checked.ok) throw new Error('expected problems');
    const [p] = locateProblems('x'.repeat(300 * 1024), checked.errors);
    expect(p).toMatchObject({ line: null, column: null });
  });
});
