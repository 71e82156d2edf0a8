// The `erasure` scenario: one person's mail erased (POST /commands/erase by address) in a
// daemon holding 100,000 messages, 10,000 of them to that address. The time is the request's,
// from the bench process over loopback: one durable transaction (the matching messages
// tombstoned, their data keys destroyed, their timelines scrubbed, a `message.erased` event each).
// The scrub that follows it (their search terms out of the full-text index, the index merged, the
// WAL checkpointed and truncated) runs in the background from the next tick of the search index's
// loop, and may hold the writer while the second request comes. A second request for the same
// address, with nothing left to erase, is the part that does not grow with the matches.
//
// The messages are posted once per bench process over HTTP (batches of 1,000, tenant suspended
// so that nothing is relayed), the full-text indexer awaited, the daemon stopped; each run starts
// a daemon on a copy of that data directory, so every run erases the same 10,000.
import { cpSync, rmSync } from 'node:fs';
import { api, benchDataDir, setupTenant, startDaemon, startSink } from './harness.mjs';

const COUNT = 100_000;
const BATCH = 1000;
/** One message in ten is to the erased address. */
const EVERY = 10;
const ADDRESS = 'erase-me@example.net';
const BODY = Array.from({ length: 28 }, (_, line) => `line ${line} of an order confirmation, as long as mail is`)
  .join('\n')
  .padEnd(2048, '.');

let template = null;

const messageOf = (index) => ({
  id: `e-${index}`,
  from: 'shop@bench.example',
  to: index % EVERY === 0 ? ADDRESS : `user${index % 5000}@example${index % 7}.net`,
  subject: `order ${index}`,
  body: BODY,
});

async function post(base, key) {
  let next = 0;
  const worker = async () => {
    while (next < COUNT) {
      const from = next;
      next = Math.min(COUNT, next + BATCH);
      const messages = Array.from({ length: next - from }, (_, offset) => messageOf(from + offset));
      const answer = await api(base, key, 'POST', '/add-messages', { messages });
      if (answer.queued !== messages.length) throw new Error(`post failed: ${JSON.stringify(answer).slice(0, 300)}`);
    }
  };
  await Promise.all([worker(), worker()]);
}

/** The posted messages in a data directory of their own, every one in the full-text index. */
async function makeTemplate() {
  const dataDir = benchDataDir();
  const sink = await startSink();
  const d = await startDaemon({}, { dataDir });
  try {
    const key = await setupTenant(d, sink.port);
    await api(d.base, d.token, 'POST', '/commands/suspend', { tenant_id: 'bench' });
    await post(d.base, key);
    // The indexer runs behind intake: the last message's subject number finds it once indexed.
    const deadline = Date.now() + 120_000;
    while ((await api(d.base, key, 'GET', `/messages?q=${COUNT - 1}&limit=1`)).messages.length === 0) {
      if (Date.now() > deadline) throw new Error('the full-text index did not catch up within 2 minutes');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return dataDir;
  } finally {
    await d.stop();
    sink.stop();
  }
}

async function timedErase(d) {
  const started = performance.now();
  const answer = await api(d.base, d.token, 'POST', '/commands/erase', { tenant_id: 'bench', address: ADDRESS });
  const ms = performance.now() - started;
  if (answer.erased_messages === undefined) throw new Error(`erase failed: ${JSON.stringify(answer)}`);
  return { ms, answer };
}

export async function erasureScenario() {
  template ??= await makeTemplate();
  const dataDir = benchDataDir();
  cpSync(template, dataDir, { recursive: true });
  const d = await startDaemon({}, { dataDir });
  try {
    while ((await fetch(`${d.base}/ready`)).status !== 200) await new Promise((r) => setTimeout(r, 20));
    const first = await timedErase(d);
    if (first.answer.erased_messages !== COUNT / EVERY)
      throw new Error(`erased ${first.answer.erased_messages} messages, not ${COUNT / EVERY}`);
    const again = await timedErase(d);
    return {
      'erase ms, 10,000 of 100,000': first.ms,
      erased_messages: first.answer.erased_messages,
      events_scrubbed: first.answer.events_scrubbed,
      'erase ms, again (none left)': again.ms,
      'erased_messages, again': again.answer.erased_messages,
    };
  } finally {
    await d.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
