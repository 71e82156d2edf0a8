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
});
