/**
 * The bounce parser must survive whatever lands in the bounce mailbox: it
 * never throws and never hangs, and always names a kind. Inputs come from
 * test/helpers/hostile-mime.ts (every hostile kind once, then a few hundred
 * small mutated, truncated and random messages, then a 30 MB bounce). Each
 * parse runs in a worker under a time budget (see parser-worker.ts for why).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltFromCurrentSources } from '../helpers/built-parser.js';
import { GENERATORS, hostileMessages, hugeMessage } from '../helpers/hostile-mime.js';
import { createParserWorker, type ParseOutcome } from '../helpers/parser-worker.js';

/** BounceKind in src/bounce/bounce-parser.ts, as README documents it. */
const KINDS = ['bounce', 'delayed', 'complaint', 'auto_reply', 'delivered', 'not_bounce'];
/** Generous: a correct parser takes milliseconds on any of these (a 30 MB message well under a second). */
const BUDGET_MS = 10_000;
const SEED = 20240401;
/** The generators whose messages are small enough to run by the hundred. */
const SMALL = [
  'random-bytes',
  'mutated-dsn',
  'truncated-dsn',
  'truncated-mid-boundary',
  'truncated-mid-base64',
  'nul-bytes',
  'bare-cr',
  'mixed-line-ends',
];

/** The whole outcome goes in the message: a throw's stack or a timeout's duration is the finding. */
function expectResolved(outcome: ParseOutcome, name: string): void {
  expect(outcome.status, `${name}: ${JSON.stringify(outcome)}`).toBe('resolved');
  if (outcome.status === 'resolved') expect(KINDS, `${name}: kind`).toContain(outcome.kind);
}

describe('the bounce parser on hostile input', () => {
  const parser = createParserWorker();
  beforeAll(() => assertBuiltFromCurrentSources());
  afterAll(() => parser.close());

  it('gets the same messages from the same seed, and others from another', () => {
    expect(hostileMessages(7, SMALL.length, SMALL)).toEqual(hostileMessages(7, SMALL.length, SMALL));
    expect(hostileMessages(7, SMALL.length, SMALL)).not.toEqual(hostileMessages(8, SMALL.length, SMALL));
    expect(hugeMessage(100_000)).toHaveLength(100_000);
  });

  for (const { name, raw } of hostileMessages(SEED, GENERATORS.length)) {
    it(`resolves with a kind on ${name}, ${raw.length} bytes`, async () => {
      expectResolved(await parser.analyse(raw, BUDGET_MS), name);
    });
  }

  // One test for the batch, but every failure listed: they usually share a cause.
  it('resolves with a kind on 300 small mutated, truncated and random messages', async () => {
    const failures: string[] = [];
    for (const { name, raw } of hostileMessages(SEED + 1, 300, SMALL)) {
      const outcome = await parser.analyse(raw, BUDGET_MS);
      if (outcome.status !== 'resolved' || !KINDS.includes(outcome.kind))
        failures.push(`${name}: ${JSON.stringify(outcome).slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('resolves with a kind on a 30 MB bounce (a big base64 attachment in the returned original)', async () => {
    const raw = hugeMessage(30 * 1024 * 1024);
    expectResolved(await parser.analyse(raw, BUDGET_MS), 'huge-30mb');
  });
});
