// Browser tests drive Debian's Chromium through playwright-core (browsers cannot be downloaded
// here). This setup makes sure it is installed: `apt-get install chromium` when it is missing
// and we are root; otherwise it stops with what to do.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless Chromium as this machine needs it: no sandbox as root, no background network calls. */
export function launchChromium(): Promise<import('playwright-core').Browser> {
  return import('playwright-core').then(({ chromium }) =>
    chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    }),
  );
}

export default function setup(): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}. Install Debian's package: sudo apt-get install -y chromium (or set CHROMIUM_PATH).`,
    );
  }
  console.log('Installing Debian chromium for the browser tests…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
      stdio: 'inherit',
      env,
    });
  } catch {
    execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
      stdio: 'inherit',
      env,
    });
  }
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get finished but ${CHROMIUM} is still missing`);
}
