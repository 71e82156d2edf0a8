/**
 * Our engines.node is honest: the Node running the tests is one it admits and
 * one every direct dependency admits, and it admits no Node version that a
 * direct dependency excludes (production or development: the supported way in
 * is `npm ci` and `npm test` from a clone, which needs both). Offline: it reads
 * the installed manifests under node_modules, and the lock for transitive packages.
 */
import { existsSync, readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url);

interface Manifest {
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

interface Dependency {
  name: string;
  kind: 'production' | 'development';
  /** The installed version's engines.node; a manifest without one admits every Node. */
  node: string;
}

const readManifest = (path: string): Manifest => JSON.parse(readFileSync(new URL(path, ROOT), 'utf8')) as Manifest;

function installedDependencies(own: Manifest): Dependency[] {
  const named = (names: Record<string, string> | undefined, kind: Dependency['kind']): Dependency[] =>
    Object.keys(names ?? {}).map((name) => ({
      name,
      kind,
      node: readManifest(`node_modules/${name}/package.json`).engines?.node ?? '*',
    }));
  return [...named(own.dependencies, 'production'), ...named(own.devDependencies, 'development')];
}

/** Each disagreement between our range, the running Node and a dependency's range, in words; none when all agree. */
function engineConflicts(ours: string, running: string, dependencies: Dependency[]): string[] {
  const conflicts: string[] = [];
  if (!semver.satisfies(running, ours)) conflicts.push(`the tests run on Node ${running}, outside our engines ${ours}`);
  for (const { name, kind, node } of dependencies) {
    if (!semver.satisfies(running, node))
      conflicts.push(`${name} (${kind}) requires Node ${node}; the tests run on ${running}`);
    if (!semver.subset(ours, node))
      conflicts.push(`our engines ${ours} admits Node versions ${name} (${kind}) excludes: it requires ${node}`);
  }
  return conflicts;
}

describe('engines.node', () => {
  it('admits the Node running the tests, as every direct dependency does, and claims no Node one of them excludes', () => {
    const own = readManifest('package.json');
    expect(own.engines?.node).toBeDefined();
    expect(engineConflicts(own.engines?.node ?? '', process.version, installedDependencies(own))).toEqual([]);
  });
});

/**
 * Installed packages that declare a Node range excluding the one we run, each with why it runs
 * all the same. Keyed by version: a new release of one is judged again.
 */
const RUNS_DESPITE_ENGINES: Record<string, string> = {
  '@nats-io/nuid@3.0.0':
    'pinned by @nats-io/nats-core 3.x; declares ">= 22.x" but uses only BigInt and Math.random, which Node 20 has (2.0.3, for ">=18.x", has another API); the mirror and fleet tests run it on Node 20',
};

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
}

/** Every package installed from the lock (transitive ones too) whose engines.node excludes the running Node. */
function installedExcluding(running: string): string[] {
  const lock = JSON.parse(readFileSync(new URL('package-lock.json', ROOT), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  return Object.entries(lock.packages).flatMap(([path, entry]) => {
    const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    // Optional packages for other platforms are in the lock but not installed.
    if (path === '' || node === undefined || !existsSync(new URL(path, ROOT))) return [];
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    return semver.satisfies(running, node) ? [] : [`${name}@${entry.version ?? '?'} requires Node ${node}`];
  });
}

describe('installed packages, transitive ones too', () => {
  it('admit the Node running the tests, or are listed with why they run all the same', () => {
    const unexplained = installedExcluding(process.version).filter(
      (found) => RUNS_DESPITE_ENGINES[found.slice(0, found.indexOf(' requires'))] === undefined,
    );
    expect(unexplained).toEqual([]);
  });

  it('list no exception that is no longer needed (not installed, or admitting the running Node)', () => {
    const found = installedExcluding(process.version).map((line) => line.slice(0, line.indexOf(' requires')));
    expect(Object.keys(RUNS_DESPITE_ENGINES).filter((key) => !found.includes(key))).toEqual([]);
  });
});

describe('the engines rules themselves', () => {
  const dep = (name: string, node: string): Dependency => ({ name, kind: 'production', node });

  it('refuses a dependency whose engines exclude the running Node', () => {
    expect(engineConflicts('^20.19.0', 'v20.20.2', [dep('needs-22', '>=22')])).toEqual([
      'needs-22 (production) requires Node >=22; the tests run on v20.20.2',
      'our engines ^20.19.0 admits Node versions needs-22 (production) excludes: it requires >=22',
    ]);
  });

  it('refuses our range when its floor is below a dependency floor, though the running Node satisfies both', () => {
    expect(engineConflicts('>=20.12', 'v20.20.2', [dep('knip', '^20.19.0 || >=22.12.0')])).toEqual([
      'our engines >=20.12 admits Node versions knip (production) excludes: it requires ^20.19.0 || >=22.12.0',
    ]);
  });

  it('refuses our range when it admits a line a dependency skips', () => {
    const sqlite = dep('better-sqlite3', '20.x || 22.x || 23.x || 24.x');
    expect(engineConflicts('>=20.19', 'v20.20.2', [sqlite])).toHaveLength(1);
    expect(engineConflicts('^20.19.0 || ^22.12.0', 'v20.20.2', [sqlite])).toEqual([]);
  });

  it('refuses a running Node outside our own range, and lets a dependency without engines admit every Node', () => {
    expect(engineConflicts('^22.12.0', 'v20.20.2', [dep('no-engines', '*')])).toEqual([
      'the tests run on Node v20.20.2, outside our engines ^22.12.0',
    ]);
  });
});
