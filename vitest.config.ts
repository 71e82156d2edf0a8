import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Vitest's default is one worker less than the cores: one worker on the 2-core
 * machines we run on. Our tests mostly wait on real peers (sockets, fsync, child
 * processes) rather than on the CPU, so two files side by side finish the suite
 * sooner and stay green.
 */
const workers = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: workers,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for a daemon to reach a state: it answers as soon as the state holds, and its
    // default second is too short on a loaded machine (a CI run saw a relay's send take longer).
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default'],
  },
});
