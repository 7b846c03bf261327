// How deeply a JSON text nests, measured on the text itself before anything parses and walks
// it. JSON.parse copes with any depth, but JSON.stringify, schema validation and the MCP
// transports recurse: a message nested 20,000 deep would overflow their stacks and come back as
// an internal error. Such a message is refused at the door instead.

/** Deeper than any real MCP message (envelope 3 levels, tool arguments at most 32 more). */
export const MAX_MESSAGE_DEPTH = 64;

/** Whether `text` opens more than `max` objects or arrays inside one another (strings skipped). */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}
