#!/usr/bin/env node
// `npm run deps:check`: every direct dependency a major version behind the registry's latest, and why it is
// held, from deps-held.json. Asks the registry (network), so it is not part of `npm test`.
// Exit 1 when a package is a major behind with no reason in the table; a reason for a package no longer
// behind is reported as stale. Asks `npm view NAME@latest` rather than trusting `npm outdated`, whose
// "latest" is the newest version whose engines admit the running Node: it hides exactly the majors a
// newer Node holds back.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = new URL('../', import.meta.url);
const readJson = (path) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));

/** The direct dependencies, an alias (`"typescript7": "npm:typescript@^7"`) under its real name. */
function directDependencies(manifest) {
  const all = { ...manifest.dependencies, ...manifest.devDependencies };
  return Object.entries(all).map(([key, spec]) => {
    const alias = /^npm:(@?[^@]+)@(.+)$/.exec(spec);
    return { key, name: alias ? alias[1] : key, declared: alias ? alias[2] : spec };
  });
}

function installedVersion(key) {
  try {
    return readJson(`node_modules/${key}/package.json`).version;
  } catch {
    return undefined;
  }
}

async function latestOf(name) {
  const { stdout } = await run('npm', ['view', `${name}@latest`, 'version', 'engines', '--json'], {
    maxBuffer: 1 << 20,
  });
  // Without engines in the manifest npm answers the version alone, as a bare JSON string.
  const answer = JSON.parse(stdout);
  if (typeof answer === 'string') return { version: answer, node: '(none)' };
  return { version: answer.version, node: answer.engines?.node ?? '(none)' };
}

/** A few registry questions at a time: quick, and gentle with the registry. */
async function mapPooled(items, width, work) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

const major = (version) => Number(/^\D*(\d+)/.exec(version ?? '')?.[1] ?? NaN);

function verdict(dep, held) {
  const reason = held[dep.key];
  const behind = major(dep.latest.version) > major(dep.installed ?? dep.declared);
  if (behind && reason) return { status: 'held', note: reason };
  if (behind) return { status: 'BEHIND', note: 'a major behind with no reason in deps-held.json' };
  if (reason) return { status: 'stale', note: `deps-held.json still holds it: ${reason}` };
  return { status: 'ok', note: '' };
}

function printTable(rows) {
  const header = ['package', 'declared', 'installed', 'latest', 'latest engines.node', 'status'];
  const cells = rows.map((r) => [r.key, r.declared, r.installed ?? '-', r.latest.version, r.latest.node, r.status]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => String(c[i]).length)));
  const line = (c) => c.map((x, i) => String(x).padEnd(widths[i])).join('  ');
  console.log(line(header));
  for (const c of cells) console.log(line(c));
  console.log('');
  for (const r of rows.filter((x) => x.note !== '')) console.log(`${r.key} (${r.status}): ${r.note}`);
}

async function main() {
  const held = readJson('deps-held.json');
  const deps = directDependencies(readJson('package.json'));
  const rows = await mapPooled(deps, 4, async (dep) => {
    const row = { ...dep, installed: installedVersion(dep.key), latest: await latestOf(dep.name) };
    return { ...row, ...verdict(row, held) };
  });
  console.log(`Node running: ${process.version}\n`);
  printTable(rows);
  for (const key of Object.keys(held).filter((k) => !deps.some((d) => d.key === k)))
    console.log(`${key} (stale): deps-held.json names it, but it is not a direct dependency`);
  const unexplained = rows.filter((r) => r.status === 'BEHIND');
  if (unexplained.length > 0) {
    console.log(`\n${unexplained.length} a major behind without a reason: upgrade, or say why in deps-held.json`);
    process.exitCode = 1;
  }
}

await main();
