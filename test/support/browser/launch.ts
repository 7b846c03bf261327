// The browser ../setup/browser.ts found, for the browser tests: `BROWSER` is null when there is
// none (outside CI only), and each file's tests are then skipped (describe.skipIf(!BROWSER)).

import type { Browser } from 'playwright-core';
import { inject } from 'vitest';
import { QUIET_ARGS } from '../setup/browser.ts';

export const BROWSER = inject('browser');

/** The found browser, headless, as this machine needs it (no sandbox as root, no network calls). */
export async function launchChromium(): Promise<Browser> {
  if (!BROWSER) throw new Error('no browser was found (test/support/setup/browser.ts)');
  const { chromium } = await import('playwright-core');
  return chromium.launch({ ...BROWSER, args: QUIET_ARGS });
}
