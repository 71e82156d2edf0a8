/**
 * The shape rules of the tree (STYLE.md): a function does one thing and fits on a screen or two,
 * a file holds one concern. Read with the TypeScript compiler's parser, so a count is of real
 * functions, not of lines that look like one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

export const MAX_FUNCTION_LINES = 80;
export const MAX_FILE_LINES = 300;

export interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
}

/** Every product source file under `root` (tests excluded), with its path as given. */
export function sourceFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name)) files.push(path);
    }
  };
  walk(root);
  return files.sort();
}

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node);

function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name !== undefined) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  return '<anonymous>';
}

/**
 * A page component of the console (a capitalised function in a .tsx file) is markup, not logic:
 * its length is the page's, and it is exempt.
 */
const isComponent = (file: string, name: string): boolean => file.endsWith('.tsx') && /^[A-Z]/.test(name);

/** The functions of one source text longer than `limit` lines, from their first line to their last. */
export function longFunctions(file: string, text: string, limit = MAX_FUNCTION_LINES): LongFunction[] {
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = nameOf(node);
      const lines = last - first + 1;
      if (lines > limit && !isComponent(file, name)) found.push({ file, line: first + 1, name, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The number of lines of a text, as an editor counts them. */
export const lineCount = (text: string): number => text.replace(/\n$/, '').split('\n').length;

export function readText(path: string): string {
  return readFileSync(path, 'utf8');
}
