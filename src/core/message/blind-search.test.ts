import { describe, expect, it } from 'vitest';
import type { BlindIndex } from '../blind-index.js';
import { addressTerm, blindTextQuery, searchTerms } from './blind-search.js';

/** A see-through index: each value behind its kind's letter, so what is digested can be read in the assertions. */
const see = (kind: string, values: readonly string[]): string[] => values.map((value) => `${kind[0]}:${value}`);
const plain: BlindIndex = {
  digest: see,
  digestGroups: (groups) => groups.map(({ kind, values }) => see(kind, values)),
};

describe('search over sealed fields', () => {
  it("digests words in order, the subject's prefixes of three to six letters, then the addresses", () => {
    const terms = searchTerms(plain, {
      subject: 'Città Invoice',
      mailFrom: 'App@Acme.example',
      rcptTo: ['ann@example.net'],
    });
    const words = ['citta', 'invoice', 'app', 'acme', 'example', 'ann', 'example', 'net'];
    expect(terms.split(' ')).toEqual([
      ...words.map((word) => `w:${word}`),
      ...['cit', 'citt', 'citta', 'inv', 'invo', 'invoi', 'invoic'].map((prefix) => `p:${prefix}`),
      'fa:app@acme.example',
      'ta:ann@example.net',
    ]);
  });

  it('keeps no sender term for a null sender and no word for a message without a subject', () => {
    expect(searchTerms(plain, { subject: null, mailFrom: '', rcptTo: ['a@b.example'] })).toBe(
      'w:a w:b w:example ta:a@b.example',
    );
  });

  it('asks for every word, the last as a prefix of at most six letters when it has three', () => {
    expect(blindTextQuery(plain, 'Spring invoices')).toBe('"w:spring" AND ("w:invoices" OR p:invoic)');
    expect(blindTextQuery(plain, 'ann@example.net')).toBe('("w:ann w:example w:net" OR ("w:ann w:example" AND p:net))');
    expect(blindTextQuery(plain, 'invoice q1')).toBe('"w:invoice" AND "w:q1"');
    expect(blindTextQuery(plain, '  "(*)" ')).toBeNull();
  });

  it('tells the sender from a recipient', () => {
    expect(addressTerm(plain, 'sender', 'Ann@Example.net')).toBe('fa:ann@example.net');
    expect(addressTerm(plain, 'recipient', 'ann@example.net')).toBe('ta:ann@example.net');
  });
});
