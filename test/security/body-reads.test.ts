// Every request body is read by src/ingress/http/request-body.ts, under the limit armed for its
// route: a route that reads one any other way (hono's c.req.json(), parseBody(), the raw Request
// or node's IncomingMessage) would read it whole, with no limit. This scan fails on such a read
// anywhere in src/, naming file and line. The dependency rule `one-body-reader`
// (.dependency-cruiser.cjs) keeps out hono's middleware that read bodies.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const THE_READER = 'src/ingress/http/request-body.ts';

/** Reads of a request's body that bypass the limit: hono's request, the web Request, node's request. */
const DIRECT_READS: readonly RegExp[] = [
  /\.req\s*\.\s*(json|text|arrayBuffer|blob|formData|parseBody)\s*\(/,
  /\.req\s*\.\s*valid\s*\(/,
  /\.req\s*\.\s*raw\s*\.\s*(body|json|text|arrayBuffer|blob|formData|clone)\b/,
  /\bbodyCache\b/,
  /\.env\b[^;\n]*\bincoming\b/,
];

/** `file:line: text` of each direct body read in `text`. */
export function directReads(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, index) =>
      DIRECT_READS.some((pattern) => pattern.test(line)) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
    );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe('request bodies have one reader', () => {
  it('finds no body read outside request-body.ts in src/', () => {
    const files = sourceFiles(join(ROOT, 'src')).map((path) => relative(ROOT, path).split('\\').join('/'));
    expect(files).toContain(THE_READER);
    const found = files
      .filter((file) => file !== THE_READER)
      .flatMap((file) => directReads(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(
      found,
      'read the body with requestBody() (or readForm() in the console), which holds it to the route limit',
    ).toEqual([]);
  });

  it('the scan finds each way of reading a body directly, and lets the limited reader through', () => {
    const reads = [
      'const body = Buffer.from(await c.req.arrayBuffer());',
      'const form = await c.req.parseBody();',
      'const data = await c.req.json();',
      'const text = await c.req.text();',
      "const payload = c.req.valid('json');",
      'const stream = c.req.raw.body;',
      'const copy = await c.req.raw.clone().text();',
      'const incoming = (c.env as { incoming: IncomingMessage }).incoming;',
    ];
    expect(reads.map((line) => directReads('x.ts', line).length)).toEqual(reads.map(() => 1));
    const allowed = [
      'const body = await requestBody(c);',
      'checkForm(c, await readForm(c));',
      "const id = c.req.header('x-request-id');",
      'c.req.query()',
    ];
    expect(allowed.flatMap((line) => directReads('x.ts', line))).toEqual([]);
  });
});
