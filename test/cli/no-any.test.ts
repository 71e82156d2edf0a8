/**
 * The CLI reads the API's answers through the types of its view schemas
 * (src/cli/answers.ts): an `any` would let a renamed or missing field through
 * unseen, so none is allowed in src/cli, written or inferred.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findAny, projectOptions, sourceFiles } from './any-scan.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const options = projectOptions(root);
const planted = mkdtempSync(join(tmpdir(), 'mailproxy-any-'));
afterAll(() => rmSync(planted, { recursive: true, force: true }));

describe('no any in the CLI', () => {
  it('finds none in src/cli, written or inferred', () => {
    expect(findAny(sourceFiles(join(root, 'src/cli')), options, root)).toEqual([]);
  }, 120_000);

  it('finds a planted one, written and inferred', () => {
    const file = join(planted, 'planted.ts');
    writeFileSync(
      file,
      [
        'export const written: any = 1;',
        'export const cast = (value: unknown) => value as any;',
        "export const inferred = JSON.parse('{}');",
        'export const returned = (text: string) => JSON.parse(text);',
        'export const typed: unknown = JSON.parse("{}") as unknown;',
        '',
      ].join('\n'),
    );
    const found = findAny([file], options, planted).map(({ at, how }) => `${at} ${how}`);
    expect(found).toEqual([
      'planted.ts:1 inferred',
      'planted.ts:1 written',
      'planted.ts:2 written',
      'planted.ts:3 inferred',
      'planted.ts:3 inferred',
      'planted.ts:4 inferred',
    ]);
  }, 120_000);
});
