/**
 * POST /add-messages under generated hostile input, against the built daemon as
 * a separate process over real sockets, relaying to a real SMTP sink.
 * Properties, per request: never a 5xx; a refusal is a 4xx with a stable
 * error code and stores nothing; a 200 accounts for every item, stores exactly
 * the accepted ones, each whole (the stored payload is what was sent, SQL
 * metacharacters verbatim), and each one relayed carries exactly the headers
 * sent (no header injected by CR/LF, no address split off a display name).
 * After every batch: same pid, /health 200, no error-level log line.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/ingress/http/errors.js';
import { wholeBody, itemSpec, type ItemSpec, type RawBody } from '../helpers/hostile-json.js';
import { eventually } from '../helpers/eventually.js';
import { startHostileTarget, type HostileTarget } from '../helpers/hostile-target.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { api, type ApiResponse } from '../helpers/test-daemon.js';
import { checkProperty } from '../helpers/property-runs.js';
import { expectRelayedAsSent, expectStoredAsSent, relayedById, storedRow } from '../helpers/submission-checks.js';

const started = tearDownProcesses({ stop: 'file' });
const MAX_BODY_BYTES = 1024 * 1024;
let target: HostileTarget;

beforeAll(async () => {
  target = await startHostileTarget(started, {
    toml: `[http]\nmax_body_bytes = ${MAX_BODY_BYTES}\nmax_message_bytes = 262144\nauth_max_failures = 1000\n[dispatch]\nallow_private_attachment_urls = false\nretry_jitter = 0\n`,
  });
}, 60_000);
afterAll(() => target?.db.close());

const counts = {
  requests: 0,
  status: new Map<string, number>(),
  accepted: 0,
  rejected: 0,
  relayedChecked: 0,
  heldBack: 0,
  endedInError: 0,
};
const tally = (): string =>
  `responses ${JSON.stringify(Object.fromEntries(counts.status))}, items accepted ${counts.accepted} (relayed and compared ${counts.relayedChecked}, ended in error ${counts.endedInError}, deferred beyond the test ${counts.heldBack}), items rejected ${counts.rejected}`;

const messageCount = (): number => (target.db.prepare(`SELECT count(*) AS n FROM messages`).get() as { n: number }).n;
let sequence = 0;

/** The item as sent: fields, a unique id (the prefix keeps runs apart; the suffix is hostile), one wrong-typed field. */
function buildItem(spec: ItemSpec, prefix: string): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id: spec.idSuffix === null ? 42 : `${prefix}${spec.idSuffix}`,
    from: 'sender@example.com',
    to: 'rcpt@example.net',
    ...spec.fields,
  };
  if (spec.wrong !== null) item[spec.wrong.field] = spec.wrong.value;
  return item;
}

const post = (body: Buffer, contentType = 'application/json'): Promise<ApiResponse> =>
  api(target.url, 'POST', '/add-messages', { token: target.key, body, headers: { 'content-type': contentType } });

type Input = { kind: 'items'; specs: ItemSpec[] } | { kind: 'whole'; body: RawBody };

