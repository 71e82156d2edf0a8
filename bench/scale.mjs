// The `scale` scenario: does the queue's cost grow with its depth? The dispatcher's time per
// claim (the daemon's own mailproxy_dispatcher_claim_seconds) while it drains 10,000 and
// 1,000,000 queued messages, the daemon's memory with 1,000,000 queued, and its start-up time
// on that database.
//
// The databases are made once per bench process. A daemon takes 10,000 messages over HTTP for
// tenant `bench`, whose account may send one message a day (so they wait, due, untouched); the
// 1,000,000 one is that database with its messages copied 99 times over in SQL (new ids; the
// full-text indexer told they are done, as search is not measured here). Each run starts the
// daemon on a copy, lifts the limit and lets it relay to the sink for DRAIN_MS.
import Database from 'better-sqlite3';
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  api,
  benchDataDir,
  memoryOf,
  sampleRss,
  scrapeMetrics,
  setupTenant,
  sinkStats,
  startDaemon,
  startSink,
} from './harness.mjs';
import { postCorpus } from '../test/helpers/search-corpus.mjs';

const SMALL = 10_000;
const LARGE = 1_000_000;
const DRAIN_MS = 2500;
let templates = null;

function copyDir(from) {
  const to = benchDataDir();
  for (const name of readdirSync(from)) copyFileSync(join(from, name), join(to, name));
  return to;
}

async function makeTemplates() {
  const small = benchDataDir();
  const { port, stop: stopSink } = await startSink();
  const d = await startDaemon({}, { dataDir: small });
  const key = await setupTenant(d, port);
  await api(d.base, d.token, 'POST', '/account', {
    id: 'relay',
    tenant_id: 'bench',
    host: '127.0.0.1',
    port,
    tls_mode: 'none',
    max_connections: 5,
    limit_per_day: 1,
    is_default: true,
  });
  await postCorpus({ url: d.base, token: key, count: SMALL });
  await d.stop();
  stopSink();

  const large = copyDir(small);
  const db = new Database(join(large, 'mailproxy.db'));
  const columns = db
    .prepare('SELECT name FROM pragma_table_info(?)')
    .pluck()
    .all('messages')
    .filter((name) => name !== 'pk');
  const values = columns.map((name) => (name === 'id' ? `id || '-' || @round` : name));
  const copy = db.prepare(
    `INSERT INTO messages (${columns.join(', ')}) SELECT ${values.join(', ')} FROM messages WHERE pk <= @last`,
  );
  const last = db.prepare('SELECT max(pk) FROM messages').pluck().get();
  db.transaction(() => {
    for (let round = 1; round < LARGE / SMALL; round += 1) copy.run({ round, last });
    db.prepare('UPDATE search_state SET indexed_pk = (SELECT max(pk) FROM messages)').run();
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { [SMALL]: small, [LARGE]: large };
}

/** The daemon's claim histogram: how many claims and their total seconds. */
async function claimTotals(d) {
  const { sample } = await scrapeMetrics(d);
  return {
    count: sample('mailproxy_dispatcher_claim_seconds_count'),
    sum: sample('mailproxy_dispatcher_claim_seconds_sum'),
  };
}

async function drain(size) {
  const dataDir = copyDir(templates[size]);
  const { sink, port, stop: stopSink } = await startSink();
  const d = await startDaemon({}, { dataDir });
  try {
    const spawnedAt = Date.now() - d.startedIn;
    while ((await fetch(`${d.base}/ready`)).status !== 200) await new Promise((r) => setTimeout(r, 20));
    const readyIn = Date.now() - spawnedAt;
    const idle = memoryOf(d.daemon.child.pid).rss;
    const before = await claimTotals(d);
    const stopSampling = sampleRss(d.daemon.child.pid);
    // The limit lifted and the sink's port given: the dispatcher starts on the whole queue.
    await api(d.base, d.token, 'POST', '/account', {
      id: 'relay',
      tenant_id: 'bench',
      host: '127.0.0.1',
      port,
      tls_mode: 'none',
      max_connections: 5,
      limit_per_day: null,
      is_default: true,
    });
    await new Promise((r) => setTimeout(r, DRAIN_MS));
    const after = await claimTotals(d);
    const relayed = (await sinkStats(sink)).received;
    return {
      claimUs: ((after.sum - before.sum) / (after.count - before.count)) * 1e6,
      claims: after.count - before.count,
      relayed: relayed / (DRAIN_MS / 1000),
      idle,
      peak: stopSampling(),
      startedIn: d.startedIn,
      readyIn,
    };
  } finally {
    await d.stop();
    stopSink();
  }
}

export async function scaleScenario() {
  templates ??= await makeTemplates();
  const small = await drain(SMALL);
  const large = await drain(LARGE);
  return {
    'claim µs, 10k queued': small.claimUs,
    'claim µs, 1M queued': large.claimUs,
    'claim ratio 1M / 10k': large.claimUs / small.claimUs,
    'relayed/s, 10k queued': small.relayed,
    'relayed/s, 1M queued': large.relayed,
    'RSS MiB, 1M queued, idle': large.idle,
    'RSS MiB, 10k queued, idle': small.idle,
    'peak RSS MiB, draining 10k': small.peak,
    'peak RSS MiB, draining 1M': large.peak,
    'start-up ms (listening), 1M': large.startedIn,
    'start-up ms (ready), 1M': large.readyIn,
    'start-up ms (ready), 10k': small.readyIn,
  };
}
