import { describe, expect, it } from 'vitest';
import type { MessageCandidate } from '../bounce/bounce.js';
import { correlateReceipt, planReceipt } from './plan.js';
import { NOT_A_RECEIPT, type PecReceiptFindings } from './pec.js';

const candidate = (pk: number, rcptTo: string[]): MessageCandidate => ({ tenantId: 'acme', pk, id: `m-${pk}`, rcptTo });
const found = (more: Partial<PecReceiptFindings>): PecReceiptFindings => ({
  ...NOT_A_RECEIPT,
  type: 'avvenuta-consegna',
  recognisedBy: 'header',
  ...more,
});

describe('correlating a PEC receipt', () => {
  it('prefers X-Genro-Mail-ID, then the referenced Message-ID, then the identificativo', () => {
    const lookups: string[] = [];
    const lookup = (by: string, value: string) => {
      lookups.push(`${by}=${value}`);
      return by === 'identificativo' ? [candidate(3, ['ann@x'])] : [];
    };
    const result = correlateReceipt(
      found({ mailId: 'm-9', referencedMessageId: '<a@b>', identificativo: 'opec-1' }),
      lookup,
    );
    expect(result).toEqual({ matched: true, candidate: candidate(3, ['ann@x']), by: 'identificativo' });
    expect(lookups).toEqual(['mail_id=m-9', 'message_id=<a@b>', 'identificativo=opec-1']);
  });

  it("tells apart messages sharing a Message-ID by the receipt's recipient, and is ambiguous when it cannot", () => {
    const two = [candidate(1, ['ann@x']), candidate(2, ['bob@x'])];
    expect(correlateReceipt(found({ referencedMessageId: '<a@b>', recipient: 'BOB@x' }), () => two)).toMatchObject({
      matched: true,
      candidate: { pk: 2 },
    });
    expect(correlateReceipt(found({ referencedMessageId: '<a@b>', recipient: 'cid@x' }), () => two)).toEqual({
      matched: false,
      reason: 'ambiguous',
    });
    expect(correlateReceipt(found({}), () => two)).toEqual({ matched: false, reason: 'no_reference' });
    expect(correlateReceipt(found({ mailId: 'gone' }), () => [])).toEqual({ matched: false, reason: 'not_found' });
  });
});

describe('planning a PEC receipt', () => {
  const matched = { matched: true as const, candidate: candidate(1, ['Ann@x', 'bob@x']), by: 'message_id' as const };

  it("acceptance and delivery set their times from the gestore's date; errors name the recipient and the gestore's words", () => {
    expect(planReceipt(found({ type: 'accettazione', issuedAt: 5000 }), matched, 'r1', 9000).effect).toMatchObject({
      accepted: true,
      delivered: false,
      error: null,
      at: 5000,
    });
    expect(planReceipt(found({ recipient: 'ann@x' }), matched, 'r2', 9000).effect).toMatchObject({
      delivered: true,
      at: 9000,
      details: { recipient: 'Ann@x', receipt_id: 'r2', pec_event: 'avvenuta-consegna' },
    });
    const error = planReceipt(
      found({ type: 'errore-consegna', recipient: 'bob@x', error: 'no-dest', errorDetail: '5.1.1 sconosciuto' }),
      matched,
      'r3',
      9000,
    );
    expect(error.effect?.error).toBe('errore-consegna: bob@x: 5.1.1 sconosciuto');
    expect(
      planReceipt(found({ type: 'preavviso-errore-consegna', recipient: 'bob@x' }), matched, 'r4', 9000).effect,
    ).toMatchObject({
      error: null,
      accepted: false,
      delivered: false,
    });
    expect(planReceipt(found({ type: 'non-accettazione', error: 'altro' }), matched, 'r5', 9000).effect?.error).toBe(
      'non-accettazione: altro',
    );
  });

  it("files a receipt nobody's message fits as unmatched and other mail as not a receipt, with no effect", () => {
    expect(planReceipt(found({}), { matched: false, reason: 'not_found' }, 'r1', 1)).toEqual({
      disposition: 'unmatched',
      unmatchedReason: 'not_found',
      match: null,
      effect: null,
    });
    expect(planReceipt(NOT_A_RECEIPT, matched, 'r1', 1)).toMatchObject({ disposition: 'not_bounce', effect: null });
  });
});
