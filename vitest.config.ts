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
    pool: 'forks',
    maxWorkers: workers,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for a daemon to reach a state: it answers as soon as the state holds, and its
    // default second is too short on a loaded machine (a CI run saw a relay's send take longer).
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'mailproxy', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      // The SMTP suites again, with the sessions in processes of their own ([smtp] session_processes).
      {
        extends: true,
        test: {
          name: 'smtp in session processes',
          include: [
            'test/smtp/**/*.test.ts',
            'test/security/{hostile-smtp,tls-versions,open-relay,auth-throttle,body-limits}.test.ts',
            'test/http/metrics-intake.test.ts',
          ],
          exclude: ['test/smtp/session-processes.test.ts'],
          env: { MAILPROXY_SMTP_SESSION_PROCESSES: '2' },
        },
      },
    ],
  },
});
