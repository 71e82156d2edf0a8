import { describe, expect, it } from 'vitest';
import {
  lineCount,
  longFunctions,
  MAX_FILE_LINES,
  MAX_FUNCTION_LINES,
  readText,
  sourceFiles,
} from '../helpers/code-shape.js';

describe('the shape of the tree', () => {
  const files = sourceFiles('src');

  it(`has no function over ${MAX_FUNCTION_LINES} lines (console page components aside)`, () => {
    const long = files.flatMap((file) => longFunctions(file, readText(file)));
    expect(long.map((found) => `${found.file}:${found.line} ${found.name} (${found.lines} lines)`)).toEqual([]);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const big = files
      .map((file) => ({ file, lines: lineCount(readText(file)) }))
      .filter((entry) => entry.lines > MAX_FILE_LINES);
    expect(big.map((entry) => `${entry.file} (${entry.lines} lines)`)).toEqual([]);
  });
});

describe('the shape rules themselves', () => {
  const body = (lines: number) =>
    Array.from({ length: lines }, (_, index) => `  const v${index} = ${index};`).join('\n');

  it('finds a function, an arrow, a method and a factory over the limit, by name and first line', () => {
    const text = [
      `export function plain() {\n${body(80)}\n}`,
      `export const arrow = () => {\n${body(80)}\n};`,
      `class Holder {\n  method() {\n${body(80)}\n  }\n}`,
      `export function factory() {\n  return { inner() {\n${body(78)}\n  } };\n}`,
    ].join('\n');
    const found = longFunctions('planted.ts', text, 80).map(({ name, lines }) => `${name}:${lines}`);
    expect(found).toEqual(['plain:82', 'arrow:82', 'method:82', 'factory:82']);
  });

  it('lets a function of exactly the limit pass, and a console page component of any length', () => {
    expect(longFunctions('planted.ts', `function fits() {\n${body(78)}\n}`, 80)).toEqual([]);
    expect(longFunctions('page.tsx', `export function Page() {\n${body(120)}\n  return null;\n}`, 80)).toEqual([]);
    expect(longFunctions('routes.tsx', `export function routes() {\n${body(120)}\n}`, 80)).toHaveLength(1);
  });

  it('counts lines as an editor does', () => {
    expect(lineCount('a\nb\n')).toBe(2);
    expect(lineCount('a\nb')).toBe(2);
  });
});
