/**
 * Finds `any` in TypeScript sources with the compiler's own parser and checker:
 * written (`: any`, `as any`, `any[]`) and inferred (a name whose type is any,
 * as `JSON.parse` or `response.json()` hand out), which a text search misses.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface AnyUse {
  /** `file:line`, relative to the root given. */
  at: string;
  /** The source text of the node. */
  text: string;
  how: 'written' | 'inferred';
}

/** Every .ts file under `dir`, tests included. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(dir, name))
    .sort();
}

/** The compiler options of the project's tsconfig.json. */
export function projectOptions(root: string): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (parsed === undefined) throw new Error(`cannot read ${join(root, 'tsconfig.json')}`);
  return { ...parsed.options, noEmit: true };
}

/** A call or a read whose any goes on unnamed (returned, passed on); `as unknown` right after it stops it there. */
const handsOut = (node: ts.Node): boolean =>
  (ts.isCallExpression(node) ||
    ts.isPropertyAccessExpression(node) ||
    ts.isElementAccessExpression(node) ||
    ts.isAwaitExpression(node)) &&
  !ts.isAsExpression(node.parent);

export function findAny(files: readonly string[], options: ts.CompilerOptions, root: string): AnyUse[] {
  const program = ts.createProgram({ rootNames: files, options });
  const checker = program.getTypeChecker();
  const found: AnyUse[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`not in the program: ${file}`);
    const note = (node: ts.Node, how: AnyUse['how']): void => {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ at: `${relative(root, file)}:${line}`, text: node.getText(source), how });
    };
    // In a type only a written `any` counts: its names are types, not values that could be any.
    const visitType = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.AnyKeyword) note(node, 'written');
      ts.forEachChild(node, visitType);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
      if (ts.isTypeNode(node)) return visitType(node);
      if ((ts.isIdentifier(node) || handsOut(node)) && (checker.getTypeAtLocation(node).flags & ts.TypeFlags.Any) !== 0)
        note(node, 'inferred');
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}
