// The `search` scenario: GET /messages with 100,000 messages stored (the corpus of the
// scale test, test/helpers/search-corpus.mjs), each kind of page asked for again and again
// from this process (not the daemon's): the time of one page, client-side, p50 and p99.
// The messages are stored once per bench process; each run starts a daemon on that database.
import { api, benchDataDir, setupTenant, startDaemon, startSink } from './harness.mjs';
import { corpusFields, postCorpus } from '../test/helpers/search-corpus.mjs';

const COUNT = 100_000;
const REPEATS = 30;

// Each kind of page an operator asks for; the corpus rule decides how many rows each matches.
const QUERIES = {
  'newest page': 'limit=50',
  'page in the middle (cursor)': null,
  'status=sent (1%)': 'status=sent&limit=50',
  'status=error (none)': 'status=error&limit=50',
  'batch + priority': 'batch_code=batch-42&priority=2&limit=50',
  recipient: 'recipient=user123@example4.net&limit=50',
  sender: 'sender=sender7@acme.example&limit=50',
  'full text, two words': 'q=overdue%20invoice&limit=50',
  'by next attempt': 'sort=next_attempt&limit=50',
  'by next attempt, one batch': 'sort=next_attempt&batch_code=batch-42&limit=50',
};

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function timePage(base, key, query) {
  const started = performance.now();
  const response = await fetch(`${base}/messages?${query}`, { headers: { authorization: `Bearer ${key}` } });
  const body = await response.json();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`GET /messages?${query}: ${response.status} ${JSON.stringify(body)}`);
  return { ms, body };
}

let seeded = null;

/** 100,000 corpus messages in a data directory kept for the runs, batch 3 sent to a sink, the full text indexed. */
async function seed() {
  const dataDir = benchDataDir();
  const sink = await startSink();
  const { port } = sink;
  const d = await startDaemon({}, { dataDir });
  try {
    const key = await setupTenant(d, port);
    const holdUntil = Math.floor(Date.now() / 1000) + 86_400;
    await api(d.base, d.token, 'POST', '/commands/suspend', { tenant_id: 'bench', batch_code: 'batch-9' });
    const deferredTsOf = (index) =>
      corpusFields(index).batch_code === 'batch-3' ? undefined : holdUntil + (index % 1000);
    await postCorpus({ url: d.base, token: key, count: COUNT, deferredTsOf });
    // The indexer runs off the intake path; the newest message's subject number finds it once indexed.
    const last = `q=${COUNT - 1}&limit=1`;
    for (let waited = 0; (await timePage(d.base, key, last)).body.messages.length === 0; waited += 1) {
      if (waited > 600) throw new Error('the full-text index did not catch up within a minute');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { dataDir, key };
  } finally {
    await d.stop();
    sink.stop();
  }
}

/** The seeded corpus of this bench process (the `ui` scenario renders its pages over the same 100,000 messages). */
export async function seededCorpus() {
  seeded ??= await seed();
  return seeded;
}

export async function searchScenario() {
  seeded ??= await seed();
  const d = await startDaemon({}, { dataDir: seeded.dataDir });
  const { key } = seeded;
  try {
    // A cursor from the middle of the newest-first walk: the page after message 50,000.
    let middle = '';
    for (let page = 0; page < 100; page += 1)
      middle = (await timePage(d.base, key, `limit=500${middle === '' ? '' : `&cursor=${middle}`}`)).body.next_cursor;
    const result = {};
    for (const [name, text] of Object.entries(QUERIES)) {
      const query = text ?? `limit=50&cursor=${middle}`;
      const times = [];
      for (let repeat = 0; repeat < REPEATS; repeat += 1) times.push((await timePage(d.base, key, query)).ms);
      times.sort((a, b) => a - b);
      result[`${name} p50 ms`] = percentile(times, 0.5);
      result[`${name} p99 ms`] = percentile(times, 0.99);
    }
    return result;
  } finally {
    await d.stop();
  }
}
