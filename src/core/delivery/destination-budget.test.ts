import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { destinationsOf, recipientDomains, type DestinationLimit } from '../account/destination-limit.js';
import { WINDOW_KINDS, WINDOW_MS, windowStart, type Usage } from '../account/rate-limit.js';
import { AWAITING_LEASE_HOLD_MS, destinationBudget } from './destination-budget.js';

const rule = (name: string, domains: string[], extra: Partial<DestinationLimit> = {}): DestinationLimit => ({
  name,
  domains,
  limitPerMinute: null,
  limitPerHour: null,
  limitPerDay: null,
  maxConnections: null,
  ...extra,
});

const NOW = Date.UTC(2026, 10, 29, 12, 30, 15);
const gmail = rule('gmail.com', ['gmail.com', 'googlemail.com'], { limitPerMinute: 2 });
const outlook = rule('outlook', ['outlook.com', '*.outlook.com'], { limitPerHour: 1 });

describe('destination limits', () => {
  it('matches recipient domains to the first rule that names them', () => {
    expect(recipientDomains(['a@GMail.com', 'b@gmail.com', 'c@x.outlook.com'])).toEqual(['gmail.com', 'x.outlook.com']);
    expect(destinationsOf([gmail, outlook], ['x.outlook.com', 'googlemail.com'])).toEqual([gmail, outlook]);
    expect(destinationsOf([gmail, outlook], ['example.net'])).toEqual([]);
  });

  it('claims within budget, then holds for the destination without touching the others', () => {
    const budget = destinationBudget({ limits: [gmail, outlook], usage: new Map(), tails: new Map(), now: NOW });
    const to = (...domains: string[]) => ({ domains, priority: 2, heldBefore: false });
    expect(budget.admit(to('gmail.com'))).toEqual({ kind: 'claim', destinations: ['gmail.com'] });
    expect(budget.admit(to('example.net'))).toEqual({ kind: 'claim', destinations: [] });
    expect(budget.admit(to('gmail.com', 'outlook.com'))).toEqual({
      kind: 'claim',
      destinations: ['gmail.com', 'outlook'],
    });
    const minuteEnd = windowStart('minute', NOW) + WINDOW_MS.minute;
    const hourEnd = windowStart('hour', NOW) + WINDOW_MS.hour;
    // Held whole until the last of its destinations has budget: the hour's end, for outlook.
    expect(budget.admit(to('gmail.com', 'outlook.com'))).toEqual({
      kind: 'hold',
      destination: 'outlook',
      until: hourEnd,
    });
    // Spread one slot per window / limit: 30 s apart for 2 a minute.
    expect(budget.admit(to('gmail.com'))).toEqual({ kind: 'hold', destination: 'gmail.com', until: minuteEnd });
    expect(budget.admit(to('gmail.com'))).toEqual({
      kind: 'hold',
      destination: 'gmail.com',
      until: minuteEnd + 30_000,
    });
    // Priority 0 and a message held once already go to the front.
    expect(budget.admit({ domains: ['gmail.com'], priority: 0, heldBefore: false })).toMatchObject({
      until: minuteEnd,
    });
    expect(budget.admit({ domains: ['gmail.com'], priority: 2, heldBefore: true })).toMatchObject({ until: minuteEnd });
    expect(budget.admit(to('example.net'))).toEqual({ kind: 'claim', destinations: [] });
    expect(Object.fromEntries(budget.taken())).toEqual({ 'gmail.com': 2, outlook: 1 });
  });

  it('holds briefly for a destination whose fleet lease is on its way', () => {
    const budget = destinationBudget({
      limits: [gmail],
      usage: new Map(),
      awaiting: new Set(['gmail.com']),
      tails: new Map(),
      now: NOW,
    });
    expect(budget.admit({ domains: ['gmail.com'], priority: 3, heldBefore: false })).toEqual({
      kind: 'hold',
      destination: 'gmail.com',
      until: NOW + AWAITING_LEASE_HOLD_MS,
    });
  });

  it("holds briefly, spread at the destination's pace, when this node's fleet lease (not the window) is spent", () => {
    const budget = destinationBudget({
      limits: [gmail],
      usage: new Map([['gmail.com', { minute: 1, hour: 0, day: 0 }]]),
      leaseBound: new Set(['gmail.com']),
      tails: new Map(),
      now: NOW,
    });
    const to = { domains: ['gmail.com'], priority: 3, heldBefore: false };
    expect(budget.admit(to)).toEqual({ kind: 'claim', destinations: ['gmail.com'] });
    expect(budget.admit(to)).toEqual({ kind: 'hold', destination: 'gmail.com', until: NOW + AWAITING_LEASE_HOLD_MS });
    expect(budget.admit(to)).toMatchObject({ until: NOW + AWAITING_LEASE_HOLD_MS + 30_000 });
    expect(budget.heldFor()).toEqual(new Set(['gmail.com']));
  });

  const limitArb = fc.option(fc.integer({ min: 1, max: 5 }), { nil: null });
  const rulesArb = fc
    .array(fc.record({ minute: limitArb, hour: limitArb, day: limitArb }), { minLength: 1, maxLength: 3 })
    .map((limits) =>
      limits.map((limit, index) =>
        rule(`d${index}`, [`d${index}.example`], {
          limitPerMinute: limit.minute,
          limitPerHour: limit.hour,
          limitPerDay: limit.day,
        }),
      ),
    );
  const usageArb = fc.record({
    minute: fc.integer({ min: 0, max: 6 }),
    hour: fc.integer({ min: 0, max: 6 }),
    day: fc.integer({ min: 0, max: 6 }),
  });
  const messagesArb = fc.array(
    fc.record({
      domains: fc.subarray(['d0.example', 'd1.example', 'd2.example', 'other.example'], { minLength: 1 }),
      priority: fc.integer({ min: 0, max: 3 }),
      heldBefore: fc.boolean(),
    }),
    { maxLength: 40 },
  );

  it('never claims above any limit, never holds a message whose destinations all have budget, and holds only into the future', () => {
    fc.assert(
      fc.property(
        rulesArb,
        fc.array(usageArb, { minLength: 3, maxLength: 3 }),
        messagesArb,
        (limits, used, messages) => {
          const usage = new Map<string, Usage>(limits.map((limit, index) => [limit.name, used[index]!]));
          const budget = destinationBudget({ limits, usage, tails: new Map(), now: NOW });
          const claimed = new Map<string, number>();
          for (const message of messages) {
            const held = destinationsOf(limits, message.domains);
            const hasBudget = held.every((limit) =>
              WINDOW_KINDS.every((kind) => {
                const max = { minute: limit.limitPerMinute, hour: limit.limitPerHour, day: limit.limitPerDay }[kind];
                return max === null || usage.get(limit.name)![kind] + (claimed.get(limit.name) ?? 0) < max;
              }),
            );
            const admission = budget.admit(message);
            expect(admission.kind).toBe(hasBudget ? 'claim' : 'hold');
            if (admission.kind === 'claim')
              for (const name of admission.destinations) claimed.set(name, (claimed.get(name) ?? 0) + 1);
            else {
              expect(admission.until).toBeGreaterThan(NOW);
              expect(held.map((limit) => limit.name)).toContain(admission.destination);
            }
          }
          for (const limit of limits)
            for (const kind of WINDOW_KINDS) {
              const max = { minute: limit.limitPerMinute, hour: limit.limitPerHour, day: limit.limitPerDay }[kind];
              if (max !== null) {
                const before = usage.get(limit.name)![kind];
                expect(before + (claimed.get(limit.name) ?? 0)).toBeLessThanOrEqual(Math.max(max, before));
              }
            }
          expect(Object.fromEntries(budget.taken())).toEqual(Object.fromEntries(claimed));
        },
      ),
    );
  });
});
