/**
 * The evidence files the bounce bench reads (bench/bounce-phrase-sources.json, the citations behind
 * the documented folds; bench/documented-refusals.json, the second held-out set) and the splitting
 * of a pattern into its alternatives that the folds rely on: kept true here, in CI, rather than only
 * when someone runs the bench.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { alternativesOf } from '../../bench/bounce-loso.mjs';
import {
  DECISIVE_PHRASES,
  GENERIC_REASON_PHRASES,
  REASON_PHRASES,
  type BounceReason,
} from '../../src/core/bounce/reasons.js';

const REASONS: readonly BounceReason[] = [
  'user_unknown',
  'mailbox_full',
  'host_unknown',
  'account_disabled',
  'spam_block',
  'policy_block',
  'message_too_large',
  'expired',
  'rate_limited',
  'system_error',
];

const json = (path: string): unknown => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));

interface Citation {
  phrase: string;
  reason: BounceReason;
  source: { kind: string; quote: string; url?: string; repo?: string } | null;
  note: string;
}

interface Refusal {
  id: string;
  set: string;
  text: string;
  reason: BounceReason;
  source: { kind: string; url?: string; repo?: string };
}

describe('alternativesOf', () => {
  it('splits at top-level bars only: not inside a group, a class, or after an escape', () => {
    expect(alternativesOf('a|(b|c)|[|]|d\\|e')).toEqual(['a', '(b|c)', '[|]', 'd\\|e']);
    expect(alternativesOf('x(?:y|(z|w))|[\\]|]q')).toEqual(['x(?:y|(z|w))', '[\\]|]q']);
    expect(alternativesOf('single')).toEqual(['single']);
  });
});

describe('bench/bounce-phrase-sources.json', () => {
  const { sources } = json('bench/bounce-phrase-sources.json') as { sources: Citation[] };
  const tables = [...DECISIVE_PHRASES, ...REASON_PHRASES, ...GENERIC_REASON_PHRASES];
  const alternatives = new Map<string, Set<BounceReason>>();
  for (const [reason, pattern] of tables)
    for (const alternative of alternativesOf(pattern.source))
      alternatives.set(alternative, (alternatives.get(alternative) ?? new Set()).add(reason));

  it('names only phrases the tables still have, each with the reason its table gives', () => {
    for (const { phrase, reason } of sources) expect(alternatives.get(phrase), phrase).toContain(reason);
  });

  it('quotes, for every cited phrase, a text the phrase matches', () => {
    for (const { phrase, source } of sources)
      if (source !== null)
        expect(new RegExp(phrase, 'i').test(source.quote), `${phrase} in ${source.quote}`).toBe(true);
  });

  it('says where each citation was read', () => {
    for (const { source } of sources) if (source !== null) expect(source.url ?? source.repo, source.quote).toBeTruthy();
  });
});

describe('bench/documented-refusals.json', () => {
  const { refusals, held_out: heldOut } = json('bench/documented-refusals.json') as {
    refusals: Refusal[];
    held_out: string[];
  };

  it('gives each refusal a unique id, a reason of the vocabulary, a set and where it was read', () => {
    expect(new Set(refusals.map((r) => r.id)).size).toBe(refusals.length);
    for (const r of refusals) {
      expect(REASONS, r.id).toContain(r.reason);
      expect(r.text.length, r.id).toBeGreaterThan(0);
      expect(r.source.url ?? r.source.repo, r.id).toBeTruthy();
    }
  });

  it('names held-out sets that no rule is written from, each with refusals, and open ones beside them', () => {
    const sets = new Set(refusals.map((r) => r.set));
    expect(heldOut.length).toBeGreaterThan(0);
    for (const set of heldOut) expect(sets, set).toContain(set);
    expect([...sets].some((set) => !heldOut.includes(set))).toBe(true);
  });
});
