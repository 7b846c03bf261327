// One way to write a log line: a JSON object whose `msg` says what happened, which Workers Logs
// indexes field by field. Never a stack, a token or an argument value: an error goes in as its
// message, cut to a length.

export type LogLevel = 'log' | 'warn' | 'error';

export function logLine(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  console[level](JSON.stringify({ msg, ...fields }));
}

/** An error as a log field: its message (after its name, with `named`), at most `max` characters. */
export function errorText(err: unknown, max = 300, named = false): string {
  if (!(err instanceof Error)) return typeof err === 'string' ? err.slice(0, max) : 'unknown';
  return (named ? `${err.name}: ${err.message}` : err.message).slice(0, max);
}
