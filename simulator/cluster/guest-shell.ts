// A minimal POSIX shell for `sh -c` / `bash -c` (or a script on stdin): words, quotes, `;`, `&&`,
// `||`, newlines, comments and `exit`; no pipes, redirections or variables. Unknown commands fail
// as dash ("sh: 1: x: not found") or bash ("bash: line 1: x: command not found") say, exit 127.
import { done, type ExecEnv, type ExecResult, SpawnError } from './program-result.ts';

export type Runner = (argv: readonly string[], env: ExecEnv) => ExecResult;

interface Command {
  readonly words: string[];
  /** How it joins the previous command. */
  readonly join: ';' | '&&' | '||';
  readonly line: number;
}

function parseScript(text: string): Command[] {
  const commands: Command[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let join: Command['join'] = ';';
  let line = 1;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = (next: Command['join']) => {
    endWord();
    if (words.length > 0) commands.push({ words, join, line });
    words = [];
    join = next;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word = (word ?? '') + text.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? text.length : end;
    } else if (c === '"') {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\' && /["\\$`]/.test(text[j + 1] ?? '')) j++;
        value += text[j];
        j++;
      }
      word = (word ?? '') + value;
      i = j;
    } else if (c === '\\') {
      word = (word ?? '') + (text[i + 1] ?? '');
      i++;
    } else if (c === '#' && word === undefined) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else if (c === '\n' || c === ';') {
      endCommand(';');
      if (c === '\n') line++;
    } else if ((c === '&' || c === '|') && text[i + 1] === c) {
      endCommand(c === '&' ? '&&' : '||');
      i++;
    } else if (/\s/.test(c)) {
      endWord();
    } else {
      word = (word ?? '') + c;
    }
  }
  endCommand(';');
  return commands;
}

export function shell(
  name: 'sh' | 'bash',
  args: string[],
  env: ExecEnv,
  runProgram: Runner,
): ExecResult {
  const cIndex = args.findIndex((a) => /^-\w*c\w*$/.test(a));
  const script = cIndex >= 0 ? (args[cIndex + 1] ?? '') : env.input.toString('utf8');
  if (cIndex >= 0 && args[cIndex + 1] === undefined) {
    return done('', 2, `${name}: ${name === 'sh' ? '0: ' : ''}-c: option requires an argument\n`);
  }
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let status = 0;
  let durationMs: number | undefined = 0;
  for (const command of parseScript(script)) {
    if ((command.join === '&&' && status !== 0) || (command.join === '||' && status === 0))
      continue;
    const [word = '', ...rest] = command.words;
    if (word === 'exit') {
      status = rest[0] === undefined ? status : Number(rest[0]) & 255;
      break;
    }
    if (word === 'cd' || word === ':') {
      status = 0;
      continue;
    }
    let result: ExecResult;
    try {
      result = runProgram(command.words, env);
    } catch (e) {
      if (!(e instanceof SpawnError)) throw e;
      const text =
        name === 'sh'
          ? `sh: ${command.line}: ${word}: not found\n`
          : `bash: line ${command.line}: ${word}: command not found\n`;
      result = done('', 127, text);
    }
    out.push(result.out);
    err.push(result.err);
    status = result.exitcode;
    if (result.durationMs === undefined || durationMs === undefined) durationMs = undefined;
    else durationMs += result.durationMs;
    if (durationMs === undefined) break;
  }
  return { out: Buffer.concat(out), err: Buffer.concat(err), exitcode: status, durationMs };
}
