#!/usr/bin/env node
/**
 * `npm run lint:deps`: dependency-cruiser over src/, failing also when it
 * cruised fewer modules than src/ holds. dependency-cruiser parses TypeScript
 * with the `typescript` package it finds; given one it does not support (7.x,
 * whose package no longer carries the compiler API) it skips every .ts file
 * and reports "no dependency violations found (0 modules, ...)": every rule
 * would pass while nothing was checked.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const SOURCE = 'src';

/** The .ts and .tsx files under a directory, recursively. */
function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).reduce((count, entry) => {
    if (entry.isDirectory()) return count + sourceFiles(join(dir, entry.name));
    return count + (/\.tsx?$/.test(entry.name) ? 1 : 0);
  }, 0);
}

const run = spawnSync('npx', ['depcruise', SOURCE, '--config', '.dependency-cruiser.cjs'], { encoding: 'utf8' });
process.stdout.write(run.stdout);
process.stderr.write(run.stderr);
if (run.status !== 0) process.exit(run.status ?? 1);

const cruised = /\((\d+) modules?, \d+ dependenc(?:y|ies) cruised\)/.exec(run.stdout);
const expected = sourceFiles(SOURCE);
if (cruised === null || Number(cruised[1]) < expected) {
  const found = cruised === null ? 'no module count in its output' : `${cruised[1]} modules`;
  console.error(
    `lint:deps: dependency-cruiser cruised ${found}, but ${SOURCE}/ holds ${expected} TypeScript files: ` +
      'it cannot parse them (is `typescript` a version it supports?), so no rule was checked',
  );
  process.exit(1);
}
