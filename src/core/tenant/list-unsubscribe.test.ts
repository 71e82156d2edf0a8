import { describe, expect, it } from 'vitest';
import {
  checkListUnsubscribe,
  takesUnsubscribe,
  unsubscribeHeaders,
  type ListUnsubscribe,
} from './list-unsubscribe.js';

const ALL: ListUnsubscribe = { baseUrl: 'https://mail.example.com/', mailto: null, scope: 'all' };
const BATCHES: ListUnsubscribe = { ...ALL, scope: 'batches' };

describe('one-click unsubscribe headers', () => {
  it('go in mail to one recipient, and in batch mail only when the tenant asks for batches', () => {
    const one = { rcptTo: ['ann@example.net'], batchCode: null };
    expect(takesUnsubscribe(ALL, one)).toBe(true);
    expect(takesUnsubscribe(BATCHES, one)).toBe(false);
    expect(takesUnsubscribe(BATCHES, { ...one, batchCode: 'weekly' })).toBe(true);
    expect(takesUnsubscribe(ALL, { rcptTo: ['ann@example.net', 'bob@example.net'], batchCode: 'weekly' })).toBe(false);
    expect(takesUnsubscribe(null, one)).toBe(false);
  });

  it('are the https link (one slash before the path) and the one-click pair, with the mailto form when given', () => {
    expect(unsubscribeHeaders(ALL, 'v1.a.b.c')).toEqual([
      'List-Unsubscribe: <https://mail.example.com/unsubscribe/v1.a.b.c>',
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    ]);
    expect(unsubscribeHeaders({ ...ALL, mailto: 'leave@example.com' }, 'v1.a.b.c')[0]).toBe(
      'List-Unsubscribe: <https://mail.example.com/unsubscribe/v1.a.b.c>, <mailto:leave@example.com?subject=unsubscribe%20v1.a.b.c>',
    );
  });

  it('refuses a base URL that is not https, carries a query or credentials, and a mailto that is no address', () => {
    expect(() => checkListUnsubscribe(ALL)).not.toThrow();
    expect(() => checkListUnsubscribe(null)).not.toThrow();
    const problems = (setting: ListUnsubscribe): unknown => {
      try {
        checkListUnsubscribe(setting);
        return [];
      } catch (error) {
        return (error as { details: unknown }).details;
      }
    };
    expect(problems({ ...ALL, baseUrl: 'http://mail.example.com' })).toEqual([
      { path: 'list_unsubscribe.base_url', message: 'must be an https URL (RFC 8058)' },
    ]);
    expect(problems({ ...ALL, baseUrl: 'https://user:pw@mail.example.com/?a=1' })).toHaveLength(1);
    expect(problems({ ...ALL, mailto: 'not an address' })).toEqual([
      { path: 'list_unsubscribe.mailto', message: 'expected an addr-spec such as unsubscribe@example.com' },
    ]);
  });
});
