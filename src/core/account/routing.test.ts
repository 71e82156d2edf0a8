import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explainRoute, routeMessage, ruleMatches, type RoutedMessage, type RoutingRule } from './routing.js';

const accounts = [
  { id: 'main', isDefault: true },
  { id: 'bulk', isDefault: false },
];
const message = (extra: Partial<RoutedMessage> = {}): RoutedMessage => ({
  mailFrom: 'app@example.com',
  batchCode: null,
  priority: 2,
  header: () => null,
  ...extra,
});

describe('routing rules', () => {
  it('matches a sender domain exactly, or a *. pattern on the domain and its subdomains, in any case', () => {
    const match = { senderDomains: ['*.news.example', 'example.org'] };
    expect(ruleMatches(match, message({ mailFrom: 'a@news.example' }))).toBe(true);
    expect(ruleMatches(match, message({ mailFrom: 'a@Weekly.NEWS.example' }))).toBe(true);
    expect(ruleMatches(match, message({ mailFrom: 'a@badnews.example' }))).toBe(false);
    expect(ruleMatches(match, message({ mailFrom: 'a@example.org' }))).toBe(true);
    expect(ruleMatches(match, message({ mailFrom: 'a@sub.example.org' }))).toBe(false);
  });

  it('needs every condition of a rule; a rule with none matches everything', () => {
    const match = { batchCodes: ['b'], priorities: [3], header: { name: 'X-Stream', value: 'bulk' } };
    const header = (name: string) => (name.toLowerCase() === 'x-stream' ? 'bulk' : null);
    expect(ruleMatches(match, message({ batchCode: 'b', priority: 3, header }))).toBe(true);
    expect(ruleMatches(match, message({ batchCode: 'b', priority: 2, header }))).toBe(false);
    expect(ruleMatches(match, message({ batchCode: null, priority: 3, header }))).toBe(false);
    expect(ruleMatches(match, message({ batchCode: 'b', priority: 3 }))).toBe(false);
    expect(ruleMatches({}, message())).toBe(true);
  });

  it('takes the first rule that matches and whose account exists, else the default, else none', () => {
    const rules: RoutingRule[] = [
      { match: { batchCodes: ['b'] }, accountId: 'deleted' },
      { match: { batchCodes: ['b'] }, accountId: 'bulk' },
      { match: {}, accountId: 'main' },
    ];
    expect(routeMessage(rules, message({ batchCode: 'b' }), accounts)).toEqual({
      kind: 'rule',
      accountId: 'bulk',
      rule: 1,
    });
    expect(routeMessage(rules, message(), accounts)).toEqual({ kind: 'rule', accountId: 'main', rule: 2 });
    expect(routeMessage([], message(), accounts)).toEqual({ kind: 'default', accountId: 'main' });
    expect(routeMessage([], message(), [{ id: 'bulk', isDefault: false }])).toEqual({ kind: 'none' });
  });

  it('explains where a message would go', () => {
    const rules: RoutingRule[] = [{ match: { batchCodes: ['b'] }, accountId: 'bulk' }];
    const sample = { mailFrom: 'a@example.com', batchCode: 'b', priority: 2, headers: [], accountId: null };
    expect(explainRoute(rules, sample, accounts)).toMatchObject({ accountId: 'bulk', chosenBy: 'rule', rule: 0 });
    expect(explainRoute(rules, { ...sample, accountId: 'main' }, accounts)).toMatchObject({ chosenBy: 'named' });
    expect(explainRoute(rules, { ...sample, accountId: 'other' }, accounts)).toMatchObject({
      accountId: null,
      chosenBy: 'none',
    });
    expect(explainRoute(rules, { ...sample, batchCode: null }, accounts)).toMatchObject({ chosenBy: 'default' });
  });

  it('routes to the first rule that matches and whose account exists, else the default (property)', () => {
    const ids = ['main', 'bulk', 'ses', 'gone'];
    const ruleArb = fc.record({
      match: fc.record(
        {
          senderDomains: fc.subarray(['example.com', '*.news.example', 'example.org'], { minLength: 1 }),
          batchCodes: fc.subarray(['b1', 'b2'], { minLength: 1 }),
          priorities: fc.subarray([0, 1, 2, 3], { minLength: 1 }),
        },
        { requiredKeys: [] },
      ),
      accountId: fc.constantFrom(...ids),
    });
    const messageArb = fc.record({
      mailFrom: fc.constantFrom('a@example.com', 'a@weekly.news.example', 'a@example.org', 'a@other.example'),
      batchCode: fc.constantFrom(null, 'b1', 'b2'),
      priority: fc.integer({ min: 0, max: 3 }),
    });
    const existing = fc.subarray(['main', 'bulk', 'ses'], { minLength: 0 });
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 6 }),
        messageArb,
        existing,
        fc.boolean(),
        (rules, fields, present, withDefault) => {
          const tenantAccounts = present.map((id, index) => ({ id, isDefault: withDefault && index === 0 }));
          const routed = { ...fields, header: () => null };
          const decision = routeMessage(rules, routed, tenantAccounts);
          const first = rules.findIndex((rule) => present.includes(rule.accountId) && ruleMatches(rule.match, routed));
          if (first >= 0) expect(decision).toEqual({ kind: 'rule', accountId: rules[first]!.accountId, rule: first });
          else if (withDefault && present.length > 0)
            expect(decision).toEqual({ kind: 'default', accountId: present[0] });
          else expect(decision).toEqual({ kind: 'none' });
          // Never an account the tenant does not have.
          if (decision.kind !== 'none') expect(present).toContain(decision.accountId);
        },
      ),
    );
  });
});
