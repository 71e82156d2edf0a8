/**
 * `mailproxy` in a clone of the repository: not on the PATH, it runs
 * as `npx mailproxy` through package.json's `bin`, and the README says so where
 * it first uses the command.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('mailproxy from a clone', () => {
  it('runs as npx mailproxy from the clone, without the network', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MAILPROXY_')));
    const { stdout } = await promisify(execFile)('npx', ['--offline', 'mailproxy', '--version'], { cwd: root, env });
    expect(stdout).toBe(`${pkg.version}\n`);
  });

  it('says how to run it (npx, npm link) before the README first runs it', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const firstUse = readme.search(/^(?:npx )?mailproxy \w/m);
    const told = readme.indexOf('run it as `npx mailproxy ...`');
    expect(told).toBeGreaterThan(0);
    expect(told).toBeLessThan(firstUse);
    expect(readme.slice(told, firstUse)).toContain('`npm link`');
    expect(readme.slice(firstUse, firstUse + 4)).toBe('npx ');
  });
});
