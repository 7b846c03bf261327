// The POLICY the signed-in project deploys: vitest.config.ts binds deployed.json's text, as a
// deployment binds the text of its POLICY variable. The policy store tests read it as version 1
// (the project's other files put their own in force): lists and starts are open, a stop needs a
// person's approval, deleting is refused, the rest is denied.

import text from './deployed.json?raw';

/** POLICY exactly as deployed: the store hashes this text. */
export const DEPLOYED_TEXT: string = text;

export const DEPLOYED = JSON.parse(text) as {
  version: string;
  default: string;
  tools: Record<string, Record<string, unknown>>;
};
