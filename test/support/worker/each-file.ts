// Runs before every workerd test file (setupFiles in vitest.config.ts). A project's files share a
// Worker and its simulator, one file after another: each starts from the seeded cluster (guests,
// request log, faults and settings), as it would with a simulator of its own.

import { beforeAll } from 'vitest';
import { sim } from './sim';

beforeAll(() => sim.reset());
