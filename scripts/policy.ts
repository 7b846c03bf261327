// `npm run policy -- check <file>` and `npm run policy -- explain <file> '<call json>'`: the
// policy checker (./policy/cli.ts, which says what each does) on the command line.

import { policyCli } from './policy/cli.ts';

process.exitCode = policyCli(process.argv.slice(2), {
  log: (line) => console.log(line),
  error: (line) => console.error(line),
});
