// The `body-store` scenario (issue 46): intake of 1 MB messages over HTTP (4 clients, one message
// a request, 5 s, the tenant suspended so nothing is relayed) with the bodies kept in the database
// (backend "database"), in the embedded body store (files beside the database, the
// default) and in an S3 bucket (s3rver in its own process), one after the other in the same run;
// with the bytes the database (and its WAL) and the body store hold after it.
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchDataDir, run, start, startPeers } from './harness.mjs';

const MIB = 1024 * 1024;

/** Bytes of the files under `dir` (0 when it does not exist). */
function bytesUnder(dir) {
  let total = 0;
  try {
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
      if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  } catch {
    return 0;
  }
  return total;
}

async function intake(toml) {
  const config = join(benchDataDir(), 'config.toml');
  writeFileSync(config, toml);
  const { d, key, stop } = await startPeers({ suspended: true, env: { MAILPROXY_CONFIG: config } });
  try {
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '1', String(MIB), '5', 'body']);
    const database = join(d.dataDir, 'mailproxy.db');
    const held = (file) => statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    return {
      'messages/s': load.rate,
      'MiB/s': load.rate,
      'request p50 ms': load.p50,
      'request p99 ms': load.p99,
      'messages queued': load.queued,
      'database + WAL MiB': (held(database) + held(`${database}-wal`)) / MIB,
      'bodies/ MiB': bytesUnder(join(d.dataDir, 'bodies')) / MIB,
      errors: load.errors,
    };
  } finally {
    await stop();
  }
}

export async function bodyStoreScenario() {
  const s3 = start(['bench/s3-server.mjs']);
  const { port } = await s3.next((entry) => entry.port);
  try {
    const inDatabase = await intake('[storage]\nbackend = "database"\n');
    const embedded = await intake('[storage]\nbackend = "embedded"\n');
    const bucket = await intake(
      [
        '[storage]',
        'backend = "s3"',
        '[storage.s3]',
        'bucket = "bench"',
        `endpoint = "http://127.0.0.1:${port}"`,
        'force_path_style = true',
        'access_key_id = "S3RVER"',
        'secret_access_key = "S3RVER"',
        '',
      ].join('\n'),
    );
    const figures = {};
    for (const [name, result] of [
      ['in the database', inDatabase],
      ['embedded store', embedded],
      ['s3 store', bucket],
    ])
      for (const [figure, value] of Object.entries(result)) figures[`${name}: ${figure}`] = value;
    figures['s3 / embedded messages/s'] = bucket['messages/s'] / embedded['messages/s'];
    return figures;
  } finally {
    s3.child.stdin.end();
  }
}
