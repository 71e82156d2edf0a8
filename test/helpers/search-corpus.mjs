// A deterministic corpus of messages for search at scale, shared by the test
// (test/http/message-search-scale.test.ts) and the benchmark (bench/search.mjs).
// Every field cycles with a different period, so any filter picks a known,
// computable subset: the expected answer comes from `matches`, not a constant.

const TOPICS = [
  'invoice',
  'receipt',
  'shipment',
  'password',
  'newsletter',
  'reminder',
  'welcome',
  'statement',
  'survey',
  'ticket',
  'renewal',
  'refund',
  'booking',
];
const ADJECTIVES = [
  'monthly',
  'urgent',
  'final',
  'weekly',
  'new',
  'overdue',
  'annual',
  'quick',
  'second',
  'special',
  'daily',
  'open',
  'pending',
  'shared',
  'late',
  'fresh',
  'brief',
];

/** Field values of corpus message `index` (0-based), also used to compute expected answers. */
export function corpusFields(index) {
  return {
    id: `m-${String(index).padStart(6, '0')}`,
    to: `user${index % 5000}@example${index % 7}.net`,
    from: `sender${index % 50}@acme.example`,
    subject: `${ADJECTIVES[index % ADJECTIVES.length]} ${TOPICS[index % TOPICS.length]} ${index}`,
    batch_code: `batch-${index % 100}`,
    priority: 1 + (index % 3),
  };
}

/** The /add-messages body of corpus message `index`; `deferredTs` holds it back from sending. */
export function corpusMessage(index, deferredTs) {
  return {
    ...corpusFields(index),
    body: `Message ${index} of the search corpus.`,
    ...(deferredTs === undefined ? {} : { deferred_ts: deferredTs }),
  };
}

/** Indices of the corpus messages (of `count`) whose fields satisfy `predicate`, newest (highest) first. */
export function matches(count, predicate) {
  const found = [];
  for (let index = count - 1; index >= 0; index -= 1) if (predicate(corpusFields(index), index)) found.push(index);
  return found;
}

/**
 * Posts `count` corpus messages in requests of `batch`; `deferredTsOf(index)` holds a message
 * back until then (undefined: due now). Resolves with the number queued.
 */
export async function postCorpus({ url, token, count, batch = 1000, deferredTsOf = () => undefined, concurrency = 2 }) {
  let next = 0;
  let queued = 0;
  const worker = async () => {
    while (next < count) {
      const from = next;
      next = Math.min(count, next + batch);
      const messages = [];
      for (let index = from; index < next; index += 1) messages.push(corpusMessage(index, deferredTsOf(index)));
      const response = await fetch(`${url}/add-messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages }),
      });
      const body = await response.json();
      if (response.status !== 200 || body.queued !== messages.length)
        throw new Error(`corpus post failed: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
      queued += body.queued;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return queued;
}
