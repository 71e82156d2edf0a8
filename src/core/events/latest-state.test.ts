import { describe, expect, it } from 'vitest';
import { advances, latestKey, merge, type LatestEvent, type LatestState } from './latest-state.js';

const LIFE = ['queued', 'sending', 'deferred', 'sending', 'sent', 'reported', 'bounced', 'reported'];
const events: LatestEvent[] = LIFE.map((type, index) => ({
  seq: 100 + index,
  eventType: `message.${type}`,
  tenantId: 'acme',
  messageId: 'm-1',
  messagePk: 7,
  occurredAt: 1_700_000_000_000 + index * 1000,
}));

/** A deterministic shuffle (mulberry32), so that a failure can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed;
  const random = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

const apply = (list: readonly LatestEvent[]): LatestState =>
  list.reduce<LatestState | null>((state, event) => merge(state, event), null) as LatestState;

describe('latest state', () => {
  it('in order, ends where the message ended: sent, then bounced, reported', () => {
    expect(apply(events)).toMatchObject({
      handoff_state: 'sent',
      rank: 100,
      provider_state: 'bounced',
      provider_rank: 100,
      version: 107,
      handoff_version: 104,
      reported_at: new Date(1_700_000_007_000).toISOString(),
    });
  });

  it('applied in any order, gives the same value, and no step moves it backwards', () => {
    const expected = apply(events);
    for (let seed = 1; seed <= 500; seed += 1) {
      let state: LatestState | null = null;
      for (const event of shuffled(events, seed)) {
        const next = merge(state, event);
        if (state !== null) {
          expect(next.version).toBeGreaterThanOrEqual(state.version);
          expect(next.handoff_version).toBeGreaterThanOrEqual(state.handoff_version);
          expect(next.provider_rank).toBeGreaterThanOrEqual(state.provider_rank);
        }
        state = next;
      }
      expect(state, `seed ${seed}`).toEqual(expected);
    }
  });

  it('is idempotent: an event applied again changes nothing and needs no write', () => {
    const state = apply(events);
    for (const event of events) {
      expect(merge(state, event)).toEqual(state);
      expect(advances(state, merge(state, event))).toBe(false);
    }
  });

  it('a soft bounce is no verdict: it ranks above acceptance and below a delivery or a hard bounce, in any order', () => {
    const at = (seq: number, eventType: string, bounceType?: string): LatestEvent => ({
      ...(events[0] as LatestEvent),
      seq,
      eventType,
      bounceType,
    });
    const sent = at(1, 'message.sent');
    const soft = at(2, 'message.bounced', 'soft');
    expect(apply([sent, soft])).toMatchObject({ provider_state: 'soft_bounced', provider_rank: 50 });
    for (const verdict of [at(3, 'message.delivered'), at(3, 'message.bounced', 'hard'), at(3, 'message.bounced')]) {
      const expected = verdict.eventType === 'message.delivered' ? 'delivered' : 'bounced';
      expect(apply([sent, soft, verdict])).toMatchObject({ provider_state: expected, provider_rank: 100 });
      expect(apply([verdict, soft, sent])).toEqual(apply([sent, soft, verdict]));
    }
  });

  it('a bounce outranks a later acceptance of the same message', () => {
    const bounced = apply(events);
    const resentAndSent = merge(bounced, { ...(events[4] as LatestEvent), seq: 200 });
    expect(resentAndSent).toMatchObject({ handoff_state: 'sent', provider_state: 'bounced' });
  });
});

describe('latest-state keys', () => {
  it("name the fleet node when there is one: a pk is one node's row number", () => {
    const event = { tenantId: 'acme', messagePk: 7 };
    expect(latestKey(event)).toBe('acme.7');
    expect(latestKey(event, 'n2')).toBe('acme.n2.7');
    expect(latestKey(event, 'n2')).not.toBe(latestKey(event, 'n3'));
  });
});
