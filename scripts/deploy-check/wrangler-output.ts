// Reads what `wrangler deploy --dry-run` printed: its warning and error blocks, and the table of
// bindings the Worker would get. Pure text in, data out (wrangler's wording and layout: 4.86's,
// which 4.164 keeps).

export interface DryRunReport {
  warnings: string[];
  errors: string[];
  /** Binding name → wrangler's resource type ("Durable Object", "KV Namespace", "VPC Service"...). */
  bindings: Map<string, string>;
}

// ANSI colour and style sequences: wrangler colours its output even when it is piped.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is what starts the colour codes this removes
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
const BLOCK_START = /^(▲|✘) \[(WARNING|ERROR)\]\s*(.*)$/;
// Lines that end a warning block: wrangler's own progress output, never indented.
const BLOCK_END = /^(Total Upload|Your Worker|--dry-run|There is a newer version|🪵|No bindings)/;
// `env.NAME (detail)   Type` — the detail may hold spaces; the type is after two or more spaces.
const BINDING_ROW = /^env\.([A-Za-z_$][\w$]*)(?: \(.*\))?\s{2,}(\S(?:.*\S)?)\s*$/;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

export function parseDryRun(rawOutput: string): DryRunReport {
  const lines = stripAnsi(rawOutput).split(/\r?\n/);
  const warnings: string[] = [];
  const errors: string[] = [];
  const bindings = new Map<string, string>();
  let block: { kind: string; lines: string[] } | null = null;
  const close = (): void => {
    if (!block) return;
    const text = block.lines
      .map((l) => l.trim())
      .filter(Boolean)
      .join('\n');
    (block.kind === 'ERROR' ? errors : warnings).push(text);
    block = null;
  };
  for (const line of lines) {
    const start = BLOCK_START.exec(line.trim());
    if (start) {
      close();
      block = { kind: start[2]!, lines: [start[3]!] };
      continue;
    }
    if (BLOCK_END.test(line)) close();
    const row = BINDING_ROW.exec(line);
    if (row && !block) {
      bindings.set(row[1]!, row[2]!);
      continue;
    }
    if (block) block.lines.push(line);
  }
  close();
  return { warnings, errors, bindings };
}

/** `Unexpected fields found in observability field: "vpc_services"` → where and what. */
export function unexpectedFields(warning: string): { table: string; keys: string[] }[] {
  const out: { table: string; keys: string[] }[] = [];
  for (const m of warning.matchAll(/Unexpected fields found in (\S+) field: (.+)$/gm)) {
    out.push({ table: m[1]!, keys: [...m[2]!.matchAll(/"([^"]+)"/g)].map((k) => k[1]!) });
  }
  return out;
}
