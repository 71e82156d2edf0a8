import { defineConfig } from 'vitest/config';

/** `npm run soak`: the long run of test/soak, kept out of the default test run (its files do not end in .test.ts). */
export default defineConfig({
  test: {
    include: ['test/soak/**/*.soak.ts'],
    pool: 'forks',
    testTimeout: 0,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