async function attack(input: Input): Promise<void> {
  sequence += 1;
  counts.requests += 1;
  const prefix = `h${sequence}-`;
  const body: RawBody =
    input.kind === 'items'
      ? { kind: 'json', value: { messages: input.specs.map((spec, i) => buildItem(spec, `${prefix}${i}-`)) } }
      : input.body;
  const bytes = body.kind === 'json' ? Buffer.from(JSON.stringify(body.value) ?? 'null', 'utf8') : body.bytes;
  const before = messageCount();
  const response = await post(bytes, body.kind === 'bytes' ? body.contentType : undefined);
  const label = response.status === 200 ? '200' : `${response.status} ${response.body?.error?.code}`;
  counts.status.set(label, (counts.status.get(label) ?? 0) + 1);

  expect(response.status, response.text.slice(0, 500)).toBeLessThan(500);
  if (response.status !== 200) {
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(ERROR_CODES).toContain(response.body?.error?.code);
    expect(Object.keys(response.body.error).sort()).toEqual(['code', 'details', 'message']);
    expect(messageCount(), 'a refused request stored nothing').toBe(before);
    return;
  }
  // Our reading of the bytes, as the daemon's JSON.parse sees them.
  const sent = (JSON.parse(bytes.toString('utf8')) as { messages: unknown[] }).messages;
  const { queued, rejected } = response.body as {
    queued: number;
    rejected: Array<{ index: number; id: unknown; reason: string }>;
  };
  expect(response.body.ok).toBe(true);
  expect(queued + rejected.length, 'every item is either queued or rejected').toBe(sent.length);
  expect(messageCount(), 'exactly the queued items were stored').toBe(before + queued);
  counts.accepted += queued;
  counts.rejected += rejected.length;
  if (process.env.HOSTILE_DEBUG === '1')
    for (const entry of rejected) console.log('rejected:', entry.reason.slice(0, 120));
  const refusedIndexes = new Set(rejected.map((entry) => entry.index));
  const accepted: Array<Record<string, unknown>> = [];
  sent.forEach((item, index) => {
    const id = (item as { id?: unknown } | null)?.id;
    if (refusedIndexes.has(index)) {
      if (typeof id === 'string' && id.startsWith(prefix))
        expect(storedRow(target.db, id), `rejected ${id} is absent`).toBeUndefined();
    } else accepted.push(item as Record<string, unknown>);
  });
  for (const item of accepted) expectStoredAsSent(target.db, target.dataDir, item);
  await expectRelayed(accepted);
}

/** Waits until each accepted item is sent or failed (or deferred past the test), then compares the relayed copy. */
async function expectRelayed(accepted: Array<Record<string, unknown>>): Promise<void> {
  const horizon = Date.now() + 60_000;
  const pending = accepted.filter((item) => (storedRow(target.db, item.id as string)?.next_attempt_at ?? 0) < horizon);
  counts.heldBack += accepted.length - pending.length;
  const final = () =>
    pending.every((item) => ['sent', 'error'].includes(storedRow(target.db, item.id as string)?.state ?? ''));
  await eventually(final, `${pending.length} accepted messages to be relayed`);
  for (const item of pending) {
    const row = storedRow(target.db, item.id as string);
    if (row?.state === 'error') {
      counts.endedInError += 1;
      if (process.env.HOSTILE_DEBUG === '1') console.log('error:', row.error);
      continue;
    }
    const raw = relayedById(target.sink.messages, item.id as string);
    expect(raw, `the sink received ${String(item.id)}`).toBeDefined();
    await expectRelayedAsSent(raw as Buffer, item);
    counts.relayedChecked += 1;
  }
}

const input: fc.Arbitrary<Input> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.array(itemSpec, { minLength: 1, maxLength: 4 }).map((specs): Input => ({ kind: 'items', specs })),
  },
  { weight: 1, arbitrary: wholeBody(MAX_BODY_BYTES).map((body): Input => ({ kind: 'whole', body })) },
);

describe('POST /add-messages with hostile bodies (real daemon process)', () => {
  it('never answers 5xx, stores exactly what it accepts, whole, and relays no injected header', async () => {
    // In batches, each followed by the liveness check.
    const batches = 8;
    const perBatch = 20;
    for (let batch = 0; batch < batches; batch += 1) {
      await checkProperty(`/add-messages batch ${batch + 1}/${batches}`, perBatch, input, attack, {
        tally,
        seedOffset: batch,
      });
      await target.expectAlive();
    }
    expect(counts.accepted).toBeGreaterThan(0);
    expect(counts.relayedChecked).toBeGreaterThan(0);
    expect(counts.rejected).toBeGreaterThan(0);
  }, 240_000);
});
