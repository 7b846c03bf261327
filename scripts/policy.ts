// `npm run policy -- check <file>`, `explain <file> '<call json>'` (offline: ./policy/cli.ts),
// and `push` / `replay` against a running server's policy API (./policy/remote.ts).

import { policyCli } from './policy/cli.ts';
import { policyRemote } from './policy/remote.ts';

const out = {
  log: (line: string) => console.log(line),
  error: (line: string) => console.error(line),
};
const argv = process.argv.slice(2);
process.exitCode =
  argv[0] === 'push' || argv[0] === 'replay' ? await policyRemote(argv, out) : policyCli(argv, out);
