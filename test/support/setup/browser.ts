// Browser tests drive a Chromium-family browser through playwright-core, which downloads none of
// its own here. This setup finds one where people have one: CHROMIUM_PATH, the usual install
// places of Chromium, Chrome and Edge on Linux, macOS and Windows, a browser Playwright itself
// downloaded, then Playwright's channels (chrome, msedge). Without one, outside CI, the browser
// tests are skipped and one line says how to run them; under CI (CI=true) it installs Debian's
// chromium when it can (root and apt-get), and otherwise fails the run.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

/** Why each browser tried did not start (its first line), for the message when none did. */
const failures: string[] = [];

/** The browser the tests launch: a file, or a Playwright channel; null when there is none. */
export type BrowserChoice = { executablePath: string } | { channel: string };

/** Where Chromium-family browsers are installed by their own installers and packages. */
function installPlaces(): string[] {
  if (process.platform === 'darwin') {
    const apps = [
      'Google Chrome.app/Contents/MacOS/Google Chrome',
      'Chromium.app/Contents/MacOS/Chromium',
      'Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
      'Brave Browser.app/Contents/MacOS/Brave Browser',
    ];
    return ['/Applications', path.join(os.homedir(), 'Applications')].flatMap((dir) =>
      apps.map((app) => path.join(dir, app)),
    );
  }
  if (process.platform === 'win32') {
    const roots = [
      process.env.PROGRAMFILES,
      process.env['PROGRAMFILES(X86)'],
      process.env.LOCALAPPDATA,
    ].filter((dir): dir is string => Boolean(dir));
    const exes = [
      'Google\\Chrome\\Application\\chrome.exe',
      'Chromium\\Application\\chrome.exe',
      'Microsoft\\Edge\\Application\\msedge.exe',
    ];
    return roots.flatMap((dir) => exes.map((exe) => path.win32.join(dir, exe)));
  }
  // Debian, Ubuntu (the snap), Fedora, Arch; Google's and Microsoft's own packages.
  return [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/snap/bin/chromium',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/google-chrome',
    '/opt/google/chrome/chrome',
    '/usr/bin/microsoft-edge-stable',
    '/opt/microsoft/msedge/msedge',
  ];
}

/**
 * A browser on this machine that starts, or null. Each candidate is started once and closed: a
 * file that exists may still not run under Playwright (Ubuntu's chromium-browser without its snap,
 * a snap confined away from the test's temporary profile), and the next one is tried then.
 */
export async function findBrowser(): Promise<BrowserChoice | null> {
  failures.length = 0;
  const { chromium } = await import('playwright-core');
  const starts = async (choice: BrowserChoice): Promise<boolean> => {
    try {
      await (await chromium.launch({ ...choice, args: QUIET_ARGS, timeout: 30_000 })).close();
      return true;
    } catch (err) {
      const what = 'channel' in choice ? `channel ${choice.channel}` : choice.executablePath;
      failures.push(
        `${what}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`,
      );
      return false;
    }
  };
  const asked = process.env.CHROMIUM_PATH;
  if (asked) {
    if (!existsSync(asked)) throw new Error(`CHROMIUM_PATH=${asked}: no such file`);
    if (!(await starts({ executablePath: asked })))
      throw new Error(`CHROMIUM_PATH=${asked} does not start as a headless browser`);
    return { executablePath: asked };
  }
  let downloaded: string | undefined;
  try {
    downloaded = chromium.executablePath();
  } catch {
    // this Playwright knows no download for this platform
  }
  const files = [...installPlaces(), ...(downloaded ? [downloaded] : [])];
  const candidates: BrowserChoice[] = [
    ...files.filter((file) => existsSync(file)).map((file) => ({ executablePath: file })),
    { channel: 'chrome' },
    { channel: 'msedge' },
  ];
  for (const choice of candidates) if (await starts(choice)) return choice;
  return null;
}

/** No background network calls (this machine's network is closed), no GPU, no first-run UI. */
export const QUIET_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const inCi = (): boolean => Boolean(process.env.CI) && !['0', 'false'].includes(process.env.CI!);

/** Debian's chromium, as root with apt-get; false where that cannot be done. */
function installDebianChromium(): boolean {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return false;
  console.log('Installing Debian chromium for the browser tests…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
      stdio: 'inherit',
      env,
    });
  try {
    install();
  } catch {
    execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
    install();
  }
  return true;
}

export default async function setup(project: TestProject): Promise<void> {
  let found = await findBrowser();
  if (!found && inCi()) {
    const installed = installDebianChromium();
    found = installed ? await findBrowser() : null;
    if (!found)
      throw new Error(
        installed
          ? `apt-get installed chromium, but no browser starts: ${failures.join('; ')}`
          : `CI=true and no Chromium-family browser starts here (apt-get only runs as root): install Chromium, Chrome or Edge (or set CHROMIUM_PATH). Tried: ${failures.join('; ') || 'none found'}`,
      );
  }
  if (!found)
    console.log(
      'Browser tests skipped: no Chromium, Chrome or Edge found. Install one, or set CHROMIUM_PATH=/path/to/chromium, and run npm test again.',
    );
  project.provide('browser', found);
}
