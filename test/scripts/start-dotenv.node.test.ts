// The values npm start hands wrangler dev in its private env file: written so that wrangler's
// reader (dotenv, then dotenv-expand) gives each back exactly, or refused by name. The round trip
// through wrangler itself is test/scripts/start-dev-vars.node.test.ts (a secret with quotes and `$HOME`).

import { describe, expect, it } from 'vitest';
import { dotenvQuoted } from '../../scripts/dev-stack.ts';

describe('dotenvQuoted', () => {
  it.each([
    ['plain', "'plain'"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the value is a shell-like reference
    ['a $HOME and ${USER}', "'a \\$HOME and \\${USER}'"],
    ["it's", "`it's`"],
    ["it's `x`", '"it\'s `x`"'],
    ['two\nlines', "'two\nlines'"],
  ])('writes %j as %s', (value, written) => {
    expect(dotenvQuoted('S', value)).toBe(written);
  });

  it.each([
    ['a value ending in a backslash (it would escape the closing quote)', 'secret\\'],
    ['a carriage return (dotenv reads it as a line feed)', 'a\r\nb'],
    ['every kind of quote', `'\`"`],
    ['every quote but double, and an escape double quotes would read', "it's `x` \\n"],
  ])('refuses %s, naming the setting', (_what, value) => {
    expect(() => dotenvQuoted('PVE_TOKEN_SECRET', value)).toThrow(/^PVE_TOKEN_SECRET /);
  });
});
