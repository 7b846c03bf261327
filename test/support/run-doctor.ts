// Runs `npm run doctor -- <url>` for a node test without blocking the test's own process (a
// simulator the test started answers from its event loop meanwhile).

import path from 'node:path';
import { spawnNpm } from '../../scripts/processes.ts';

const root = path.resolve(import.meta.dirname, '../..');

export interface DoctorRun {
  status: number | null;
  output: string;
  /** The result line of one check (`proxmox`, `proxmox lab`, ...), or a note that there is none. */
  line(name: string): string;
}

export async function runDoctor(url: string): Promise<DoctorRun> {
  const child = spawnNpm(['run', '-s', 'doctor', '--', url], {
    cwd: root,
    env: { ...process.env, MCP_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const line = (name: string): string =>
    output.split('\n').find((l) => new RegExp(`^\\w+/?\\w*\\s+${name}\\s`).test(l)) ??
    `(no line for ${name})`;
  return { status, output, line };
}
