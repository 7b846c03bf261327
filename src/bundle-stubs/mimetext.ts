// Stands in for `mimetext` (a MIME e-mail builder, with mime-db's 134 KiB type table and
// core-js-pure helpers).
//
// Why it never runs: agents loads it with `await import("mimetext")` inside
// `Agent.replyToEmail()` only. This Worker exports no `email` handler and never calls
// `replyToEmail()`. If something does, the call below throws.

import { leftOut } from './left-out';

export function createMimeMessage(): never {
  throw leftOut('mimetext (createMimeMessage)', 'mimetext.ts');
}
