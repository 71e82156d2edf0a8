#!/usr/bin/env node
/**
 * `npm test`'s static checks, side by side: each is one process that reads the sources and writes
 * nothing (the longest, prettier, uses one core), so on two cores the four take about as long as
 * prettier alone instead of the sum of them. Each check's output is printed whole, in this order,
 * once all have finished; the exit status is 1 when any of them failed.
 */
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint:deps', 'lint:unused', 'format:check'];

/** Runs `npm run <script>`; resolves with its status and its stdout and stderr as they came. */
function run(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ script, status: 1, output: `${output}${error.stack}\n` }));
    child.on('close', (code, signal) => resolve({ script, status: code ?? 1, signal, output }));
  });
}

const results = await Promise.all(CHECKS.map(run));
for (const { output } of results) process.stdout.write(output);
const failed = results.filter((result) => result.status !== 0);
for (const { script, status, signal } of failed)
  console.error(`checks: npm run ${script} failed (${signal ?? `exit ${status}`})`);
process.exit(failed.length === 0 ? 0 : 1);
