import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Account } from '../account/account.js';
import { relayFor, type RelayConditions } from './failover.js';

const account = (id: string, extra: Partial<Account> = {}): Account =>
  ({
    tenantId: 'acme',
    id,
    isPec: false,
    pausedAt: null,
    limitBehavior: 'defer',
    fallbackAccounts: [],
    ...extra,
  }) as Account;

const conditions = (unreachable: ReadonlySet<string>, overLimit: ReadonlySet<string>): RelayConditions => ({
  unreachable: (candidate) => unreachable.has(candidate.id),
  overLimit: (candidate) => overLimit.has(candidate.id),
});
const none = conditions(new Set(), new Set());

describe('failover', () => {
  it('keeps an account that can send to its own relay', () => {
    const main = account('main', { limitBehavior: 'failover' });
    expect(relayFor(main, [account('backup')], none)).toEqual({ relay: main, cause: null });
    // Over its limit, but it defers: its mail waits for its own window.
    expect(relayFor(account('main'), [account('backup')], conditions(new Set(), new Set(['main'])))).toMatchObject({
      cause: null,
    });
  });

  it('takes the first fallback that may send, in order, of the same kind', () => {
    const main = account('main', { pausedAt: 1 });
    const pec = account('pec', { isPec: true });
    const down = account('down');
    const full = account('full');
    const backup = account('backup');
    const routed = relayFor(main, [pec, down, full, backup], conditions(new Set(['down']), new Set(['full'])));
    expect(routed).toEqual({ relay: backup, cause: 'paused' });
  });

  it('with no fallback that may send: a paused account waits, an unreachable one keeps to its relay', () => {
    expect(relayFor(account('main', { pausedAt: 1 }), [account('b', { pausedAt: 2 })], none)).toEqual({
      relay: null,
      cause: 'paused',
    });
    const main = account('main');
    expect(relayFor(main, [], conditions(new Set(['main']), new Set()))).toEqual({ relay: main, cause: 'unreachable' });
  });

  it('never routes to an account that cannot send, and never holds back an account that can', () => {
    const ids = ['a', 'b', 'c', 'd'];
    fc.assert(
      fc.property(
        fc.array(fc.record({ paused: fc.boolean(), pec: fc.boolean(), failover: fc.boolean() }), {
          minLength: 4,
          maxLength: 4,
        }),
        fc.subarray(ids),
        fc.subarray(ids),
        fc.subarray(ids.slice(1)),
        (states, unreachable, overLimit, fallbackIds) => {
          const all = ids.map((id, index) =>
            account(id, {
              pausedAt: states[index]?.paused === true ? 1 : null,
              isPec: states[index]?.pec === true,
              limitBehavior: states[index]?.failover === true ? 'failover' : 'defer',
            }),
          );
          const [primary, ...others] = all as [Account, ...Account[]];
          const fallbacks = others.filter((other) => fallbackIds.includes(other.id));
          const relays = conditions(new Set(unreachable), new Set(overLimit));
          const { relay, cause } = relayFor(primary, fallbacks, relays);
          const canSend = (candidate: Account) =>
            candidate.pausedAt === null && !relays.unreachable(candidate) && !relays.overLimit(candidate);
          const ownOk =
            primary.pausedAt === null &&
            !relays.unreachable(primary) &&
            !(primary.limitBehavior === 'failover' && relays.overLimit(primary));
          if (ownOk) expect(relay).toBe(primary);
          if (relay !== null && relay !== primary) {
            expect(fallbacks).toContain(relay);
            expect(canSend(relay)).toBe(true);
            expect(relay.isPec).toBe(primary.isPec);
            // The first such fallback, in order.
            expect(fallbacks.find((f) => canSend(f) && f.isPec === primary.isPec)).toBe(relay);
          }
          if (relay === null) {
            expect(cause).toBe('paused');
            expect(fallbacks.some((f) => canSend(f) && f.isPec === primary.isPec)).toBe(false);
          }
        },
      ),
    );
  });
});
