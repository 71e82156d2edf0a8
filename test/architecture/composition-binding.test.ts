/**
 * The composition binds nothing late: every service is made with what it
 * needs, in an order where that exists. Two shapes of late binding are
 * refused in src/main.ts and src/composition/: a `let` filled in after its
 * first use and read back with a non-null assertion (`let x = null … x!`),
 * and a setter called on a service already made (`attach()`, `follow()`,
 * `bind()`, `setSomething()`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const LATE_SETTER = /^(attach|follow|bind)$|^set[A-Z]/;

interface Finding {
  file: string;
  line: number;
  rule: 'asserted-let' | 'late-setter';
  text: string;
}

function findLateBindings(file: string, text: string): Finding[] {
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const lets = new Set<string>();
  const asserted: ts.NonNullExpression[] = [];
  const findings: Finding[] = [];
  const at = (node: ts.Node, rule: Finding['rule']): Finding => ({
    file,
    line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
    rule,
    text: node.getText(),
  });
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclarationList(node) && (node.flags & ts.NodeFlags.Let) !== 0) {
      for (const declaration of node.declarations)
        if (ts.isIdentifier(declaration.name)) lets.add(declaration.name.text);
    }
    if (ts.isNonNullExpression(node) && ts.isIdentifier(node.expression)) asserted.push(node);
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      LATE_SETTER.test(node.expression.name.text)
    ) {
      findings.push(at(node, 'late-setter'));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const node of asserted)
    if (lets.has((node.expression as ts.Identifier).text)) findings.push(at(node, 'asserted-let'));
  return findings;
}

function compositionFiles(): string[] {
  const dir = join(ROOT, 'src/composition');
  const files = readdirSync(dir)
    .filter((name) => /\.tsx?$/.test(name) && !name.endsWith('.test.ts'))
    .map((name) => join('src/composition', name));
  return ['src/main.ts', ...files];
}

describe('composition binding', () => {
  it('binds nothing late in src/main.ts and src/composition/', () => {
    const files = compositionFiles();
    expect(files.length).toBeGreaterThan(1);
    const findings = files.flatMap((file) => findLateBindings(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(findings).toEqual([]);
  });

  it('finds a let that is filled in later and read back with a non-null assertion', () => {
    const planted = [
      'let fleetView: View | null = null;',
      'const webhooks = createWebhooks({ elsewhere: (t, e) => fleetView!.messages.providerEvents(t, e) });',
      'fleetView = createFleetView(fleet, { providerEvents: webhooks.apply });',
    ].join('\n');
    expect(findLateBindings('planted.ts', planted)).toEqual([
      { file: 'planted.ts', line: 2, rule: 'asserted-let', text: 'fleetView!' },
    ]);
  });

  it('finds setters called on a service already made', () => {
    const planted = [
      'if (fleet !== null) work.fleetLimits?.attach(fleet.link);',
      'const follower = shared.follow(streams.fleet.link);',
      'dispatcher.setGate(gate);',
      'const wake = handler.bind(null);',
    ].join('\n');
    expect(
      findLateBindings('planted.ts', planted).map((finding) => [finding.line, finding.rule, finding.text]),
    ).toEqual([
      [1, 'late-setter', 'work.fleetLimits?.attach(fleet.link)'],
      [2, 'late-setter', 'shared.follow(streams.fleet.link)'],
      [3, 'late-setter', 'dispatcher.setGate(gate)'],
      [4, 'late-setter', 'handler.bind(null)'],
    ]);
  });

  it('lets constructors take what they need, maps be written and timers be set', () => {
    const clean = [
      'const fleet = createFleetService(settings, { clock, log, version });',
      'const limits = createFleetLimits(limitSettings, { link: fleet.link, clock, log });',
      'const seen = new Map<string, number>();',
      'seen.set(fleet.link.nodeId, 1);',
      'setImmediate(() => undefined);',
      'let count = 0;',
      'count += 1;',
      'const first = [1][0]!;',
    ].join('\n');
    expect(findLateBindings('clean.ts', clean)).toEqual([]);
  });
});
