// Keyset paging for list tools: a page holds the items after the cursor's key, in key order, so
// pages stay stable while items come and go between calls. The cursor is opaque to the agent
// (base64 of "<tool>:<key>"), and a cursor from another tool or made up is refused by name.

import { z } from 'zod';
import { base64Url, fromBase64Url } from '../../encoding';
import { outputExtras } from '../../calls/result';
import { ToolFailure } from '../../calls/tool-spec';

/** A paged tool's last arguments: the page size, and where the page starts (up to `cursorMax`). */
export function pageArgs(cursorMax: number) {
  return {
    limit: z.number().int().min(1).max(1000).default(100).describe('Page size, 1–1000.'),
    cursor: z.string().max(cursorMax).optional().describe('next_cursor from the previous page.'),
  };
}

/** A paged answer's fields after its items: how many match across all pages, the next cursor. */
const pageFields = {
  total: z.number().optional(),
  next_cursor: z.string().nullable().optional(),
};

/** A paged tool's output: the page's items under `key`, then the total and the next cursor. */
export function pagedOutput<K extends string, T extends z.ZodType>(key: K, item: T) {
  const items = { [key]: z.array(item).optional() } as { [P in K]: z.ZodOptional<z.ZodArray<T>> };
  return z.object({ ...items, ...pageFields, ...outputExtras });
}

/** The refusal of a cursor this tool did not hand out. */
export function notOurCursor(tool: string): ToolFailure {
  return new ToolFailure('invalid_arguments', `Invalid arguments for ${tool}`, [
    {
      field: 'cursor',
      message: 'not a cursor from this tool; pass next_cursor exactly as returned, or omit it',
    },
  ]);
}

export function encodeCursor(tool: string, key: string | number): string {
  return base64Url(`${tool}:${key}`);
}

/** The key after which the page starts ('' for the first page). */
export function decodeCursor(tool: string, cursor: string | undefined): string {
  if (cursor === undefined) return '';
  let text = '';
  try {
    text = fromBase64Url(cursor);
  } catch {
    // refused below
  }
  if (!text.startsWith(`${tool}:`) || text.length <= tool.length + 1) throw notOurCursor(tool);
  return text.slice(tool.length + 1);
}

/** One page of `items` (already sorted by `key`) after `after`, and the cursor of the next. */
export function pageAfter<T>(
  tool: string,
  items: T[],
  key: (item: T) => string,
  after: string,
  limit: number,
): { page: T[]; next: string | null; rest: number } {
  const remaining = after === '' ? items : items.filter((i) => key(i) > after);
  const page = remaining.slice(0, limit);
  const last = page.at(-1);
  const next =
    remaining.length > page.length && last !== undefined ? encodeCursor(tool, key(last)) : null;
  return { page, next, rest: remaining.length - page.length };
}
