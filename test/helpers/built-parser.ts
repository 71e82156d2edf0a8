/**
 * The compiled bounce and PEC receipt parsers (dist/), for tests that must run them outside
 * vitest's TypeScript transform: through the CLI, or in a worker thread.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI } from './daemon-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** dist/bounce/bounce-parser.js as a file URL, for import(). */
export const BUILT_PARSER = new URL('../../dist/bounce/bounce-parser.js', import.meta.url).href;
/** dist/pec/pec-receipt-parser.js as a file URL, for import(). */
export const BUILT_PEC_PARSER = new URL('../../dist/pec/pec-receipt-parser.js', import.meta.url).href;

const SOURCES = [
  ['src/bounce/bounce-parser.ts', 'dist/bounce/bounce-parser.js'],
  ['src/core/bounce/classify.ts', 'dist/core/bounce/classify.js'],
  ['src/pec/pec-receipt-parser.ts', 'dist/pec/pec-receipt-parser.js'],
  ['src/pec/pec-daticert.ts', 'dist/pec/pec-daticert.js'],
  ['src/pec/pec-parser.thread.ts', 'dist/pec/pec-parser.thread.js'],
  ['src/cli/main.ts', 'dist/cli/main.js'],
] as const;

/**
 * A dist older than the sources it is built from would test yesterday's
 * parser (the parser is being changed on another branch): refuse, and say how
 * to fix it, rather than report stale results.
 */
export function assertBuiltFromCurrentSources(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build`);
  for (const [source, built] of SOURCES) {
    const builtPath = join(ROOT, built);
    if (!existsSync(builtPath) || statSync(builtPath).mtimeMs < statSync(join(ROOT, source)).mtimeMs) {
      throw new Error(`${built} is older than ${source}: run npm run build`);
    }
  }
}
