/**
 * How the bounce-reason unit tests read one diagnostic as the parser does (core/bounce/classify.ts
 * reasonOfDiagnostic, which bench/bounce-documented.mjs reads with too), and the tests every
 * documented-refusal table shares.
 */
import { expect, it } from 'vitest';
import { findCodes, reasonIn, reasonOfDiagnostic, type BounceReason } from '../../src/core/bounce/classify.js';
import type { ReasonTable } from '../../src/core/bounce/reason.js';

/** What the diagnostic's reply code and enhanced status say with no words at all. */
export function reasonOfCodesAlone(diagnostic: string): BounceReason | null {
  const { status, replyCode } = findCodes(diagnostic);
  return reasonIn({ status, replyCode, texts: [] });
}

/**
 * A refusal as a standard or vendor documents it: where, its text (written for the test), the reason
 * it must be read as, and, where the codes alone say otherwise, what they say (`'another'`: some
 * other reason): there the words or the vendor's code decide.
 */
export type DocumentedRefusal = readonly [
  source: string,
  diagnostic: string,
  reason: BounceReason,
  codesAlone?: BounceReason | 'another',
];

/** One test per refusal: it is read as documented, and its codes alone, where given, read as said. */
export function itReadsEach(refusals: readonly DocumentedRefusal[]): void {
  for (const [source, diagnostic, reason, codesAlone] of refusals) {
    it(`reads "${source}" as ${reason}`, () => {
      expect(reasonOfDiagnostic(diagnostic)).toBe(reason);
      if (codesAlone === 'another') expect(reasonOfCodesAlone(diagnostic)).not.toBe(reason);
      else if (codesAlone !== undefined) expect(reasonOfCodesAlone(diagnostic)).toBe(codesAlone);
    });
  }
}

/** Texts without a table's codes (look-alikes too): the table matches none, and each reads as the other rules read it. */
export function itLeavesAlone(
  title: string,
  table: ReasonTable,
  plain: ReadonlyArray<readonly [string, BounceReason]>,
): void {
  it(title, () => {
    for (const [diagnostic, reason] of plain) {
      expect(
        table.some(([, pattern]) => pattern.test(diagnostic)),
        diagnostic,
      ).toBe(false);
      expect(reasonOfDiagnostic(diagnostic), diagnostic).toBe(reason);
    }
  });
}
